// The Quartz cron parser and its fire-time search, the time zone parser and ISO-8601 times.
// Properties: no crash or hang; an accepted expression's next fire time is strictly after the
// start.
#include <cstdint>
#include <string_view>

#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/time_zone.h"
#include "fuzz/fuzz_check.h"

using namespace elasticjob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // An optional zone after a '|': "0 0 12 * * ?|Asia/Shanghai".
  std::string_view zone_text;
  if (size_t bar = text.find('|'); bar != std::string_view::npos) {
    zone_text = text.substr(bar + 1);
    text = text.substr(0, bar);
  }
  auto zone = TimeZone::Parse(zone_text);
  const TimeZone tz = zone.ok() ? *zone : *TimeZone::Parse("UTC");
  // The same text as `elasticjob cron next --from` reads it.
  if (auto from = tz.ParseIso8601(text); from.ok()) (void)tz.FormatIso8601(*from);
  auto cron = CronExpression::Parse(text);
  if (!cron.ok()) return 0;
  // 2026-03-29T00:30:00Z: a DST change in Europe the same day.
  auto at = CronExpression::TimePoint{} + std::chrono::milliseconds(1774744200000);
  for (int i = 0; i < 3; ++i) {
    auto next = cron->NextFireTimeAfter(at, tz);
    if (!next.has_value()) break;
    FUZZ_CHECK(*next > at);
    at = *next;
  }
  return 0;
}
