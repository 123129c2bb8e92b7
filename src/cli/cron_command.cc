#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/time_zone.h"

namespace elasticjob::cli {
namespace {

struct CronNextOptions {
  std::string expression;
  std::string zone;
  std::string from;
  int count = 1;
};

bool IsEpochMillis(const std::string& s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return s.size() <= 19;
}

int RunCronNext(const CronNextOptions& o) {
  auto cron = CronExpression::Parse(o.expression);
  if (!cron.ok()) {
    std::cerr << "elasticjob: " << cron.status().message() << "\n";
    return kExitBadInput;
  }
  Result<TimeZone> zone =
      o.zone.empty() ? Result<TimeZone>(TimeZone::SystemDefault()) : TimeZone::Parse(o.zone);
  if (!zone.ok()) {
    std::cerr << "elasticjob: " << zone.status().message() << "\n";
    return kExitBadInput;
  }
  if (o.count < 0) {
    std::cerr << "elasticjob: -n: must be at least 0, got " << o.count << "\n";
    return kExitBadInput;
  }
  CronExpression::TimePoint from = std::chrono::system_clock::now();
  if (!o.from.empty()) {
    if (IsEpochMillis(o.from)) {
      // Years 1 to 9999: beyond, std::stoll threw (an abort) or the nanosecond clock wrapped.
      constexpr int64_t kMin = -62135596800000, kMax = 253402300799999;
      int64_t ms = 0;
      auto [end, ec] = std::from_chars(o.from.data(), o.from.data() + o.from.size(), ms);
      if (ec != std::errc() || ms < kMin || ms > kMax) {
        std::cerr << fmt::format(
            "elasticjob: --from: {} is out of range (epoch milliseconds from {} to {}, years 1 "
            "to 9999)\n",
            o.from, kMin, kMax);
        return kExitBadInput;
      }
      from = CronExpression::TimePoint{} + std::chrono::milliseconds(ms);
    } else {
      auto parsed = zone->ParseIso8601(o.from);
      if (!parsed.ok()) {
        std::cerr << "elasticjob: --from: " << parsed.status().message() << "\n";
        return kExitBadInput;
      }
      from = *parsed;
    }
  }
  std::string out;
  for (auto next : cron->NextFireTimes(from, *zone, o.count)) {
    int64_t ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(next.time_since_epoch()).count();
    out += fmt::format("{}\t{}\n", ms, zone->FormatIso8601(next));
  }
  std::cout << out << std::flush;
  return kExitOk;
}

}  // namespace

void AddCronCommand(CLI::App& app, int* exit_code) {
  CLI::App* cron = app.add_subcommand("cron", "Check Quartz cron expressions");
  cron->require_subcommand(1);
  auto opts = std::make_shared<CronNextOptions>();
  CLI::App* next = cron->add_subcommand(
      "next", "Print the next fire times: epoch milliseconds, a tab, ISO-8601 local time");
  next->add_option("expression", opts->expression, "Quartz cron expression, e.g. \"0/5 * * * * ?\"")
      ->required();
  next->add_option("--tz", opts->zone,
                   "Time zone: IANA id (Asia/Shanghai) or GMT+08:00; default: the system's");
  next->add_option("--from", opts->from,
                   "Start instant (exclusive): epoch milliseconds or ISO-8601; default: now");
  next->add_option("-n", opts->count, "How many fire times to print")->default_val(1);
  next->callback([opts, exit_code] { *exit_code = RunCronNext(*opts); });
}

}  // namespace elasticjob::cli
