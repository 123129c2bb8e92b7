#include "trigger/timer_scheduler.h"

#include <gtest/gtest.h>

#include <future>

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

}  // namespace
}  // namespace elasticjob::trigger
