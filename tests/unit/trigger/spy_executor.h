// SpyExecutor: forwards to another executor and notes the standby threads asked for
// (KeepAwake) before each hand-off of due tasks (PostUrgentAll), and when it came. For the
// timer's and the launch board's real-clock tests.
#ifndef ELASTICJOB_TESTS_UNIT_TRIGGER_SPY_EXECUTOR_H_
#define ELASTICJOB_TESTS_UNIT_TRIGGER_SPY_EXECUTOR_H_

#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/executor.h"

namespace elasticjob::trigger {

class SpyExecutor final : public Executor {
 public:
  explicit SpyExecutor(Executor& target) : target_(target) {}
  void Post(std::function<void()> task) override { target_.Post(std::move(task)); }
  void PostUrgent(std::function<void()> task) override { target_.PostUrgent(std::move(task)); }
  void KeepAwake(int threads, std::chrono::steady_clock::time_point until) override {
    {
      std::lock_guard<std::mutex> l(mu);
      standby_threads += threads;
    }
    target_.KeepAwake(threads, until);
  }
  void PostUrgentAll(std::vector<std::function<void()>> tasks) override {
    {
      std::lock_guard<std::mutex> l(mu);
      handed_over.emplace_back(standby_threads, Clock::System().WallNow());
      cv.notify_all();
    }
    target_.PostUrgentAll(std::move(tasks));
  }
  std::mutex mu;
  std::condition_variable cv;
  int standby_threads = 0;
  // For each hand-off of due tasks: the standby threads asked for before it, and when it came.
  std::vector<std::pair<int, Clock::WallTime>> handed_over;

 private:
  Executor& target_;
};

}  // namespace elasticjob::trigger

#endif  // ELASTICJOB_TESTS_UNIT_TRIGGER_SPY_EXECUTOR_H_
