// The cron benchmarks' mix: the first `count` cases of the Quartz differential test's
// generated corpus (tests/lib/cron_corpus.h, the test's seed), keeping those that parse and
// whose zone loads. With the defaults that is 1,519 expressions in 20 zones: typical fields,
// L/W/#, years (some past, some never reached), DST zones and transition seasons.
//
// Thread safety: plain values.
#ifndef ELASTICJOB_BENCH_CRON_MIX_H_
#define ELASTICJOB_BENCH_CRON_MIX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "elasticjob/schedule/cron_expression.h"
#include "lib/cron_corpus.h"

namespace elasticjob::bench {

struct CronMixCase {
  std::string expression;
  std::string zone_id;
  int64_t from_ms;
  CronExpression cron;
  TimeZone zone;
};

inline constexpr uint32_t kCronMixSeed = 20261122;  // the differential test's seed

inline std::vector<CronMixCase> GenerateCronMix(int count = 2000, uint32_t seed = kCronMixSeed) {
  testing::Gen g(seed);
  std::vector<CronMixCase> mix;
  for (int i = 0; i < count; ++i) {
    std::string expression = g.Expression();
    std::string zone_id = g.Zone();
    int64_t from = g.From();
    auto cron = CronExpression::Parse(expression);
    auto zone = TimeZone::Parse(zone_id);
    if (cron.ok() && zone.ok()) mix.push_back({expression, zone_id, from, *cron, *zone});
  }
  return mix;
}

}  // namespace elasticjob::bench

#endif  // ELASTICJOB_BENCH_CRON_MIX_H_
