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

JobExecutionEvent ItemRun(int start, std::optional<int> complete, int item = 0,
                          bool success = true) {
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
  return {Trace(2010, TraceState::kTaskError, "{0=boom}"),
          Trace(2000, TraceState::kTaskRunning),
          Trace(2000, TraceState::kTaskStaging),
          Trace(1010, TraceState::kTaskFinished),
          Trace(1000, TraceState::kTaskRunning),
          Trace(1000, TraceState::kTaskStaging),
          Trace(10, TraceState::kTaskFinished),
          Trace(0, TraceState::kTaskRunning),
          Trace(0, TraceState::kTaskStaging)};
}

TEST(PassTracesTest, KeepsOnlyThePassOfTheExecutionAmongEveryPassOfItsTaskId) {
  auto traces = PassTraces(ItemRun(1001, 1005), ThreePasses());
  EXPECT_EQ(Ids(traces), (std::vector<std::string>{"t1000TASK_STAGING", "t1000TASK_RUNNING",
                                                   "t1010TASK_FINISHED"}));
  EXPECT_EQ(
      Ids(PassTraces(ItemRun(2001, 2008), ThreePasses())),
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
      Trace(0, TraceState::kTaskStaging),    Trace(0, TraceState::kTaskRunning),
      Trace(100, TraceState::kTaskFinished), Trace(100, TraceState::kTaskStaging),
      Trace(100, TraceState::kTaskRunning),  Trace(300, TraceState::kTaskFinished)};
  EXPECT_EQ(
      Ids(PassTraces(ItemRun(100, 250), rows)),
      (std::vector<std::string>{"t100TASK_STAGING", "t100TASK_RUNNING", "t300TASK_FINISHED"}));
}

TEST(LastRunsTest, SaysFailingWhenTheLatestFinishedRunOfAnItemFailed) {
  LastRuns runs;
  runs.Merge({ItemRun(0, 10, 0, true), ItemRun(0, 10, 1, false), ItemRun(100, 110, 0, true)});
  auto last = runs.Of("job", 2);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->latest.id, "e100-0");
  EXPECT_TRUE(last->failing);  // item 1's last run failed, though item 0's newer one passed
  runs.Merge({ItemRun(200, 210, 1, true)});
  EXPECT_FALSE(runs.Of("job", 2)->failing);
  EXPECT_FALSE(runs.Of("other", 2).has_value());
}

TEST(LastRunsTest, ARunThatEndsLaterReplacesItsRunningRow) {
  LastRuns runs;
  runs.Merge({ItemRun(0, 10, 0, false), ItemRun(100, std::nullopt, 0)});
  EXPECT_EQ(runs.Unfinished(), std::vector<std::string>{"e100-0"});
  auto running = runs.Of("job", 1);
  ASSERT_TRUE(running.has_value());
  EXPECT_FALSE(running->latest.complete_time.has_value());
  EXPECT_TRUE(running->failing);  // the last finished one failed
  runs.Merge({ItemRun(100, 150, 0, true)});
  EXPECT_TRUE(runs.Unfinished().empty());
  EXPECT_FALSE(runs.Of("job", 1)->failing);
  // An older row read again changes nothing.
  runs.Merge({ItemRun(0, 10, 0, false)});
  EXPECT_EQ(runs.Of("job", 1)->latest.id, "e100-0");
  EXPECT_FALSE(runs.Of("job", 1)->failing);
}

TEST(LastRunsTest, LeavesOutItemsBeyondTheShardingTotalCount) {
  LastRuns runs;
  runs.Merge({ItemRun(0, 10, 0, true), ItemRun(50, 60, 3, false)});
  EXPECT_FALSE(runs.Of("job", 2)->failing);
  EXPECT_EQ(runs.Of("job", 2)->latest.id, "e0-0");
  EXPECT_TRUE(runs.Of("job", 4)->failing);
}

}  // namespace
}  // namespace elasticjob::console
