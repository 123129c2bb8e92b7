// TaskRuntime: a task job (elasticjob/api/task_job.h) on this instance. It serves the
// instance's TaskWorker endpoint, registers it at `/{job}/task/workers/{instanceId}`
// (ephemeral, again after a new session), and is the SimpleJob the job's JobRuntime runs:
// the job has one item, which the TASK_LEADER strategy gives the job's leader, so a trigger
// runs one Coordinator there (docs/task-models.md).
//
// A run left by a coordinator that is gone (`/{job}/task/run` names it, its instance is no
// longer registered) is seen at once by the new leader, without waiting for a trigger
// (LeftRunNoticed): with the shared store and a MapJob, and failover off (with failover on,
// the failover of the item runs it), the leader writes its own `trigger/{id}` and the run
// resumes now; a run the store cannot resume (the local store, a BroadcastJob) gets one WARN
// saying the next trigger runs the job from the root and how to trigger it now.
//
// Lifecycle: Start once (before the JobRuntime starts), Stop (cancels a run in progress),
// Join (after the JobRuntime's Join: the endpoint stops, the worker node goes).
//
// Thread safety: Execute, Stop and connection events may race; Start and Join are called by
// the bootstrap's lifecycle, in order.
#ifndef ELASTICJOB_TASK_TASK_RUNTIME_H_
#define ELASTICJOB_TASK_TASK_RUNTIME_H_

#include <memory>
#include <string>

#include "elasticjob/api/simple_job.h"
#include "elasticjob/api/task_job.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "elasticjob/thread_annotations.h"
#include "infra/log.h"
#include "task/coordinator.h"
#include "task/task_settings.h"
#include "task/worker_service.h"

namespace elasticjob::task {

class TaskRuntime final : public SimpleJob {
 public:
  // `server_ip`: as BootstrapOptions::server_ip; `rpc_address`: where the endpoint listens;
  // `task_store`: the shared task store's URL (BootstrapOptions::task_store), "" for the
  // local one. REQUIRES: `registry` outlives this object.
  TaskRuntime(RegistryCenter& registry, std::shared_ptr<TaskJob> job, JobConfiguration config,
              std::string server_ip, std::string rpc_address, std::string task_store = "",
              std::shared_ptr<metrics::JobMetrics> metrics = nullptr, infra::JobLogger log = {});
  ~TaskRuntime() override;

  // Settings from the props, the endpoint, the worker node. Fails naming the prop, the
  // address or the registry error; nothing stays started then.
  Status Start();
  void Stop();
  // Stops the endpoint and removes the worker node, waiting for the registry until
  // `deadline` (at least reg::kLeaveAtLeast from now): an unreachable one does not hold it.
  void Join(std::chrono::steady_clock::time_point deadline = {});

  // The run (item 0); other items do nothing. Throws with the run's failure.
  void Execute(const ShardingContext& context) override;

  // Gives every item to this instance when it is among those sharded (it shards only while
  // it leads), else to the first in the leader's order.
  std::shared_ptr<const JobShardingStrategy> strategy() const { return strategy_; }
  static constexpr const char* kStrategyType = "TASK_LEADER";

  const std::string& instance_id() const { return instance_id_; }
  const std::string& endpoint() const;

 public:
  // What the new leader does about a run its coordinator left (see above); the decision
  // alone, for tests: kNone (no such run, ours still going, not the leader, failover on),
  // kTrigger (write `trigger/{self}`: the run resumes now), kWarn (log the operator's way).
  enum class LeftRun { kNone, kTrigger, kWarn };
  LeftRun DecideLeftRun(std::string* run_id);

 private:
  // On the leader node's and the instances' events (the events strand): DecideLeftRun, then
  // acts once per run id.
  void LeftRunNoticed();
  Result<std::vector<WorkerEndpoint>> LiveWorkers();
  Status Register();
  // The shared store for this trigger's run: the run `previous` names resumed when the
  // store holds it, else a new one under `*run_id`.
  Result<std::unique_ptr<TaskStore>> OpenSharedStore(const std::string& previous,
                                                     std::string* run_id);

  RegistryCenter& registry_;
  const std::shared_ptr<TaskJob> job_;
  const JobConfiguration config_;
  const std::string server_ip_;
  const std::string rpc_address_;
  const std::string task_store_;
  const std::shared_ptr<metrics::JobMetrics> metrics_;  // may be null
  const infra::JobLogger log_;  // the job's lines (BootstrapOptions::logger)
  std::string instance_id_;     // set by the constructor
  std::shared_ptr<const JobShardingStrategy> strategy_;
  TaskSettings settings_;                 // set by Start
  std::unique_ptr<WorkerServer> server_;  // set by Start, reset by Join
  // Registry deliveries (one thread). Shared: a run that Join abandoned keeps its own hold.
  struct Events {
    ThreadPool pool{1};
    SerialExecutor strand{pool};
  };
  std::shared_ptr<Events> events_;  // set by Start, reset by Join (under mu_)
  std::unique_ptr<Subscription> connection_;
  // The leader node's and the instances' watches (LeftRunNoticed), and the last run acted
  // on (only the events strand touches it).
  std::unique_ptr<Subscription> leader_watch_;
  std::unique_ptr<Subscription> instances_watch_;
  std::string left_run_noticed_;

  Mutex mu_;
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  Coordinator* running_ ELASTICJOB_GUARDED_BY(mu_) = nullptr;  // the run in progress
};

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_TASK_RUNTIME_H_
