// Stress tests of the executors on real threads and real time: they let workers fall
// asleep between bursts (which takes time, not a simulated clock), so they live here, not in
// the unit tests.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "elasticjob/executor.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

// Counts tasks down; the test waits for none to be left.
class CountDown {
 public:
  void Reset(int n) {
    std::lock_guard<std::mutex> l(mu_);
    left_ = n;
  }
  std::function<void()> Task() {
    return [this] {
      std::lock_guard<std::mutex> l(mu_);
      if (--left_ == 0) cv_.notify_all();
    };
  }
  // The tasks left after waiting (up to 10 s) for none to be.
  int Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, 10s, [&] { return left_ == 0; });
    return left_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int left_ = 0;
};

// Bursts posted to idle workers: a worker woken for a task that another worker took first
// must count as idle again. (It once stayed "spoken for"; after a few such races every
// worker slept while the pool believed they were all on their way, and a burst posted then
// waited for good.)
TEST(ThreadPoolTest, ABurstPostedToSleepingWorkersAlwaysRuns) {
  ThreadPool pool(3);
  CountDown count;
  for (int round = 0; round < 3000; ++round) {
    count.Reset(8);
    for (int i = 0; i < 8; ++i) pool.Post(count.Task());
    ASSERT_EQ(count.Wait(), 0) << "round " << round << ": tasks never ran";
    // Long enough for the workers to stop lingering and go to sleep before the next burst.
    if (round % 4 == 0) std::this_thread::sleep_for(200us);
  }
}

// KeepAwake rousing sleeping workers while tasks are posted to them (the timer's standby
// before a fire time, then the fire's tasks). A worker woken both to stand by and for a task
// wakes once: it once used up only one of the two counts, the other stayed behind as a
// "spoken for" worker that was asleep, and at the pool's bound a task posted then waited for
// good.
TEST(ThreadPoolTest, TasksPostedWhileKeepAwakeRousesSleepingWorkersAlwaysRun) {
  ThreadPool pool(2);
  CountDown count;
  for (int round = 0; round < 3000; ++round) {
    count.Reset(3);
    pool.KeepAwake(2, std::chrono::steady_clock::now());
    for (int i = 0; i < 3; ++i) pool.Post(count.Task());
    ASSERT_EQ(count.Wait(), 0) << "round " << round << ": tasks never ran";
    // Long enough for the workers to stop lingering and go to sleep before the next round.
    if (round % 2 == 0) std::this_thread::sleep_for(200us);
  }
}

}  // namespace
}  // namespace elasticjob
