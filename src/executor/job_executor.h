// JobExecutor: what happens when a job's trigger fires, as ElasticJob's
// AbstractElasticJobExecutor does it:
//   1. time-skew check (maxTimeDiffSeconds);
//   2. sharding if necessary (the leader shards; the others wait for it);
//   3. this instance's items, minus disabled ones; none: done;
//   4. if any is still running (here or, with monitorExecution, in the registry), mark them
//      misfire and skip this trigger;
//   5. mark them running (one multi-op), run them in parallel on the item pool, clear the
//      marks (one multi-op);
//   6. while misfire marks remain (and misfire is on), clear them and run again.
// Every item run reports one ItemRun (job, item, instance, outcome).
//
// Thread safety: Execute may be called from any thread; concurrent calls for one job
// serialise on the local run flag (the later one is the misfire case above, and the running
// call re-runs for it before it lets go of the run, so no misfire is lost).
#ifndef ELASTICJOB_EXECUTOR_JOB_EXECUTOR_H_
#define ELASTICJOB_EXECUTOR_JOB_EXECUTOR_H_

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "config/config_service.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/executor.h"
#include "elasticjob/thread_annotations.h"
#include "execution/execution_service.h"
#include "sharding/sharding_service.h"

namespace elasticjob::executor {

struct ItemRun {
  std::string job_name;
  int item = 0;
  std::string instance_id;
  bool success = false;
  std::string error;  // when !success
  std::chrono::milliseconds duration{0};
  bool misfire_rerun = false;
};

class JobExecutor {
 public:
  // REQUIRES: every reference outlives this object.
  JobExecutor(config::ConfigService& config, sharding::ShardingService& sharding,
              execution::ExecutionService& execution, std::string instance_id,
              std::shared_ptr<SimpleJob> job, Executor& item_pool,
              std::function<void(const ItemRun&)> on_item_run)
      : config_(config),
        sharding_(sharding),
        execution_(execution),
        instance_id_(std::move(instance_id)),
        job_(std::move(job)),
        item_pool_(item_pool),
        on_item_run_(std::move(on_item_run)) {}

  enum class Outcome { kRan, kNoItems, kMisfire };
  // Runs one trigger (see above). Returns what happened, or the first coordination error;
  // item failures are reported through ItemRun, not here.
  Result<Outcome> Execute();

  bool running() {
    std::lock_guard<std::mutex> lock(run_mu_);
    return running_;
  }

 private:
  Status RunItems(const JobConfiguration& config, const std::vector<int>& items, bool misfire);

  config::ConfigService& config_;
  sharding::ShardingService& sharding_;
  execution::ExecutionService& execution_;
  const std::string instance_id_;
  const std::shared_ptr<SimpleJob> job_;
  Executor& item_pool_;
  const std::function<void(const ItemRun&)> on_item_run_;
  std::mutex run_mu_;
  bool running_ ELASTICJOB_GUARDED_BY(run_mu_) = false;          // a run is going on here
  bool misfire_pending_ ELASTICJOB_GUARDED_BY(run_mu_) = false;  // a trigger found it going
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_JOB_EXECUTOR_H_
