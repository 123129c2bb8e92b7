// The registry's cached read (CoordinatorRegistry::GetCached): what each fire time and each
// claim asks the caches of its job, with one cache per job (as a process of N jobs has) on a
// memory:// registry. It finds the cache above the key (TreeCacheSet::CacheFor) and reads
// the node. Run: scripts/bench.sh --benchmark_filter=CachedRead.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "elasticjob/executor.h"
#include "reg/memory/memory_registry.h"
#include "storage/job_node_path.h"

namespace elasticjob {
namespace {

void BM_CachedRead(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  auto server = std::make_shared<reg::MemoryServer>();
  auto registry = reg::NewMemoryRegistry(server, "bench");
  if (!registry->Init().ok()) {
    state.SkipWithError("registry Init failed");
    return;
  }
  ThreadPool events(1);
  std::vector<std::unique_ptr<reg::CountedSubscription>> watches;
  for (int j = 0; j < jobs; ++j) {
    const std::string job = "/job" + std::to_string(j);
    (void)registry->Persist(job + "/sharding/0/instance", "10.0.0.1@-@1");
    auto w = registry->WatchTree(
        job, events, [](const TreeEvent&) {}, storage::JobNodePath(job.substr(1)).CachePolicy());
    if (!w.ok()) {
      state.SkipWithError("WatchTree failed");
      return;
    }
    watches.push_back(std::move(*w));
  }
  const std::string key = "/job" + std::to_string(jobs / 2) + "/sharding/0/instance";
  for (auto _ : state) {
    reg::CachedRead r = registry->GetCached(key);
    benchmark::DoNotOptimize(r);
  }
  watches.clear();
  registry->Close();
}
BENCHMARK(BM_CachedRead)->Arg(1)->Arg(1000);

}  // namespace
}  // namespace elasticjob
