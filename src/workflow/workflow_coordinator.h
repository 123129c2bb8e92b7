// Coordinator: the WorkflowCoordinator (elasticjob/workflow/workflow_api.h). One registry
// Watch of the workflows' subtree, whose events (on one strand) mark workflows and
// instances to look at; a look at an instance works out, from the registry alone, what
// has to happen (nodes finished, successors to start, the instance's end) and writes it in
// one multi-op, the successors' run requests included. So a coordinator that dies between
// two looks leaves nothing half done, and the next one, reading the same state, goes on
// from it: no node starts twice, none is forgotten (docs/workflows.md).
//
// Leadership per workflow: the ephemeral `leader` node; whoever creates it leads until
// its session ends or it stops; the others watch it and try again when it goes.
//
// Thread safety: Start and Stop from any thread; the rest runs on the strand.
#ifndef ELASTICJOB_WORKFLOW_WORKFLOW_COORDINATOR_H_
#define ELASTICJOB_WORKFLOW_WORKFLOW_COORDINATOR_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "elasticjob/workflow/workflow_api.h"
#include "infra/log.h"
#include "trigger/timer_scheduler.h"
#include "workflow/workflow_records.h"

namespace elasticjob::workflow {

class Coordinator final : public WorkflowCoordinator {
 public:
  Coordinator(RegistryCenter& registry, Executor& executor, WorkflowCoordinatorOptions options);
  ~Coordinator() override;

  Status Start() override;
  void Stop() override;
  std::vector<std::string> Leading() override;
  bool WaitLeading(const std::string& name, std::chrono::milliseconds bound) override;

 private:
  struct Led {
    bool leading = false;
    std::string term;  // our node under terms/ while leading: every step checks it
    std::string definition_yaml;
    trigger::TimerScheduler::TaskId cron_task = 0;
  };
  // One instance as read for a look.
  struct Model;

  void OnEvent(const TreeEvent& event);
  void MarkAll();
  void Schedule();
  void Drain();
  void LookAtWorkflow(const std::string& name);
  void LookAtInstance(const std::string& name, const std::string& id);
  void ArmCron(const std::string& name, Led& led);
  void CronFire(const std::string& name, Clock::WallTime fire);
  void ArmLook(const std::string& name, const std::string& id, Clock::WallTime at);
  void Retention(const std::string& name, int keep);
  // Whether `covered` holds every item of `job` (its config's shardingTotalCount).
  bool CoversEveryItem(const std::string& job, const std::set<int>& covered);
  // Looks at instance `id` of `name` again when an instance of `job` goes.
  void WatchJob(const std::string& job, const std::string& name, const std::string& id);

  // Reads through what this coordinator wrote and the Watch has not shown yet.
  Result<std::string> Read(const std::string& key);
  std::vector<std::string> Children(const std::string& key);
  // Puts the check of `led`'s term first in `ops` (none while it has no term).
  // Removes the run requests and cancels left under the definition's jobs for `instances`
  // (removed: their runners died before taking them).
  void RemoveLeftRequests(const std::string& name, const std::vector<std::string>& instances);
  static void Fence(const Led& led, const std::string& name, std::vector<TransactionOp>& ops);
  bool Commit(const std::string& name, const std::string& id, std::vector<TransactionOp> ops);

  // The DAG's step (see the .cc): what changes, as ops.
  void Advance(Model& m);
  void StartJobNode(Model& m, size_t index, int attempt);
  void StartNestedNode(Model& m, size_t index, int attempt);
  // A stopped instance: its running job nodes' runs are cancelled where they run.
  void CancelRunningNodes(Model& m);
  // kLost: a runner went after it took its request (its items may have run); kNeverTaken:
  // every runner gone had not taken its request yet.
  enum class RunCheck { kPending, kSucceeded, kFailed, kLost, kNeverTaken };
  RunCheck CheckRuns(Model& m, size_t index, std::string* error, std::string* result,
                     std::string* context);
  bool EdgeLive(const Model& m, size_t from, const std::string& to) const;

  RegistryCenter& registry_;
  Executor& executor_;
  const std::string instance_id_;
  Clock& clock_;
  const infra::JobLogger log_;  // WorkflowCoordinatorOptions::logger
  SerialExecutor strand_;
  trigger::TimerScheduler timer_;

  Mutex mu_;
  bool started_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::vector<std::string> leading_ ELASTICJOB_GUARDED_BY(mu_);
  CondVar leading_cv_{&mu_};  // leading_ changed (WaitLeading)
  std::unique_ptr<Subscription> watch_ ELASTICJOB_GUARDED_BY(mu_);
  std::unique_ptr<Subscription> connection_ ELASTICJOB_GUARDED_BY(mu_);
  // A watch of `/{job}/instances` per job of a node that ran here (WatchJob).
  std::map<std::string, std::unique_ptr<Subscription>> job_watches_ ELASTICJOB_GUARDED_BY(mu_);

  // Strand only.
  std::map<std::string, Led> workflows_;
  std::set<std::string> dirty_workflows_;
  std::set<std::pair<std::string, std::string>> dirty_instances_;
  bool drain_posted_ = false;
  int64_t terms_taken_ = 0;
  std::map<std::string, std::optional<std::string>> overlay_;           // key -> written value
  std::map<std::pair<std::string, std::string>, int64_t> looks_armed_;  // instance -> due ms
  // Jobs whose `/{job}/workflowRuns` is known to exist (cleared when a commit fails).
  std::set<std::string> request_parents_;
  // Per job of a running node: the instances to look at when one of its instances goes.
  std::map<std::string, std::set<std::pair<std::string, std::string>>> job_users_;
};

}  // namespace elasticjob::workflow

#endif  // ELASTICJOB_WORKFLOW_WORKFLOW_COORDINATOR_H_
