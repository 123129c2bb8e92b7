// Time per next-fire computation (CronExpression::NextFireTimeAfter) for typical and nasty
// expressions. Each iteration computes the fire time after the previous one, walking forward
// the way a trigger does. Run: scripts/bench.sh (see docs/benchmarks.md for figures).
#include <benchmark/benchmark.h>

#include "cron_mix.h"
#include "elasticjob/schedule/cron_expression.h"

namespace elasticjob {
namespace {

void BM_CronNext(benchmark::State& state, const char* expr, const char* zone_id) {
  auto cron = CronExpression::Parse(expr);
  auto zone = TimeZone::Parse(zone_id);
  if (!cron.ok() || !zone.ok()) {
    state.SkipWithError("bad expression or zone");
    return;
  }
  const auto start = CronExpression::TimePoint{} + std::chrono::seconds(1795305600);  // 2026-11-22
  auto t = start;
  for (auto _ : state) {
    auto next = cron->NextFireTimeAfter(t, *zone);
    benchmark::DoNotOptimize(next);
    t = next ? *next : start;
  }
}

// Typical ElasticJob crons.
BENCHMARK_CAPTURE(BM_CronNext, every_5s, "0/5 * * * * ?", "Asia/Shanghai");
BENCHMARK_CAPTURE(BM_CronNext, every_second, "* * * * * ?", "UTC");
BENCHMARK_CAPTURE(BM_CronNext, daily_2am, "0 0 2 * * ?", "Asia/Shanghai");
BENCHMARK_CAPTURE(BM_CronNext, weekdays_9_to_5, "0 0/15 9-17 ? * MON-FRI", "America/New_York");
// Nasty ones: sparse matches, month and year walks, DST zones.
BENCHMARK_CAPTURE(BM_CronNext, fifth_friday, "0 0 12 ? * 6#5", "Europe/London");
BENCHMARK_CAPTURE(BM_CronNext, last_weekday, "0 0 0 LW * ?", "Australia/Sydney");
BENCHMARK_CAPTURE(BM_CronNext, leap_day, "0 0 0 29 2 ?", "UTC");
BENCHMARK_CAPTURE(BM_CronNext, last_friday_dst, "0 30 2 ? * 6L", "America/New_York");
BENCHMARK_CAPTURE(BM_CronNext, never_fires_feb_30, "0 0 0 30 2 ?", "UTC");
BENCHMARK_CAPTURE(BM_CronNext, last_second_of_year, "59 59 23 31 12 ?", "Pacific/Chatham");

// The mix (bench/cron_mix.h, the expressions bench/cron_vs_quartz.sh times against Quartz):
// six fire times chained from each case's start, case after case; time per call.
void BM_CronMix(benchmark::State& state) {
  static const auto* const kMix = new std::vector<bench::CronMixCase>(bench::GenerateCronMix());
  size_t i = 0;
  int k = 0;
  auto t = CronExpression::TimePoint{} + std::chrono::milliseconds((*kMix)[0].from_ms);
  for (auto _ : state) {
    const bench::CronMixCase& c = (*kMix)[i];
    auto next = c.cron.NextFireTimeAfter(t, c.zone);
    benchmark::DoNotOptimize(next);
    if (next && ++k < 6) {
      t = *next;
    } else {
      i = i + 1 == kMix->size() ? 0 : i + 1;
      k = 0;
      t = CronExpression::TimePoint{} + std::chrono::milliseconds((*kMix)[i].from_ms);
    }
  }
}
BENCHMARK(BM_CronMix);

void BM_CronParse(benchmark::State& state) {
  for (auto _ : state) {
    auto cron = CronExpression::Parse("0 0/15 9-17 ? JAN-NOV MON-FRI 2026-2030");
    benchmark::DoNotOptimize(cron);
  }
}
BENCHMARK(BM_CronParse);

}  // namespace
}  // namespace elasticjob
