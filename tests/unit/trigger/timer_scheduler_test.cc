#include "trigger/timer_scheduler.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <vector>

#include "unit/trigger/spy_executor.h"

namespace elasticjob::trigger {
namespace {

using std::chrono::seconds;

// Runs tasks on the posting thread... of the scheduler: a recording executor.
class RecordingExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override {
    task();
    std::lock_guard<std::mutex> l(mu);
    ++ran;
    cv.notify_all();
  }
  bool WaitFor(int n) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, seconds(10), [&] { return ran >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  int ran = 0;
};

TEST(TimerSchedulerTest, FiresInDueOrderAsSimulatedTimeAdvances) {
  SimulatedClock clock(Clock::WallTime{} + seconds(100));
  RecordingExecutor exec;
  TimerScheduler timer(clock, exec);
  std::vector<int> order;
  std::mutex mu;
  auto record = [&](int v) {
    return [&, v] {
      std::lock_guard<std::mutex> l(mu);
      order.push_back(v);
    };
  };
  timer.ScheduleAt(Clock::WallTime{} + seconds(103), record(3));
  timer.ScheduleAt(Clock::WallTime{} + seconds(101), record(1));
  timer.ScheduleAt(Clock::WallTime{} + seconds(102), record(2));
  clock.Advance(seconds(1));
  ASSERT_TRUE(exec.WaitFor(1));
  clock.Advance(seconds(5));
  ASSERT_TRUE(exec.WaitFor(3));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(TimerSchedulerTest, NothingFiresBeforeItsTime) {
  SimulatedClock clock(Clock::WallTime{} + seconds(100));
  RecordingExecutor exec;
  TimerScheduler timer(clock, exec);
  timer.ScheduleAt(Clock::WallTime{} + seconds(110), [] {});
  timer.ScheduleAt(Clock::WallTime{} + seconds(100), [] {});  // due now
  ASSERT_TRUE(exec.WaitFor(1));
  clock.Advance(seconds(9));
  EXPECT_EQ(timer.pending(), 1u);
  clock.Advance(seconds(1));
  ASSERT_TRUE(exec.WaitFor(2));
  EXPECT_EQ(timer.pending(), 0u);
}

TEST(TimerSchedulerTest, CancelledTasksNeverRun) {
  SimulatedClock clock(Clock::WallTime{} + seconds(100));
  RecordingExecutor exec;
  TimerScheduler timer(clock, exec);
  bool ran = false;
  auto id = timer.ScheduleAt(Clock::WallTime{} + seconds(105), [&] { ran = true; });
  EXPECT_TRUE(timer.Cancel(id));
  EXPECT_FALSE(timer.Cancel(id));
  timer.ScheduleAt(Clock::WallTime{} + seconds(106), [] {});
  clock.Advance(seconds(10));
  ASSERT_TRUE(exec.WaitFor(1));
  EXPECT_FALSE(ran);
}

TEST(TimerSchedulerTest, RealClockFiresSoon) {
  ThreadPool pool(1);
  TimerScheduler timer(Clock::System(), pool);
  std::promise<void> fired;
  timer.ScheduleAt(Clock::System().WallNow() + std::chrono::milliseconds(20),
                   [&] { fired.set_value(); });
  EXPECT_EQ(fired.get_future().wait_for(seconds(10)), std::future_status::ready);
}

// After a sleep the timer wakes early and has `standby` executor threads waiting with it:
// they are asked for before the due tasks, which are never handed over early.
TEST(TimerSchedulerTest, RealClockHasStandbyThreadsWaitingAtTheDueTime) {
  ThreadPool pool(3);
  SpyExecutor spy(pool);
  // Woken 150 ms early (200 µs in production): a loaded machine may wake a thread late, and
  // one woken after the due time hands the task over with nobody standing by (the test
  // suite's other processes delayed a 20 ms wake that long under load).
  TimerScheduler timer(Clock::System(), spy, /*standby=*/2, std::chrono::milliseconds(150));
  for (int round = 1; round <= 3; ++round) {
    const Clock::WallTime due = Clock::System().WallNow() + std::chrono::milliseconds(300);
    std::promise<void> ran;
    timer.ScheduleAt(due, [&] { ran.set_value(); });
    ASSERT_EQ(ran.get_future().wait_for(seconds(10)), std::future_status::ready);
    std::lock_guard<std::mutex> l(spy.mu);
    ASSERT_EQ(spy.handed_over.size(), static_cast<size_t>(round));
    EXPECT_EQ(spy.handed_over.back().first, 2 * round);  // two standby threads each time
    EXPECT_GE(spy.handed_over.back().second, due);
  }
  // A task may ask for its own number (a LaunchBoard's launch: one).
  const Clock::WallTime due = Clock::System().WallNow() + std::chrono::milliseconds(300);
  std::promise<void> ran;
  timer.ScheduleAt(
      due, [&] { ran.set_value(); }, nullptr, /*standby=*/1);
  ASSERT_EQ(ran.get_future().wait_for(seconds(10)), std::future_status::ready);
  std::lock_guard<std::mutex> l(spy.mu);
  ASSERT_EQ(spy.handed_over.size(), 4u);
  EXPECT_EQ(spy.handed_over.back().first, 2 * 3 + 1);
}

// A task's standby may change until it is handed over (a launch board's batch that grew).
TEST(TimerSchedulerTest, AStandbyChangedBeforeTheDueTimeIsTheOneAskedFor) {
  ThreadPool pool(3);
  SpyExecutor spy(pool);
  TimerScheduler timer(Clock::System(), spy, /*standby=*/0, std::chrono::milliseconds(150));
  const Clock::WallTime due = Clock::System().WallNow() + std::chrono::milliseconds(300);
  std::promise<void> ran;
  const auto id = timer.ScheduleAt(
      due, [&] { ran.set_value(); }, nullptr, /*standby=*/1);
  EXPECT_TRUE(timer.SetStandby(id, 2));
  ASSERT_EQ(ran.get_future().wait_for(seconds(10)), std::future_status::ready);
  {
    std::lock_guard<std::mutex> l(spy.mu);
    ASSERT_EQ(spy.handed_over.size(), 1u);
    EXPECT_EQ(spy.handed_over.back().first, 2);
  }
  EXPECT_FALSE(timer.SetStandby(id, 1));  // handed over: nothing to change
}

// A relaxed task (work ahead of a fire time, a timeout) has nobody waiting on the CPU for
// it, not even with a scheduler whose tasks have standby threads; it still runs, never early.
TEST(TimerSchedulerTest, ARelaxedTaskHasNoStandbyThreadsAndRunsNoEarlierThanItsTime) {
  ThreadPool pool(3);
  SpyExecutor spy(pool);
  TimerScheduler timer(Clock::System(), spy, /*standby=*/2, std::chrono::milliseconds(150));
  const Clock::WallTime due = Clock::System().WallNow() + std::chrono::milliseconds(300);
  std::promise<Clock::WallTime> ran;
  timer.ScheduleAt(
      due, [&] { ran.set_value(Clock::System().WallNow()); }, nullptr, TimerScheduler::kRelaxed);
  auto at = ran.get_future();
  ASSERT_EQ(at.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_GE(at.get(), due);
  std::lock_guard<std::mutex> l(spy.mu);
  ASSERT_EQ(spy.handed_over.size(), 1u);
  EXPECT_EQ(spy.handed_over.back().first, 0);  // no thread was kept awake for it
}

}  // namespace
}  // namespace elasticjob::trigger
