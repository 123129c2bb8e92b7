// WorkflowNode paths: where workflows live in the registry (docs/workflows.md "Registry
// layout"), a subtree Java ElasticJob ignores. Builds paths and nothing else.
#ifndef ELASTICJOB_WORKFLOW_WORKFLOW_NODE_H_
#define ELASTICJOB_WORKFLOW_WORKFLOW_NODE_H_

#include <string>
#include <string_view>

namespace elasticjob::workflow {

inline constexpr std::string_view kRoot = "/.workflows";
// The trigger value of a workflow node's run starts with this, then the envelope's JSON.
inline constexpr std::string_view kEnvelopePrefix = "@elasticjob-workflow:";
// A trigger value that cancels a node's run on that instance (a stopped workflow instance):
// this, then the envelope's JSON (workflow, instance, node, attempt). Sent only to runners
// whose run mark shows a C++ instance at work.
inline constexpr std::string_view kCancelPrefix = "@elasticjob-workflow-cancel:";

// A node's run requests, one per job instance that is to run it: `/{job}/workflowRuns/
// {jobInstanceId}#{workflowInstance}#{node}#{attempt}` (persistent; value: the envelope, or a
// cancel). The instance named takes its request with one multi-op that deletes it and creates
// its run mark, so it runs once; requests do not replace each other (the operator trigger
// `/{job}/trigger/{id}` would), so one job runs for many workflow instances and nodes.
inline constexpr std::string_view kRunRequestsRoot = "workflowRuns";
inline constexpr char kRunRequestSeparator = '#';

inline std::string RunRequestsPath(std::string_view job) {
  return "/" + std::string(job) + "/" + std::string(kRunRequestsRoot);
}
inline std::string RunRequestName(std::string_view job_instance, std::string_view instance,
                                  std::string_view node, int attempt) {
  std::string name(job_instance);
  for (std::string_view part : {instance, node}) {
    name += kRunRequestSeparator;
    name += part;
  }
  name += kRunRequestSeparator;
  name += std::to_string(attempt);
  return name;
}
// The job instance a request is for: the text before the first separator.
inline std::string_view RunRequestRunner(std::string_view name) {
  return name.substr(0, name.find(kRunRequestSeparator));
}

inline std::string WorkflowPath(std::string_view name) {
  return std::string(kRoot) + "/" + std::string(name);
}
inline std::string DefinitionPath(std::string_view name) {
  return WorkflowPath(name) + "/definition";
}
inline std::string LeaderPath(std::string_view name) { return WorkflowPath(name) + "/leader"; }
// The leader's term: `terms/{coordinatorId}#{n}`, created with the leader node, deleted by
// the next leader as it takes over; each step's multi-op checks that its own is still there.
inline std::string TermsPath(std::string_view name) { return WorkflowPath(name) + "/terms"; }
inline std::string InstancesPath(std::string_view name) {
  return WorkflowPath(name) + "/instances";
}
// Instance ids are `{name}-{10 digits}`: the sequential child of instances/.
inline std::string InstancePath(std::string_view name, std::string_view id) {
  return InstancesPath(name) + "/" + std::string(id);
}
inline std::string StatePath(std::string_view name, std::string_view id) {
  return InstancePath(name, id) + "/state";
}
inline std::string OpsPath(std::string_view name, std::string_view id) {
  return InstancePath(name, id) + "/ops";
}
inline std::string NodesPath(std::string_view name, std::string_view id) {
  return InstancePath(name, id) + "/nodes";
}
inline std::string NodePath(std::string_view name, std::string_view id, std::string_view node) {
  return NodesPath(name, id) + "/" + std::string(node);
}
// Written by the instances running a node's job: `runs/{attempt}@{jobInstance}` (ephemeral,
// while the run goes) and `reports/{attempt}@{jobInstance}` (its outcome).
inline std::string RunsPath(std::string_view name, std::string_view id, std::string_view node) {
  return NodePath(name, id, node) + "/runs";
}
inline std::string ReportsPath(std::string_view name, std::string_view id, std::string_view node) {
  return NodePath(name, id, node) + "/reports";
}
// The workflow an instance id belongs to: the text before its last '-'; empty if none.
inline std::string WorkflowOfInstance(std::string_view id) {
  size_t dash = id.rfind('-');
  return dash == std::string_view::npos ? std::string() : std::string(id.substr(0, dash));
}

}  // namespace elasticjob::workflow

#endif  // ELASTICJOB_WORKFLOW_WORKFLOW_NODE_H_
