#include "storage/change_notifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <optional>

#include "elasticjob/simulated_clock.h"

namespace elasticjob::storage {
namespace {

using namespace std::chrono_literals;

// Collects the one `done` call of a WhenTrue.
class Outcome {
 public:
  std::function<void(Status)> Callback() {
    return [this](Status s) {
      std::lock_guard<std::mutex> l(mu_);
      EXPECT_FALSE(status_.has_value()) << "done called twice";
      status_ = std::move(s);
      cv_.notify_all();
    };
  }
  std::optional<Status> Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, 20s, [&] { return status_.has_value(); });
    return status_;
  }
  std::optional<Status> Now() {
    std::lock_guard<std::mutex> l(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Status> status_;
};

class ChangeNotifierTest : public ::testing::Test {
 protected:
  SimulatedClock clock_{Clock::WallTime{} + 1'795'305'600s};
  ThreadPool pool_{2};
  trigger::TimerScheduler timer_{clock_, pool_};
  ChangeNotifier notifier_{pool_, timer_, clock_};
};

TEST_F(ChangeNotifierTest, AConditionThatHoldsEndsAtOnceOnTheCallersThread) {
  Outcome out;
  notifier_.WhenTrue([] { return Result<bool>(true); }, 1s, "x", out.Callback());
  ASSERT_TRUE(out.Now().has_value());
  EXPECT_TRUE(out.Now()->ok());
  EXPECT_EQ(timer_.pending(), 0u);  // no timer armed for it
}

TEST_F(ChangeNotifierTest, AWaitEndsOnTheNotifyAfterWhichItsConditionHolds) {
  std::atomic<int> value{0};
  std::atomic<int> attempts{0};
  Outcome out;
  notifier_.WhenTrue(
      [&] {
        ++attempts;
        return Result<bool>(value.load() >= 2);
      },
      60s, "x", out.Callback());
  EXPECT_FALSE(out.Now().has_value());
  value = 1;
  notifier_.Notify();
  value = 2;
  notifier_.Notify();
  auto s = out.Wait();
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->ok()) << *s;
  EXPECT_GE(attempts.load(), 2);
}

TEST_F(ChangeNotifierTest, AWaitTimesOutOnTheInjectedClockNamingWhatItWaitedFor) {
  Outcome out;
  notifier_.WhenTrue([] { return Result<bool>(false); }, 30s, "waiting for the leader",
                     out.Callback());
  clock_.Advance(29s);
  notifier_.Notify();  // still false
  EXPECT_FALSE(out.Now().has_value() && out.Now()->code() == StatusCode::kTimeout);
  clock_.Advance(1s);
  auto s = out.Wait();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->code(), StatusCode::kTimeout);
  EXPECT_NE(s->ToString().find("waiting for the leader"), std::string::npos) << *s;
}

TEST_F(ChangeNotifierTest, AnAttemptErrorEndsTheWaitWithIt) {
  std::atomic<bool> broken{false};
  Outcome out;
  notifier_.WhenTrue(
      [&]() -> Result<bool> {
        if (broken) return Status(StatusCode::kUnavailable, "registry down");
        return false;
      },
      60s, "x", out.Callback());
  broken = true;
  notifier_.Notify();
  auto s = out.Wait();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->code(), StatusCode::kUnavailable);
}

TEST_F(ChangeNotifierTest, CancelEndsEveryWaitAndLaterOnesAtOnce) {
  Outcome a, b;
  notifier_.WhenTrue([] { return Result<bool>(false); }, 60s, "x", a.Callback());
  notifier_.Cancel();
  ASSERT_TRUE(a.Wait().has_value());
  EXPECT_EQ(a.Now()->code(), StatusCode::kCancelled);
  notifier_.WhenTrue([] { return Result<bool>(false); }, 60s, "x", b.Callback());
  ASSERT_TRUE(b.Now().has_value());
  EXPECT_EQ(b.Now()->code(), StatusCode::kCancelled);
}

TEST_F(ChangeNotifierTest, AttemptsOfOneWaitNeverOverlap) {
  std::atomic<int> inside{0};
  std::atomic<int> overlap{0};
  std::atomic<int> runs{0};
  Outcome out;
  notifier_.WhenTrue(
      [&] {
        if (inside.fetch_add(1) != 0) ++overlap;
        int n = ++runs;
        inside.fetch_sub(1);
        return Result<bool>(n >= 50);
      },
      60s, "x", out.Callback());
  for (int i = 0; i < 200 && !out.Now().has_value(); ++i) notifier_.Notify();
  // A Notify during an attempt asks for one more: the wait keeps going until 50 attempts.
  while (!out.Now().has_value()) notifier_.Notify();
  ASSERT_TRUE(out.Wait()->ok());
  EXPECT_EQ(overlap.load(), 0);
}

}  // namespace
}  // namespace elasticjob::storage
