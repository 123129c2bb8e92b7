// Stress tests of the executors on real threads and real time: they let workers fall
// asleep between bursts (which takes time, not a simulated clock), so they live here, not in
// the unit tests.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "elasticjob/executor.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

// Bursts posted to idle workers: a worker woken for a task that another worker took first
// must count as idle again. (It once stayed "spoken for"; after a few such races every
// worker slept while the pool believed they were all on their way, and a burst posted then
// waited for good.)
TEST(ThreadPoolTest, ABurstPostedToSleepingWorkersAlwaysRuns) {
  ThreadPool pool(3);
  std::mutex mu;
  std::condition_variable cv;
  int left = 0;  // guarded by mu
  for (int round = 0; round < 3000; ++round) {
    {
      std::lock_guard<std::mutex> l(mu);
      left = 8;
    }
    for (int i = 0; i < 8; ++i) {
      pool.Post([&] {
        std::lock_guard<std::mutex> l(mu);
        if (--left == 0) cv.notify_all();
      });
    }
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, 10s, [&] { return left == 0; }))
        << "round " << round << ": " << left << " of 8 tasks never ran";
    l.unlock();
    // Long enough for the workers to stop lingering and go to sleep before the next burst.
    if (round % 4 == 0) std::this_thread::sleep_for(200us);
  }
}

}  // namespace
}  // namespace elasticjob
