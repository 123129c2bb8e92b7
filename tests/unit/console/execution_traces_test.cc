#include "console/execution_traces.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace elasticjob::console {
namespace {

using std::chrono::milliseconds;

const Clock::WallTime kT0 = Clock::WallTime(milliseconds(1'700'000'000'000));
Clock::WallTime At(int ms) { return kT0 + milliseconds(ms); }

JobStatusTraceEvent Trace(int ms, TraceState state, std::string message = "") {
  JobStatusTraceEvent t;
  t.id = "t" + std::to_string(ms) + TraceStateName(state);
  t.task_id = "job@-@0,1@-@READY@-@10.0.0.1@-@7";
  t.state = state;
  t.message = std::move(message);
  t.creation_time = At(ms);
  return t;
}

JobExecutionEvent ItemRun(int start, std::optional<int> complete, int item = 0, bool success = true) {
  JobExecutionEvent e;
  e.id = "e" + std::to_string(start) + "-" + std::to_string(item);
  e.job_name = "job";
  e.task_id = "job@-@0,1@-@READY@-@10.0.0.1@-@7";
  e.sharding_item = item;
  e.start_time = At(start);
  if (complete) e.complete_time = At(*complete);
  e.success = success;
  return e;
}

std::vector<std::string> Ids(const std::vector<JobStatusTraceEvent>& traces) {
  std::vector<std::string> ids;
  for (const auto& t : traces) ids.push_back(t.id);
  return ids;
}

// Three passes of one task id, newest first as the database returns them; STAGING and
// RUNNING of a pass share one instant.
std::vector<JobStatusTraceEvent> ThreePasses() {
  return {Trace(2010, TraceState::kTaskError, "{0=boom}"), Trace(2000, TraceState::kTaskRunning),
          Trace(2000, TraceState::kTaskStaging),           Trace(1010, TraceState::kTaskFinished),
          Trace(1000, TraceState::kTaskRunning),           Trace(1000, TraceState::kTaskStaging),
          Trace(10, TraceState::kTaskFinished),            Trace(0, TraceState::kTaskRunning),
          Trace(0, TraceState::kTaskStaging)};
}

TEST(PassTracesTest, KeepsOnlyThePassOfTheExecutionAmongEveryPassOfItsTaskId) {
  auto traces = PassTraces(ItemRun(1001, 1005), ThreePasses());
  EXPECT_EQ(Ids(traces), (std::vector<std::string>{"t1000TASK_STAGING", "t1000TASK_RUNNING",
                                                   "t1010TASK_FINISHED"}));
  EXPECT_EQ(Ids(PassTraces(ItemRun(2001, 2008), ThreePasses())),
            (std::vector<std::string>{"t2000TASK_STAGING", "t2000TASK_RUNNING", "t2010TASK_ERROR"}));
}

TEST(PassTracesTest, ARunningExecutionShowsItsPassSoFar) {
  std::vector<JobStatusTraceEvent> rows = ThreePasses();
  rows.erase(rows.begin());  // the last pass has not ended yet
  EXPECT_EQ(Ids(PassTraces(ItemRun(2001, std::nullopt), rows)),
            (std::vector<std::string>{"t2000TASK_STAGING", "t2000TASK_RUNNING"}));
}

TEST(PassTracesTest, LeavesOutAMisfireNoticePostedWhileThePassRan) {
  std::vector<JobStatusTraceEvent> rows = {
      Trace(0, TraceState::kTaskStaging), Trace(0, TraceState::kTaskRunning),
      Trace(500, TraceState::kTaskStaging),
      Trace(500, TraceState::kTaskFinished,
            "Previous job 'job' - shardingItems '[0, 1]' is still running, misfired job will "
            "start after previous job completed."),
      Trace(900, TraceState::kTaskFinished)};
  // Item 1 started late (after the notice), item 0 at once: both are the first pass's.
  for (int start : {1, 600}) {
    EXPECT_EQ(Ids(PassTraces(ItemRun(start, 800, start == 1 ? 0 : 1), rows)),
              (std::vector<std::string>{"t0TASK_STAGING", "t0TASK_RUNNING", "t900TASK_FINISHED"}))
        << start;
  }
}

TEST(PassTracesTest, SkipsAnEarlierPassEndAtTheSameInstantAsTheStart) {
  std::vector<JobStatusTraceEvent> rows = {
      Trace(0, TraceState::kTaskStaging), Trace(0, TraceState::kTaskRunning),
      Trace(100, TraceState::kTaskFinished), Trace(100, TraceState::kTaskStaging),
      Trace(100, TraceState::kTaskRunning), Trace(300, TraceState::kTaskFinished)};
  EXPECT_EQ(Ids(PassTraces(ItemRun(100, 250), rows)),
            (std::vector<std::string>{"t100TASK_STAGING", "t100TASK_RUNNING",
                                      "t300TASK_FINISHED"}));
}

}  // namespace
}  // namespace elasticjob::console
