// WorkflowNodeRun: what one item run of a workflow node (docs/workflows.md) knows about its
// workflow and what it hands on. ShardingContext::workflow points at it when the run was
// started by a workflow; null otherwise.
//
// A job reads the workflow's data (instance id, the results of the nodes before it, the
// workflow context) and sets its result and context keys:
//
//   void Execute(const elasticjob::ShardingContext& ctx) override {
//     if (ctx.workflow != nullptr) {
//       std::string upstream = ctx.workflow->upstream_results_json();  // {"A":"42",...}
//       ctx.workflow->SetResult("rows=17");
//       ctx.workflow->PutContext("rows", "17");                       // a JSON value
//     }
//   }
//
// A result longer than kWorkflowResultLimit (4 KiB) is cut to it; context values must be
// JSON (a value that does not parse is kept as a JSON string) and all of an item's keys
// together at most kWorkflowContextLimit (64 KiB), beyond which PutContext fails.
// SCRIPT jobs do the same through stdout (`RESULT:` and `CONTEXT:` lines) and HTTP jobs
// through their response (docs/workflows.md).
//
// Thread safety: safe for concurrent use (an item's threads may set its result).
#ifndef ELASTICJOB_API_WORKFLOW_NODE_RUN_H_
#define ELASTICJOB_API_WORKFLOW_NODE_RUN_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob {

// The environment variable a SCRIPT node's process finds the workflow's data in (the same
// JSON object as the `workflow` member of its sharding-context argument).
inline constexpr std::string_view kWorkflowVariable = "ELASTICJOB_WORKFLOW";

class WorkflowNodeRun {
 public:
  WorkflowNodeRun(std::string workflow_name, std::string instance_id, std::string node_id,
                  std::string upstream_results_json, std::string context_json)
      : workflow_name_(std::move(workflow_name)),
        instance_id_(std::move(instance_id)),
        node_id_(std::move(node_id)),
        upstream_results_json_(std::move(upstream_results_json)),
        context_json_(std::move(context_json)) {}

  const std::string& workflow_name() const { return workflow_name_; }
  // The workflow instance ("diamond-0000000042").
  const std::string& instance_id() const { return instance_id_; }
  const std::string& node_id() const { return node_id_; }
  // A JSON object: each finished node before this one (its ancestors) → its result text.
  const std::string& upstream_results_json() const { return upstream_results_json_; }
  // A JSON object: the workflow context as this node starts.
  const std::string& context_json() const { return context_json_; }
  // The JSON object a SCRIPT node gets as `workflow` ({"name","instanceId","node",
  // "upstream","context"}).
  std::string ToJson() const;

  // Sets this item's result (the last call wins), cut to kWorkflowResultLimit.
  void SetResult(std::string_view result);
  // Adds `key` = `json_value` to the workflow context the later nodes see. A value that is
  // not JSON is kept as a JSON string. INVALID_ARGUMENT for an empty key or beyond the limit.
  Status PutContext(std::string_view key, std::string_view json_value);

  std::optional<std::string> result() const;
  // The keys added, each with its JSON value text.
  std::map<std::string, std::string> context_additions() const;

 private:
  const std::string workflow_name_;
  const std::string instance_id_;
  const std::string node_id_;
  const std::string upstream_results_json_;
  const std::string context_json_;

  mutable Mutex mu_;
  std::optional<std::string> result_ ELASTICJOB_GUARDED_BY(mu_);
  std::map<std::string, std::string> context_ ELASTICJOB_GUARDED_BY(mu_);
  size_t context_bytes_ ELASTICJOB_GUARDED_BY(mu_) = 0;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_API_WORKFLOW_NODE_RUN_H_
