// The status traces of one execution (one item run), worked out from the tracing database's
// rows (docs/console.md, "An execution's status traces").
//
// ElasticJob's task id (`job@-@items@-@READY@-@ip@-@pid`) is the same for every trigger of the
// same items on one instance, so JOB_STATUS_TRACE_LOG's rows of a task id are the steps of
// every pass it ever ran. One pass is: TASK_STAGING, TASK_RUNNING (again for a misfire
// re-run), then TASK_FINISHED or TASK_ERROR once all its items ended. An execution's pass is
// the one whose TASK_STAGING is the last at or before the execution's start, and it ends with
// the first TASK_FINISHED / TASK_ERROR at or after the execution's completion. A misfire
// notice (TASK_STAGING then TASK_FINISHED "Previous job ... is still running") posted while
// the pass ran belongs to another trigger and is left out.
//
// Thread safety: the functions are stateless.
#ifndef ELASTICJOB_CONSOLE_EXECUTION_TRACES_H_
#define ELASTICJOB_CONSOLE_EXECUTION_TRACES_H_

#include <optional>
#include <string>
#include <vector>

#include "elasticjob/status.h"
#include "elasticjob/tracing/job_event.h"
#include "elasticjob/tracing/trace_reader.h"

namespace elasticjob::console {

// The rows of `rows` (the execution's task id, any order) that belong to the pass of
// `execution`, oldest first.
std::vector<JobStatusTraceEvent> PassTraces(const JobExecutionEvent& execution,
                                            std::vector<JobStatusTraceEvent> rows);

// Reads the rows around `execution` (its task id, before its start, then in widening
// windows after it until the pass's end is found) and returns PassTraces of them.
Result<std::vector<JobStatusTraceEvent>> ReadPassTraces(TraceReader& reader,
                                                        const JobExecutionEvent& execution,
                                                        Clock::WallTime now);

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_EXECUTION_TRACES_H_
