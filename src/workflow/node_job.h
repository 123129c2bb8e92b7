// The worker side of workflows (docs/workflows.md "How a node runs"): what an instance does
// with an operator trigger whose value is a workflow envelope (workflow_node.h).
//
// NodeRuns::Take, called as a run request for this instance arrives (`/{job}/workflowRuns/
// ...`), takes it: one multi-op deletes it and creates the run's ephemeral `runs/` mark under
// the workflow node (the coordinator sees this instance at work and notices its loss). Once
// the run ends, one multi-op writes this instance's report (success, each item's result, the
// context keys added) and deletes the mark. NodeJob, around the job, gives each item of such a run
// its real parameter and a WorkflowNodeRun (ShardingContext::workflow) and records its outcome.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_WORKFLOW_NODE_JOB_H_
#define ELASTICJOB_WORKFLOW_NODE_JOB_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "elasticjob/api/cancellation.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "infra/log.h"
#include "reg/coordinator_registry.h"
#include "workflow/workflow_node.h"

namespace elasticjob::workflow {

// What a workflow run request carries (its value after kEnvelopePrefix, as JSON).
struct Envelope {
  std::string workflow;
  std::string instance;
  std::string node;
  int attempt = 1;
  std::optional<std::string> param;  // the node's job parameter; unset: the job's own
  std::string upstream_json = "{}";  // ancestor node -> result
  std::string context_json = "{}";   // the workflow context
};

// Whether `parameter` is a workflow run request's (it starts with kEnvelopePrefix): read at
// every item start, so inline.
inline bool IsEnvelope(std::string_view parameter) {
  return parameter.starts_with(kEnvelopePrefix);
}
std::string EncodeEnvelope(const Envelope& envelope);
// The trigger value that cancels `envelope`'s run (kCancelPrefix).
std::string EncodeCancel(const Envelope& envelope);
// INVALID_ARGUMENT naming what is wrong when `parameter` is not a valid envelope.
Result<Envelope> DecodeEnvelope(std::string_view parameter);

class NodeRuns {
 public:
  // REQUIRES: `registry` and `executor` outlive this object and every Report Take hands out.
  // `log`: the job's lines (the job's logger; default: the process default).
  NodeRuns(reg::CoordinatorRegistry& registry, Executor& executor, std::string job_name,
           infra::JobLogger log = {})
      : registry_(registry),
        executor_(executor),
        job_name_(std::move(job_name)),
        log_(std::move(log)) {}

  // Called once the run ends: `ran` true when it ran (or had nothing to run here), false
  // with `error` when it did not (the job stopped, a registry error). Writes the report.
  using Report = std::function<void(bool ran, const std::string& error)>;
  // Runs the node's run: its parameter (the envelope) with `report` to call at its end.
  using Start = std::function<void(const std::string& parameter, Report report)>;
  // A run request `name` (RunRequestName) for this instance, `instance_id`, with `value`.
  // A run: one multi-op deletes the request and creates the run mark (so it runs once, and
  // the coordinator sees this instance at work, and its loss); then `start` is called. A
  // cancel: the request is deleted and the matching runs here are cancelled (their
  // Cancellation requested: a SCRIPT item's process group is killed, C++ code sees
  // cancelled(); items not started yet do not start).
  void Take(const std::string& name, const std::string& value, const std::string& instance_id,
            Start start);
  // The item of a run whose parameter is `parameter` starts (null: not a run noted here;
  // `cancelled` is set when the run was cancelled) / ended.
  std::shared_ptr<const Envelope> Find(const std::string& parameter,
                                       const std::shared_ptr<Cancellation>& cancellation,
                                       bool* cancelled);
  void RecordItem(const std::string& parameter, int item, bool ok, std::string error,
                  std::optional<std::string> result, std::map<std::string, std::string> context);

 private:
  struct Entry {
    std::shared_ptr<const Envelope> envelope;
    std::map<int, std::string> results;   // item -> result
    std::map<int, std::string> failures;  // item -> error
    std::set<int> ran;                    // every item run
    std::map<std::string, std::string> context;
    int items = 0;
    int refs = 0;  // runs of this parameter under way here
    bool cancelled = false;
    std::shared_ptr<Cancellation> cancellation;  // the run's, once an item started
  };
  void Finish(const std::string& parameter, const std::string& instance_id, bool ran,
              const std::string& error);
  void Cancel(const Envelope& target);

  reg::CoordinatorRegistry& registry_;
  Executor& executor_;
  const std::string job_name_;
  const infra::JobLogger log_;

  Mutex mu_;
  std::map<std::string, Entry> runs_ ELASTICJOB_GUARDED_BY(mu_);  // by trigger value
};

class NodeJob final : public SimpleJob {
 public:
  // `configured_parameter`: the job's own parameter, for a node that gives none.
  NodeJob(std::shared_ptr<SimpleJob> inner, std::shared_ptr<NodeRuns> runs,
          std::function<std::string()> configured_parameter)
      : inner_(std::move(inner)),
        runs_(std::move(runs)),
        configured_parameter_(std::move(configured_parameter)) {}
  void Execute(const ShardingContext& context) override;

 private:
  const std::shared_ptr<SimpleJob> inner_;
  const std::shared_ptr<NodeRuns> runs_;
  const std::function<std::string()> configured_parameter_;
};

}  // namespace elasticjob::workflow

#endif  // ELASTICJOB_WORKFLOW_NODE_JOB_H_
