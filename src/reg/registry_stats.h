// RegistryStats: what a registry center counts of its session and requests, for the
// process's metrics (docs/metrics.md). Owned by the registry (CoordinatorRegistry::stats()), shared
// with the Metrics that shows it, so either may go first.
//
// Thread safety: every field may be recorded and read from any thread (relaxed atomics).
#ifndef ELASTICJOB_REG_REGISTRY_STATS_H_
#define ELASTICJOB_REG_REGISTRY_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

#include "elasticjob/mutex.h"
#include "infra/job_metrics.h"
#include "infra/metric_types.h"

namespace elasticjob::reg {

// The operations requests are counted by (a fixed set: the `operation` label).
// (In the order of the ZooKeeper registry's RequestKind.)
enum class RegistryOp { kGet, kChildren, kExists, kCreate, kSet, kDelete, kMulti, kCount };
inline constexpr std::string_view kRegistryOpNames[] = {"get", "children", "exists", "create",
                                                        "set", "delete",   "multi"};

enum class SessionState { kConnecting, kConnected, kSuspended, kLost, kClosed, kCount };
inline constexpr std::string_view kSessionStateNames[] = {"connecting", "connected", "suspended",
                                                          "lost", "closed"};

struct RegistryStats {
  std::atomic<int> state{static_cast<int>(SessionState::kConnecting)};
  infra::Counter reconnects;  // the same session back after a suspension
  infra::Counter expiries;    // sessions lost (expired); a new one follows
  std::array<infra::Counter, static_cast<size_t>(RegistryOp::kCount)> requests;
  std::array<infra::Histogram, static_cast<size_t>(RegistryOp::kCount)> request_duration{
      infra::Histogram(metrics::kRequestBoundsUs), infra::Histogram(metrics::kRequestBoundsUs),
      infra::Histogram(metrics::kRequestBoundsUs), infra::Histogram(metrics::kRequestBoundsUs),
      infra::Histogram(metrics::kRequestBoundsUs), infra::Histogram(metrics::kRequestBoundsUs),
      infra::Histogram(metrics::kRequestBoundsUs)};

  // Nodes held by the watch-fed caches, counted at a scrape by the registry (null: none, or
  // the registry is gone).
  Mutex cache_mu;
  std::function<int64_t()> cache_nodes ELASTICJOB_GUARDED_BY(cache_mu);
  int64_t CacheNodes() {
    MutexLock lock(&cache_mu);
    return cache_nodes ? cache_nodes() : 0;
  }
  void SetCacheCounter(std::function<int64_t()> fn) {
    MutexLock lock(&cache_mu);
    cache_nodes = std::move(fn);
  }

  void SetState(SessionState s) { state.store(static_cast<int>(s), std::memory_order_relaxed); }
  void Request(RegistryOp op, std::chrono::nanoseconds took) {
    requests[static_cast<size_t>(op)].Inc();
    request_duration[static_cast<size_t>(op)].Observe(took);
  }
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_REGISTRY_STATS_H_
