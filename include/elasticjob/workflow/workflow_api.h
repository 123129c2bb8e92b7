// Workflows on a registry (docs/workflows.md): WorkflowAPI, the operations (add, remove,
// list, run, history, one instance, wait, stop, retry or mark a node), and
// WorkflowCoordinator, which every process that should be able to drive workflows runs
// (`elasticjob run` and `elasticjob agent` do): for each workflow, the one holding its
// leader node coordinates its instances; when it goes, another carries on from the registry.
//
// Thread safety: WorkflowAPI is stateless besides the borrowed registry (calls block; any
// thread). WorkflowCoordinator: Start once, then Stop; its work runs on the executor given.
//
//   auto api = elasticjob::NewWorkflowAPI(**reg);
//   auto def = elasticjob::WorkflowFromYaml(text);
//   if (Status s = api->Add(*def); !s.ok()) { ... }       // refused: the node is named
//   auto id = api->Run("diamond");                        // "diamond-0000000007"
//   auto end = api->Wait(*id, std::chrono::minutes(5));   // end->status == "SUCCEEDED"
#ifndef ELASTICJOB_WORKFLOW_WORKFLOW_API_H_
#define ELASTICJOB_WORKFLOW_WORKFLOW_API_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/executor.h"
#include "elasticjob/logger.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"
#include "elasticjob/workflow/workflow_definition.h"

namespace elasticjob {

// A node of one workflow instance. `state`: WAITING, RUNNING, SUCCEEDED, FAILED, SKIPPED.
struct WorkflowNodeStatus {
  std::string id;
  std::string state = "WAITING";
  int attempt = 0;  // runs started (retries and reruns after a lost instance included)
  std::string result;
  std::string error;
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
};

// One workflow instance. `status`: QUEUED (not started yet), RUNNING, SUCCEEDED, FAILED,
// TIMEOUT, STOPPED, SKIPPED (a trigger while another instance ran, overlap: skip).
struct WorkflowInstanceStatus {
  std::string id;  // "{workflow}-{10 digits}"
  std::string workflow;
  std::string status = "QUEUED";
  std::string trigger;  // "cron", "operator", "workflow" (nested)
  std::string message;  // why it failed, timed out, stopped or was skipped
  std::string context_json = "{}";
  int64_t created_ms = 0;
  int64_t ended_ms = 0;
  std::vector<WorkflowNodeStatus> nodes;  // in definition order
  // Operator requests (stop, retry, succeed) the coordinator has not carried out yet.
  int pending_requests = 0;

  // Ended, with no operator request pending that may start it again.
  bool finished() const {
    return status != "QUEUED" && status != "RUNNING" && pending_requests == 0;
  }
};

struct WorkflowBrief {
  std::string name;
  std::optional<std::string> cron;
  size_t nodes = 0;
  std::string coordinator;    // the instance holding the leader node; empty: none
  std::string last_instance;  // empty: never run
  std::string last_status;
};

class WorkflowAPI {
 public:
  virtual ~WorkflowAPI() = default;

  // Validates `definition` against the namespace's jobs (ValidateWorkflow: an unknown or
  // disabled job, a cycle, a dangling edge is refused naming the node) and writes it.
  // ALREADY_EXISTS when the workflow exists and `replace` is false.
  virtual Status Add(const WorkflowDefinition& definition, bool replace = false) = 0;
  // Removes the workflow and its instances. NOT_FOUND when unknown.
  virtual Status Remove(std::string_view name) = 0;
  virtual Result<std::vector<WorkflowBrief>> List() = 0;
  virtual Result<WorkflowDefinition> Get(std::string_view name) = 0;
  // Asks for an instance now (the coordinator starts it, beside the running ones with overlap
  // parallel, or queues or skips it per the overlap setting). `parameter`: the context the instance
  // starts from (a JSON object; other text becomes {"param": text}). Returns the instance id.
  virtual Result<std::string> Run(std::string_view name, std::string_view parameter = "") = 0;
  // The workflow's instances, newest first, at most `limit`.
  virtual Result<std::vector<WorkflowInstanceStatus>> History(std::string_view name,
                                                              size_t limit = 20) = 0;
  virtual Result<WorkflowInstanceStatus> Instance(std::string_view instance_id) = 0;
  // Waits (on registry watches) until the instance has finished, or `timeout`: TIMEOUT.
  virtual Result<WorkflowInstanceStatus> Wait(std::string_view instance_id,
                                              std::chrono::milliseconds timeout) = 0;
  // Operator requests, carried out by the coordinator: stop the instance (STOPPED; no node
  // starts after), run a FAILED node again, or take it as SUCCEEDED (the instance, if it
  // failed for that node, runs on). FAILED_PRECONDITION when the instance or node is not in
  // a state that allows it.
  virtual Status Stop(std::string_view instance_id) = 0;
  virtual Status RetryNode(std::string_view instance_id, std::string_view node) = 0;
  virtual Status MarkNodeSucceeded(std::string_view instance_id, std::string_view node) = 0;
};

// REQUIRES: `registry` is initialised and outlives the result.
std::unique_ptr<WorkflowAPI> NewWorkflowAPI(RegistryCenter& registry);

struct WorkflowCoordinatorOptions {
  // This process's id in leader nodes (default: "{ip}@-@{pid}" as jobs' instance ids).
  std::string instance_id;
  Clock* clock = nullptr;  // null: the system clock
  // Where the coordinator's lines go (elasticjob/logger.h); null: the process default.
  std::shared_ptr<Logger> logger = nullptr;
};

class WorkflowCoordinator {
 public:
  virtual ~WorkflowCoordinator() = default;
  // Watches the workflows' subtree, stands for leadership of every workflow and
  // coordinates those it leads. REQUIRES: called once.
  virtual Status Start() = 0;
  // Stops coordinating (the leader nodes go, so others take over). Idempotent.
  virtual void Stop() = 0;
  // The workflows this process coordinates now.
  virtual std::vector<std::string> Leading() = 0;
  // Waits until this process coordinates `name` (true), or `bound` has passed (false).
  virtual bool WaitLeading(const std::string& name, std::chrono::milliseconds bound) = 0;
};

// REQUIRES: `registry` (initialised) and `executor` outlive the result.
std::unique_ptr<WorkflowCoordinator> NewWorkflowCoordinator(RegistryCenter& registry,
                                                            Executor& executor,
                                                            WorkflowCoordinatorOptions options);

}  // namespace elasticjob

#endif  // ELASTICJOB_WORKFLOW_WORKFLOW_API_H_
