// TimeZone: a time zone as ElasticJob's `timeZone` setting names it.
//
// Accepts IANA zone ids from the system's tzdata (`Asia/Shanghai`, `America/New_York`,
// `UTC`), Java's custom-offset form (`GMT+08:00`, `GMT-3`, `GMT+0530`), and Java's legacy
// three-letter ids (`CTT`, `PST`, `EST`, ... as java.time.ZoneId.SHORT_IDS maps them).
// Unlike java.util.TimeZone, an unknown id is an error, not a silent fall-back to GMT.
//
// Thread safety: an immutable value type; copies are cheap (shared implementation).
#ifndef ELASTICJOB_SCHEDULE_TIME_ZONE_H_
#define ELASTICJOB_SCHEDULE_TIME_ZONE_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob {

namespace schedule {
struct ZoneRules;  // implementation detail (src/schedule/zone_rules.h)
}

class TimeZone {
 public:
  // Loads `id`. Fails with INVALID_ARGUMENT naming the id when it is empty, malformed or not
  // in tzdata.
  static Result<TimeZone> Parse(std::string_view id);

  // UTC.
  static TimeZone Utc();

  // The process's local zone (TZ environment variable, else /etc/localtime), which is what
  // ElasticJob uses when `timeZone` is not set.
  static TimeZone SystemDefault();

  // The id as normalised on parse (`GMT+08:00` for `GMT+8`).
  const std::string& id() const;

  // The UTC offset in effect at `t`, in seconds east of Greenwich.
  int OffsetSecondsAt(std::chrono::system_clock::time_point t) const;

  // `t` as ISO-8601 local time with its offset, `2026-11-22T08:00:05+08:00`; milliseconds
  // are shown only when not zero (`...T08:00:05.250+08:00`).
  std::string FormatIso8601(std::chrono::system_clock::time_point t) const;

  // Parses ISO-8601 `YYYY-MM-DDTHH:MM:SS[.fff]` with an optional `Z` or `+HH:MM` offset; a
  // time without an offset is read in this zone (Java's rule for gaps and overlaps). Fails
  // with INVALID_ARGUMENT for malformed text or a time outside years 1678-2261 (the range of
  // system_clock's nanoseconds).
  Result<std::chrono::system_clock::time_point> ParseIso8601(std::string_view text) const;

  const schedule::ZoneRules& rules() const { return *rules_; }

  friend bool operator==(const TimeZone& a, const TimeZone& b) { return a.id() == b.id(); }

 private:
  explicit TimeZone(std::shared_ptr<const schedule::ZoneRules> rules) : rules_(std::move(rules)) {}
  std::shared_ptr<const schedule::ZoneRules> rules_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_SCHEDULE_TIME_ZONE_H_
