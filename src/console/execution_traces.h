// The status traces of one execution (one item run) and the latest runs of each job, both
// worked out from the tracing database's rows (docs/console.md, "Executions and their traces").
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
// Thread safety: the functions are stateless; LastRuns is a plain value (its owner locks).
#ifndef ELASTICJOB_CONSOLE_EXECUTION_TRACES_H_
#define ELASTICJOB_CONSOLE_EXECUTION_TRACES_H_

#include <map>
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

// Each job's latest execution of each item, from the rows merged so far.
class LastRuns {
 public:
  struct Summary {
    JobExecutionEvent latest;  // the newest start over the job's items (it may be running)
    bool failing = false;      // the latest finished run of one of its items failed
  };

  // Keeps, for each job and item, the newest execution and the newest finished one; a row
  // with the id of one kept replaces it (a run that ended since).
  void Merge(const std::vector<JobExecutionEvent>& rows);
  // The job's items below `sharding_total_count` (items of a larger count before are left
  // out); nullopt when none of them has an execution.
  std::optional<Summary> Of(const std::string& job, int sharding_total_count) const;
  // The ids of the kept executions still running (to be read again: they may end after the
  // newest rows have moved past them).
  std::vector<std::string> Unfinished() const;
  // The host name the newest execution from `ip` gave, or "".
  std::string HostnameOf(const std::string& ip) const;

 private:
  struct Item {
    std::optional<JobExecutionEvent> latest;
    std::optional<JobExecutionEvent> finished;
  };
  std::map<std::string, std::map<int, Item>> jobs_;
  std::map<std::string, std::pair<Clock::WallTime, std::string>> hostnames_;  // ip -> (start, name)
};

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_EXECUTION_TRACES_H_
