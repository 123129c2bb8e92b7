// WorkflowDefinition: a DAG of jobs (docs/workflows.md), the value a user writes as YAML for
// `elasticjob workflow add FILE.yaml` or builds in C++ for WorkflowAPI::Add. Nodes are jobs of
// the namespace (any type), decision nodes (a sandboxed Lua 5.4 expression over the workflow
// context choosing outgoing edges) or nested workflows; edges say which node waits for which.
//
//   name: diamond
//   cron: "0 0 2 * * ?"          # optional; without it the workflow runs on demand
//   timeZone: Asia/Shanghai      # optional, with cron
//   maxRunTimeSeconds: 3600      # optional; an instance running longer ends as TIMEOUT
//   overlap: skip                # skip (default) | queue | parallel: a trigger while an
//                                # instance runs is skipped, waits, or runs beside it
//   maxConcurrent: 100           # parallel: instances running at once (0: no bound); the
//                                # others wait (QUEUED) in order
//   retention: 20                # finished instances kept (older ones are removed)
//   nodes:
//     - id: A
//       job: extractJob
//       param: "day=today"       # the job parameter of this node's run
//     - id: B
//       job: transformJob
//       allowFailure: true       # the workflow goes on when B fails
//       retries: 2               # runs again up to twice before it counts as failed
//       retryIntervalSeconds: 5
//     - id: C
//       job: loadJob
//       disabled: true           # SKIPPED; the DAG goes on through it
//     - id: check
//       kind: decision
//       expression: "ctx.rows > 0"
//     - id: sub
//       kind: workflow
//       workflow: otherWorkflow
//   edges:
//     - {from: A, to: B}
//     - {from: check, to: B, when: "true"}   # a decision's edge runs when the value matches
//
// Thread safety: plain value types; the functions are pure.
#ifndef ELASTICJOB_WORKFLOW_WORKFLOW_DEFINITION_H_
#define ELASTICJOB_WORKFLOW_WORKFLOW_DEFINITION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob {

// The largest result a node keeps (a longer one is cut to it): the result travels through the
// registry to every later node.
inline constexpr size_t kWorkflowResultLimit = 4096;
// The largest workflow context (its JSON text) an instance keeps.
inline constexpr size_t kWorkflowContextLimit = 64 * 1024;
// The largest definition text WorkflowFromYaml reads.
inline constexpr size_t kWorkflowYamlLimit = 256 * 1024;

enum class WorkflowNodeKind { kJob, kDecision, kWorkflow };
enum class WorkflowOverlap { kSkip, kQueue, kParallel };
// "skip", "queue" or "parallel": the setting's name in the YAML.
std::string_view WorkflowOverlapName(WorkflowOverlap overlap);

struct WorkflowNode {
  std::string id;
  WorkflowNodeKind kind = WorkflowNodeKind::kJob;
  std::string job;                   // kJob: the job it runs
  std::optional<std::string> param;  // kJob: the job parameter of its run
  std::string expression;            // kDecision: a Lua expression over `ctx`
  std::string workflow;              // kWorkflow: the nested workflow's name
  bool allow_failure = false;        // a failure does not fail the instance
  bool disabled = false;             // SKIPPED; its successors run as if it succeeded
  int retries = 0;                   // runs after a failed one before it counts as failed
  int retry_interval_seconds = 0;

  friend bool operator==(const WorkflowNode&, const WorkflowNode&) = default;
};

struct WorkflowEdge {
  std::string from;
  std::string to;
  // From a decision node: the edge runs when the expression's value (as text: "true",
  // "false", or a string) equals it. Unset: it always runs.
  std::optional<std::string> when;

  friend bool operator==(const WorkflowEdge&, const WorkflowEdge&) = default;
};

struct WorkflowDefinition {
  std::string name;
  std::optional<std::string> cron;       // Quartz cron; unset: on demand only
  std::optional<std::string> time_zone;  // of the cron; unset: the system's
  std::string description;
  int64_t max_run_time_seconds = 0;  // 0: no limit
  WorkflowOverlap overlap = WorkflowOverlap::kSkip;
  int max_concurrent = 0;  // kParallel: instances running at once, 0: no bound
  int retention = 20;      // finished instances kept, >= 1
  std::vector<WorkflowNode> nodes;
  std::vector<WorkflowEdge> edges;

  const WorkflowNode* FindNode(std::string_view id) const;
  friend bool operator==(const WorkflowDefinition&, const WorkflowDefinition&) = default;
};

// Reads a definition. Fails with INVALID_ARGUMENT naming the key and the value (an unknown
// kind, a negative retry count, ...). Unknown keys are ignored. Does not check the graph:
// see ValidateWorkflow.
Result<WorkflowDefinition> WorkflowFromYaml(std::string_view yaml);
// The YAML WorkflowFromYaml reads back to an equal definition.
std::string WorkflowToYaml(const WorkflowDefinition& definition);

// What ValidateWorkflow asks about the namespace: NOT_FOUND when `job` does not exist,
// FAILED_PRECONDITION when it is disabled, OK when it may be a node.
using WorkflowJobCheck = std::function<Status(std::string_view job)>;

// Checks the graph: a name (no '/'), at least one node, unique node ids, each kind's
// fields, edges naming existing nodes (a dangling edge names its missing end), no cycle
// (named by its nodes), a cron and zone that parse, and, when `check_job` is given, each job
// node's job (an unknown or disabled job names the node). INVALID_ARGUMENT naming the node
// on any failure (FAILED_PRECONDITION for a disabled job, NOT_FOUND for an unknown one).
Status ValidateWorkflow(const WorkflowDefinition& definition,
                        const WorkflowJobCheck& check_job = nullptr);

}  // namespace elasticjob

#endif  // ELASTICJOB_WORKFLOW_WORKFLOW_DEFINITION_H_
