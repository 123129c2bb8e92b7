// The other hot pure paths: sharding plans, config YAML emit and parse, sharding context
// JSON. Run: scripts/bench.sh.
#include <benchmark/benchmark.h>

#include "elasticjob/api/sharding_context.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "infra/job_metrics.h"

namespace elasticjob {
namespace {

void BM_ShardingPlan(benchmark::State& state, const char* type) {
  auto registry = JobShardingStrategyRegistry::WithBuiltins(Clock::System());
  const JobShardingStrategy* strategy = *registry.Find(type);
  std::vector<std::string> ids;
  for (int i = 0; i < state.range(0); ++i) ids.push_back("10.0.0." + std::to_string(i) + "@-@1");
  ids = SortInstancesAsLeader(ids);
  for (auto _ : state) {
    auto plan = strategy->Sharding(ids, "orderSyncJob", 64);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK_CAPTURE(BM_ShardingPlan, avg, "AVG_ALLOCATION")->Arg(3)->Arg(100);
BENCHMARK_CAPTURE(BM_ShardingPlan, round_robin, "ROUND_ROBIN")->Arg(3)->Arg(100);

JobConfiguration SampleConfig() {
  return *JobConfiguration::Builder("orderSync", 3)
              .Cron("0/5 * * * * ?")
              .ShardingItemParameters("0=Beijing,1=Shanghai,2=Guangzhou")
              .Failover(true)
              .Description("sync orders from the three regional databases")
              .SetProperty("script.command.line", "/bin/sh -c 'echo run $0'")
              .Build();
}

void BM_ConfigYamlEmit(benchmark::State& state) {
  JobConfiguration c = SampleConfig();
  for (auto _ : state) benchmark::DoNotOptimize(ConfigToYaml(c));
}
BENCHMARK(BM_ConfigYamlEmit);

void BM_ConfigYamlParse(benchmark::State& state) {
  std::string yaml = ConfigToYaml(SampleConfig());
  for (auto _ : state) benchmark::DoNotOptimize(ConfigFromYaml(yaml));
}
BENCHMARK(BM_ConfigYamlParse);

void BM_ShardingContextJson(benchmark::State& state) {
  ShardingContext c{"orderSync", BuildTaskId("orderSync", {0, 1, 2}, "10.0.0.5@-@4242"), 3, "", 1,
                    "Shanghai"};
  for (auto _ : state) benchmark::DoNotOptimize(ShardingContextToJson(c));
}
BENCHMARK(BM_ShardingContextJson);

}  // namespace
}  // namespace elasticjob

// What an item run records when BootstrapOptions::metrics is set (JobExecutor::RunUserCode):
// the running gauge up and down, lateness and duration observed, the outcome counted.
static void BM_RecordItemRunMetrics(benchmark::State& state) {
  elasticjob::metrics::JobMetrics m("bench");
  int64_t i = 0;
  for (auto _ : state) {
    m.running_items.Add(1);
    m.trigger_lateness.Observe(std::chrono::microseconds(700 + (i & 1023)));
    m.running_items.Add(-1);
    m.runs_succeeded.Inc();
    m.item_duration.Observe(std::chrono::milliseconds(3 + (i & 7)));
    ++i;
  }
  benchmark::DoNotOptimize(m.runs_succeeded.value());
}
BENCHMARK(BM_RecordItemRunMetrics);
