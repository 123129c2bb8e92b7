// Coordinator: one run of a task job on the instance that holds its item (the job's leader,
// docs/task-models.md). Broadcast: PreProcess, one RPC per live worker, PostProcess.
// Map/MapReduce: the root task here, its sub-tasks kept in a TaskStore and sent in batches
// to every live worker, at most `max_inflight_batches` RPCs in flight per worker; a failure
// is retried up to `max_attempts`; a worker that fails an RPC or whose node goes has its
// batches sent elsewhere; then Reduce.
//
// Thread safety: Run on one thread; Wake and Cancel from any.
#ifndef ELASTICJOB_TASK_COORDINATOR_H_
#define ELASTICJOB_TASK_COORDINATOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/api/task_job.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"
#include "infra/job_metrics.h"
#include "infra/log.h"
#include "task/task_settings.h"
#include "task/task_store.h"

namespace elasticjob::task {

struct WorkerEndpoint {
  std::string instance_id;
  std::string address;  // host:port
};

struct RunCounts {
  int64_t created = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t retried = 0;
};

class Coordinator {
 public:
  // The live workers now (a registry read). Called at the start and after every Wake.
  using ListWorkers = std::function<Result<std::vector<WorkerEndpoint>>()>;

  // `store`: the run's task store (a shared one, maybe holding a run to resume: see
  // TaskStore::resumed()); null: a local one in a temp file.
  Coordinator(TaskJob& job, std::string job_name, std::string job_parameter,
              std::string instance_id, std::string run_id, TaskSettings settings,
              ListWorkers list_workers, std::unique_ptr<TaskStore> store = nullptr)
      : job_(job),
        job_name_(std::move(job_name)),
        job_parameter_(std::move(job_parameter)),
        instance_id_(std::move(instance_id)),
        run_id_(std::move(run_id)),
        settings_(settings),
        list_workers_(std::move(list_workers)),
        store_(std::move(store)) {}
  ~Coordinator();
  // Counts the sub-tasks recorded, by state, there (null: not counted). REQUIRES: before Run.
  void set_metrics(metrics::JobMetrics* metrics) { metrics_ = metrics; }
  // Where the run's lines go (the job's logger). REQUIRES: before Run.
  void set_log(infra::JobLogger log) { log_ = std::move(log); }
  // The workflow node this run is (null: none): the leader's task contexts hand it to the
  // job (TaskContext::workflow). REQUIRES: before Run.
  void set_workflow(std::shared_ptr<WorkflowNodeRun> workflow) { workflow_ = std::move(workflow); }

  // The whole run. OK when it succeeded; else the reason (a failed root, sub-tasks failed in
  // a MapJob, a throwing PreProcess/PostProcess/Reduce, no live worker, CANCELLED). A run
  // cancelled (or whose store failed) with a shared store stays in it for the next
  // coordinator (handed_over()); otherwise the store's rows go.
  Status Run();
  // The worker set may have changed: the run looks again.
  void Wake();
  // Ends the run with CANCELLED and `reason` (the job is stopping, the session was lost);
  // the first reason stays.
  void Cancel(std::string reason);

  const RunCounts& counts() const { return counts_; }
  // The run was left in the shared store for the next coordinator to resume.
  bool handed_over() const { return handed_over_; }

 private:
  struct Call;
  Status RunBroadcast(BroadcastJob& job);
  Status RunMap(MapJob& job);
  Status RunMapIn(MapJob& job, TaskStore& store);
  void Finished(Call* call);

  // Waits for finished calls, a wake-up or a cancellation; returns the finished calls, sets
  // `*woken`, and on the first cancellation sets `*cancelled` and calls `cancel_calls` (still
  // holding mu_: it may only cancel RPC contexts).
  std::vector<Call*> AwaitCompletions(bool* woken, bool* cancelled,
                                      const std::function<void()>& cancel_calls);

  TaskJob& job_;
  const std::string job_name_;
  const std::string job_parameter_;
  const std::string instance_id_;
  const std::string run_id_;
  const TaskSettings settings_;
  metrics::JobMetrics* metrics_ = nullptr;  // borrowed; may be null
  infra::JobLogger log_;                    // default: the process default
  std::shared_ptr<WorkflowNodeRun> workflow_;
  const ListWorkers list_workers_;
  std::unique_ptr<TaskStore> store_;
  RunCounts counts_;
  bool handed_over_ = false;

  Mutex mu_;
  CondVar cv_{&mu_};
  std::vector<Call*> completed_ ELASTICJOB_GUARDED_BY(mu_);
  bool woken_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool cancelled_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::string cancel_reason_ ELASTICJOB_GUARDED_BY(mu_);
};

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_COORDINATOR_H_
