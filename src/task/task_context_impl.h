// TaskContextImpl: the TaskContext handed to user code; Map goes to a sink (the
// coordinator's store for the root task, the RPC reply for a sub-task on a worker).
//
// Thread safety: none (one per task call).
#ifndef ELASTICJOB_TASK_TASK_CONTEXT_IMPL_H_
#define ELASTICJOB_TASK_TASK_CONTEXT_IMPL_H_

#include <functional>
#include <string>
#include <vector>

#include "elasticjob/api/task_job.h"
#include "task/task_settings.h"

namespace elasticjob::task {

class TaskContextImpl final : public TaskContext {
 public:
  using Sink = std::function<Status(std::vector<Subtask>, std::string_view)>;

  const std::string& job_name() const override { return job_name_; }
  const std::string& job_parameter() const override { return job_parameter_; }
  const std::string& run_id() const override { return run_id_; }
  uint64_t task_id() const override { return task_id_; }
  const std::string& task_name() const override { return task_name_; }
  const std::string& payload() const override { return payload_; }
  int attempt() const override { return attempt_; }
  const std::string& instance_id() const override { return instance_id_; }
  WorkflowNodeRun* workflow() const override { return workflow_; }
  Status Map(std::vector<Subtask> subtasks, std::string_view name) override {
    if (!sink_) return FailedPrecondition("Map: this task cannot map (a broadcast job's task)");
    if (Status s = ValidateMap(subtasks, name, max_payload_bytes_); !s.ok()) return s;
    return sink_(std::move(subtasks), name);
  }

  std::string job_name_;
  std::string job_parameter_;
  std::string run_id_;
  uint64_t task_id_ = 0;
  std::string task_name_;
  std::string payload_;
  int attempt_ = 1;
  std::string instance_id_;
  size_t max_payload_bytes_ = 0;
  Sink sink_;                            // empty: Map fails
  WorkflowNodeRun* workflow_ = nullptr;  // the run's workflow node (leader calls only)
};

// Runs user code, turning an exception into a failed result.
template <typename Fn>
TaskResult CallFenced(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return TaskResult{false, std::string("threw: ") + e.what()};
  } catch (...) {
    return TaskResult{false, "threw an unknown exception"};
  }
}

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_TASK_CONTEXT_IMPL_H_
