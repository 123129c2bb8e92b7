// The events of ElasticJob's event tracing (3.0.5), as rows of its two tables, and the log
// lines of an execution (ours). docs/tracing.md describes the tables and when each event is
// posted.
//
//   JobExecutionEvent    one run of one sharding item: inserted when it starts, completed
//                        (complete_time, is_success, failure_cause) when it ends.
//                        Table JOB_EXECUTION_LOG.
//   JobStatusTraceEvent  one step of a trigger on one instance (TASK_STAGING, TASK_RUNNING,
//                        TASK_FINISHED, TASK_ERROR). Table JOB_STATUS_TRACE_LOG.
//   JobLogLine           one line a run printed. Table JOB_EXECUTION_LOG_LINE.
//
// Thread safety: plain value types.
#ifndef ELASTICJOB_TRACING_JOB_EVENT_H_
#define ELASTICJOB_TRACING_JOB_EVENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "elasticjob/api/job_log.h"
#include "elasticjob/clock.h"
#include "elasticjob/status.h"

namespace elasticjob {

// What started an item run (JOB_EXECUTION_LOG.execution_source). ElasticJob records a
// failover run as NORMAL_TRIGGER; ours says FAILOVER.
enum class ExecutionSource { kNormalTrigger, kMisfire, kFailover };

// ElasticJob's JobStatusTraceEvent.State (the Lite runtime posts the first four).
enum class TraceState {
  kTaskStaging,
  kTaskRunning,
  kTaskFinished,
  kTaskKilled,
  kTaskLost,
  kTaskFailed,
  kTaskError,
  kTaskDropped,
  kTaskGone,
  kTaskGoneByOperator,
  kTaskUnreachable,
  kTaskUnknown,
};

// "NORMAL_TRIGGER", "MISFIRE", "FAILOVER".
const char* ExecutionSourceName(ExecutionSource source);
// The source named `name` (as ExecutionSourceName writes it); INVALID_ARGUMENT otherwise.
Result<ExecutionSource> ParseExecutionSource(std::string_view name);
// "TASK_STAGING", ...
const char* TraceStateName(TraceState state);
Result<TraceState> ParseTraceState(std::string_view name);

// Tracer::Post gives an event whose id is not 36 characters (a UUID's text) a new UUID.
struct JobExecutionEvent {
  std::string id;  // a UUID, the row's key
  std::string hostname;
  std::string ip;
  std::string task_id;
  std::string job_name;
  ExecutionSource source = ExecutionSource::kNormalTrigger;
  int sharding_item = 0;
  Clock::WallTime start_time{};
  std::optional<Clock::WallTime> complete_time;  // unset while it runs
  bool success = false;
  std::string failure_cause;  // the error text when it failed (cut to 4000 characters)
};

struct JobStatusTraceEvent {
  std::string id;  // a UUID, the row's key
  std::string job_name;
  std::string original_task_id;  // "" (ElasticJob's Lite runtime writes "" too)
  std::string task_id;
  std::string slave_id;        // the task id's fourth part: the instance's IP
  std::string execution_type;  // "READY" (the task id's third part)
  std::string sharding_items;  // Java's list text: "[0, 1, 2]"
  TraceState state = TraceState::kTaskStaging;
  std::string message;
  Clock::WallTime creation_time{};
};

struct JobLogLine {
  std::string execution_id;  // JobExecutionEvent::id
  int64_t line_no = 0;       // 1, 2, ... in the order the lines were logged
  Clock::WallTime time{};
  LogLevel level = LogLevel::kInfo;
  std::string text;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_TRACING_JOB_EVENT_H_
