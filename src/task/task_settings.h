// TaskSettings: a task job's knobs, read from its configuration's props
// (docs/task-models.md): task.max.attempts, task.batch.size, task.max.inflight.batches,
// task.max.payload.bytes, task.rpc.deadline.ms.
//
// Thread safety: value type.
#ifndef ELASTICJOB_TASK_TASK_SETTINGS_H_
#define ELASTICJOB_TASK_TASK_SETTINGS_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/task_job.h"
#include "elasticjob/status.h"

namespace elasticjob::task {

struct TaskSettings {
  int max_attempts = 3;                // dispatches of a sub-task before it is reported failed
  int batch_size = 1000;               // sub-tasks per RPC
  int max_inflight_batches = 2;        // RPCs in flight per worker: the backpressure bound
  size_t max_payload_bytes = 1 << 20;  // a sub-task's payload, and a result's bytes
  // How long one RPC (a batch, a broadcast's Process) may go unanswered before its worker is
  // given up on for the run and its sub-tasks sent to the others; 0: no deadline.
  long rpc_deadline_ms = 0;

  // The props' values over the defaults. INVALID_ARGUMENT naming the prop and the value.
  static Result<TaskSettings> FromProps(const std::map<std::string, std::string>& props);
};

// Checks a Map call: a name that is not empty nor the root's, payloads within the limit.
// INVALID_ARGUMENT naming the sub-task's index, its size and the limit.
Status ValidateMap(const std::vector<Subtask>& subtasks, std::string_view name,
                   size_t max_payload_bytes);

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_TASK_SETTINGS_H_
