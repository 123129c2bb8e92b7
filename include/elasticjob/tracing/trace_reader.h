// TraceReader: reads back what a Tracer wrote (the `elasticjob trace` commands and the web
// console use it): item runs, trigger steps and an execution's log lines, newest first
// (log lines in order).
//
// Thread safety: not safe for concurrent use (one database connection); open one per thread.
//
//   auto reader = elasticjob::TraceReader::Open("sqlite:///tmp/events.db");
//   elasticjob::ExecutionQuery q;
//   q.job_name = "orderSync";
//   q.failed_only = true;
//   auto runs = (*reader)->Executions(q);
#ifndef ELASTICJOB_TRACING_TRACE_READER_H_
#define ELASTICJOB_TRACING_TRACE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/status.h"
#include "elasticjob/tracing/job_event.h"

namespace elasticjob {

// Filters of Executions; unset ones match everything.
struct ExecutionQuery {
  std::optional<std::string> job_name;
  std::optional<int> sharding_item;
  std::optional<Clock::WallTime> since;  // start_time >= since
  std::optional<Clock::WallTime> until;  // start_time < until
  bool failed_only = false;              // completed and not successful
  size_t limit = 100;                    // rows at most (a page)
  size_t offset = 0;                     // rows skipped first (the next page: offset + limit)
};

// Filters of StatusTraces; unset ones match everything.
struct StatusQuery {
  std::optional<std::string> job_name;
  std::optional<std::string> task_id;
  std::optional<Clock::WallTime> since;  // creation_time >= since
  std::optional<Clock::WallTime> until;  // creation_time < until
  size_t limit = 100;
  size_t offset = 0;
};

class TraceReader {
 public:
  // Connects to the database at `url` (see Tracer). INVALID_ARGUMENT for a bad URL,
  // UNAVAILABLE with the database's reason when it cannot be reached (a missing SQLite file
  // included: nothing is created).
  static Result<std::unique_ptr<TraceReader>> Open(const std::string& url);
  virtual ~TraceReader() = default;

  // Item runs, the newest start first.
  virtual Result<std::vector<JobExecutionEvent>> Executions(const ExecutionQuery& query) = 0;
  // Trigger steps, the newest first.
  virtual Result<std::vector<JobStatusTraceEvent>> StatusTraces(const StatusQuery& query) = 0;
  // The log lines of execution `execution_id` numbered above `after_line`, in order, at most
  // `limit` of them (the next page, or what came since, with after_line = the last one's).
  virtual Result<std::vector<JobLogLine>> LogLines(const std::string& execution_id,
                                                   int64_t after_line = 0,
                                                   size_t limit = 10000) = 0;
  // The execution `execution_id`, or NOT_FOUND.
  virtual Result<JobExecutionEvent> Execution(const std::string& execution_id) = 0;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_TRACING_TRACE_READER_H_
