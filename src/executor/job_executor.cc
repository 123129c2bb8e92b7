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
  // One config read per trigger: the checks below take its values.
  if (Status s = config_.CheckMaxTimeDiffSecondsTolerable(config->max_time_diff_seconds); !s.ok()) {
    return s;
  }
  if (Status s = sharding_.ShardingIfNecessary(); !s.ok()) return s;
  auto local = sharding_.GetLocalShardingItems(config->sharding_total_count);
  if (!local.ok()) return local.status();
  auto disabled = execution_.GetDisabledItems(*local);
  if (!disabled.ok()) return disabled.status();
  std::vector<int> items;
  for (int i : *local) {
    if (std::find(disabled->begin(), disabled->end(), i) == disabled->end()) items.push_back(i);
  }
  if (items.empty()) return Outcome::kNoItems;
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    if (running_) {
      // The previous run is still going on this instance: a misfire. The running call takes
      // it over before it lets go of the run (below). Mark and note it in one step under
      // the lock, so the running call sees both or neither.
      if (!config->misfire) return Outcome::kMisfire;
      if (Status s = execution_.SetMisfire(items); !s.ok()) return s;
      misfire_pending_ = true;
      return Outcome::kMisfire;
    }
    running_ = true;
  }
  // From here this call owns the run; every exit releases it.
  struct Release {
    JobExecutor* self;
    bool armed = true;
    ~Release() {
      if (!armed) return;
      std::lock_guard<std::mutex> lock(self->run_mu_);
      self->running_ = false;
      self->misfire_pending_ = false;
    }
  } release{this};
  if (config->monitor_execution) {
    auto misfired = execution_.MisfireIfHasRunningItems(items);
    if (!misfired.ok()) return misfired.status();
    if (*misfired) return Outcome::kMisfire;  // running elsewhere (or left by a crash)
  }
  if (Status s = RunItems(*config, items, false); !s.ok()) return s;
  while (true) {
    // Re-run once for every burst of triggers that found this run going: those noted here
    // while it ran, and misfire marks in the registry. The decision and the release of the
    // run happen under one lock, so a trigger arriving now either is seen or runs itself.
    std::vector<int> marked;
    bool resharding = false;
    if (config->misfire) {
      auto m = execution_.GetMisfiredJobItems(items);
      if (!m.ok()) return m.status();
      marked = *m;
      auto need = sharding_.IsNeedSharding();
      if (!need.ok()) return need.status();
      resharding = *need;  // a resharding is pending: the next trigger handles it
    }
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      bool again = config->misfire && !resharding && (misfire_pending_ || !marked.empty());
      misfire_pending_ = false;
      if (!again) {
        running_ = false;
        release.armed = false;
        break;
      }
    }
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
