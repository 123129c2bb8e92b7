// CronExpression: Quartz cron expressions, with Quartz 2.3.2's semantics exactly.
//
// Six or seven fields, seconds first: `second minute hour day-of-month month day-of-week
// [year]`. Supports `*`, `?`, ranges, lists, steps (`0/5`, `3-59/7`), month and weekday
// names, `L`, `L-n`, `LW`, `nW`, `n#k`, `nL`. Exactly one of day-of-month and day-of-week
// must be `?`. The same strings Quartz accepts are accepted and the same rejected (with an
// error naming the field and why), and NextFireTimeAfter returns what Quartz's
// getNextValidTimeAfter returns in the same zone, DST transitions included:
//   - a wall time that falls in a spring-forward gap does not fire that day;
//   - a wall time in the hour a fall-back repeats fires once, at the standard-time instant.
// See docs/cron.md for the rules and the differential test that holds us to them.
//
// Thread safety: immutable; share freely across threads.
//
// clang-format off
//   auto cron = elasticjob::CronExpression::Parse("0 0/15 9-17 ? * MON-FRI");
//   if (!cron.ok()) { std::cerr << cron.status() << "\n"; return 2; }
//   auto zone = elasticjob::TimeZone::Parse("Asia/Shanghai");
//   std::optional<std::chrono::system_clock::time_point> next =
//       cron->NextFireTimeAfter(std::chrono::system_clock::now(), *zone);
// clang-format on
#ifndef ELASTICJOB_SCHEDULE_CRON_EXPRESSION_H_
#define ELASTICJOB_SCHEDULE_CRON_EXPRESSION_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/schedule/time_zone.h"
#include "elasticjob/status.h"

namespace elasticjob {

namespace schedule {
struct CronFields;
}

class CronExpression {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  // Parses `expression`. Fails with INVALID_ARGUMENT naming the field, its text and the rule
  // it breaks: `cron '0 0 25 * * ?': hour field '25': hour values must be between 0 and 23`.
  static Result<CronExpression> Parse(std::string_view expression);

  // The expression as given.
  const std::string& expression() const { return expression_; }

  // The first fire time strictly after `after` (millisecond precision, fire times fall on
  // whole seconds), in `zone`. nullopt when the expression never fires again (a year in the
  // past, a 30th of February, or beyond Quartz's limit of the current year + 100).
  std::optional<TimePoint> NextFireTimeAfter(TimePoint after, const TimeZone& zone) const;

  // Up to `count` fire times strictly after `after`, in order: fewer when the expression
  // stops firing (NextFireTimeAfter, chained).
  std::vector<TimePoint> NextFireTimes(TimePoint after, const TimeZone& zone, int count) const;

  // Whether `t` (milliseconds ignored) is a fire time in `zone`.
  bool IsSatisfiedBy(TimePoint t, const TimeZone& zone) const;

 private:
  CronExpression(std::string expression, std::shared_ptr<const schedule::CronFields> fields)
      : expression_(std::move(expression)), fields_(std::move(fields)) {}

  std::string expression_;
  std::shared_ptr<const schedule::CronFields> fields_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_SCHEDULE_CRON_EXPRESSION_H_
