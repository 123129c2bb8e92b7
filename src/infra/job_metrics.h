// JobMetrics: what one job records on this instance (docs/metrics.md lists each metric).
// Shared by every bootstrap of the job in the process (a job stopped and started again by
// `elasticjob agent` goes on counting in the same series); the labels are the job's name and
// a fixed outcome or reason, never an item or instance id, so a scrape's size grows with the
// number of jobs only.
//
// Thread safety: every field may be recorded from any thread (relaxed atomics: no lock, no
// allocation on the fire path).
#ifndef ELASTICJOB_INFRA_JOB_METRICS_H_
#define ELASTICJOB_INFRA_JOB_METRICS_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "infra/metric_types.h"

namespace elasticjob::metrics {

// Bucket bounds in microseconds.
inline constexpr uint64_t kLatencyBoundsUs[] = {1000,    2500,    5000,    10000,  25000,
                                                50000,   100000,  250000,  500000, 1000000,
                                                2500000, 5000000, 10000000};
inline constexpr uint64_t kDurationBoundsUs[] = {5000,     10000,    25000,    50000,    100000,
                                                 250000,   500000,   1000000,  2500000,  5000000,
                                                 10000000, 30000000, 60000000, 300000000};
inline constexpr uint64_t kRequestBoundsUs[] = {
    250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000};

struct JobMetrics {
  explicit JobMetrics(std::string job) : name(std::move(job)) {}
  const std::string name;

  // Cron fire time to the item's start (ItemRunReport: started - fire_time).
  infra::Histogram trigger_lateness{kLatencyBoundsUs};
  infra::Counter runs_succeeded;
  infra::Counter runs_failed;
  infra::Histogram item_duration{kDurationBoundsUs};
  infra::Gauge running_items;
  // Triggers that found items still running (marked misfire, run again after).
  infra::Counter misfires;
  // Items this instance ran for a crashed instance.
  infra::Counter failovers_taken;
  // Items of a crashed instance this instance put up for failover.
  infra::Counter failovers_given;
  // Shardings this instance performed as the job's leader.
  infra::Counter reshardings;
  // Fire times skipped: the registry connection was suspended or the session lost.
  infra::Counter skipped_paused;
  // Fire times picked up too late (the process was paused or starved).
  infra::Counter skipped_overdue;
  // Item attempts ended by the job's execution timeout (timeoutMs: docs/scheduling.md).
  infra::Counter timeouts;
  // Task models (docs/task-models.md): sub-tasks recorded by this instance as coordinator.
  infra::Counter subtasks_succeeded;
  infra::Counter subtasks_failed;
  infra::Counter subtasks_retried;

  // Readiness: bootstraps of the job made and not yet scheduled (or failed), and those
  // scheduled and not yet stopped. Atomic: bootstraps run on the callers' threads.
  std::atomic<int> starting{0};
  std::atomic<int> scheduled{0};
};

}  // namespace elasticjob::metrics

#endif  // ELASTICJOB_INFRA_JOB_METRICS_H_
