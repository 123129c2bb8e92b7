#include "executor/job_executor.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "elasticjob/config/job_configuration.h"

namespace elasticjob::executor {

Result<JobExecutor::Outcome> JobExecutor::Execute() {
  auto config = config_.Load(true);
  if (!config.ok()) return config.status();
  if (Status s = config_.CheckMaxTimeDiffSecondsTolerable(); !s.ok()) return s;
  if (Status s = sharding_.ShardingIfNecessary(); !s.ok()) return s;
  auto local = sharding_.GetLocalShardingItems();
  if (!local.ok()) return local.status();
  auto disabled = execution_.GetDisabledItems(*local);
  if (!disabled.ok()) return disabled.status();
  std::vector<int> items;
  for (int i : *local) {
    if (std::find(disabled->begin(), disabled->end(), i) == disabled->end()) items.push_back(i);
  }
  if (items.empty()) return Outcome::kNoItems;
  bool expected = false;
  if (!running_.compare_exchange_strong(expected, true)) {
    // The previous run is still going on this instance: a misfire.
    if (config->misfire) {
      if (Status s = execution_.SetMisfire(items); !s.ok()) return s;
    }
    return Outcome::kMisfire;
  }
  struct Reset {
    std::atomic<bool>& flag;
    ~Reset() { flag = false; }
  } reset{running_};
  if (config->monitor_execution) {
    auto misfired = execution_.MisfireIfHasRunningItems(items);
    if (!misfired.ok()) return misfired.status();
    if (*misfired) return Outcome::kMisfire;
  }
  if (Status s = RunItems(*config, items, false); !s.ok()) return s;
  while (config->misfire) {
    auto need = sharding_.IsNeedSharding();
    if (!need.ok() || *need) break;  // a resharding is pending: the next trigger handles it
    auto misfired = execution_.GetMisfiredJobItems(items);
    if (!misfired.ok()) return misfired.status();
    if (misfired->empty()) break;
    if (Status s = execution_.ClearMisfire(items); !s.ok()) return s;
    if (Status s = RunItems(*config, items, true); !s.ok()) return s;
  }
  return Outcome::kRan;
}

Status JobExecutor::RunItems(const JobConfiguration& config, const std::vector<int>& items,
                             bool misfire) {
  auto params =
      ParseShardingItemParameters(config.sharding_item_parameters, config.sharding_total_count);
  if (!params.ok()) return params.status();
  if (Status s = execution_.RegisterJobBegin(config, items); !s.ok()) return s;
  const std::string task_id = BuildTaskId(config.job_name, items, instance_id_);
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;
  for (int item : items) {
    ShardingContext ctx{config.job_name,      task_id, config.sharding_total_count,
                        config.job_parameter, item,    std::nullopt};
    if (auto it = params->find(item); it != params->end()) ctx.sharding_parameter = it->second;
    item_pool_.Post([&, ctx] {
      ItemRun run{config.job_name, ctx.sharding_item, instance_id_, true, "", {}, misfire};
      auto start = std::chrono::steady_clock::now();
      try {
        job_->Execute(ctx);  // user code is fenced here
      } catch (const std::exception& e) {
        run.success = false;
        run.error = e.what();
      } catch (...) {
        run.success = false;
        run.error = "unknown exception";
      }
      run.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      if (on_item_run_) on_item_run_(run);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done == items.size(); });
  }
  return execution_.RegisterJobCompleted(config, items);
}

}  // namespace elasticjob::executor
