// ChangeNotifier: lets a job wait until a condition on the registry holds, woken by the
// job's watch events instead of sleeping in a poll loop (ElasticJob sleeps 100 ms per round
// while waiting for sharding or running items).
//
// The runtime calls Notify() from the job's Watch callback. Two ways to wait:
//   WaitUntil  blocks the calling thread; the condition is re-checked after every Notify;
//   WhenTrue   holds no thread: `attempt` runs at once on the caller's thread, then again on
//              the executor after each Notify (never two at once) until it holds, fails or
//              times out (on the shared timer, so a SimulatedClock drives it), and `done`
//              is called once. A trigger waiting for its leader's sharding this way leaves
//              the trigger pool free for every other job of the process.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_STORAGE_CHANGE_NOTIFIER_H_
#define ELASTICJOB_STORAGE_CHANGE_NOTIFIER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "elasticjob/clock.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"
#include "trigger/timer_scheduler.h"

namespace elasticjob::storage {

class ChangeNotifier {
 public:
  // Blocking waits only; WhenTrue blocks too (WaitUntil, then `done`).
  ChangeNotifier() = default;
  // REQUIRES: `executor`, `timer` and `clock` outlive every wait.
  ChangeNotifier(Executor& executor, trigger::TimerScheduler& timer, Clock& clock);

  // Something changed: wake every waiter to re-check.
  void Notify();
  // Stops all waits (shutdown): they end with CANCELLED, and later ones at once.
  void Cancel();

  // Returns OK once `condition` returns true (checked now and after every Notify),
  // CANCELLED after Cancel(), TIMEOUT after `timeout`; a condition that fails with an error
  // returns that error.
  Status WaitUntil(const std::function<Result<bool>()>& condition,
                   std::chrono::milliseconds timeout);

  // See above. `done` gets OK, the attempt's error, CANCELLED, or TIMEOUT naming `what`.
  void WhenTrue(std::function<Result<bool>()> attempt, std::chrono::milliseconds timeout,
                std::string what, std::function<void(Status)> done);

 private:
  struct Async;

  Mutex mu_;
  CondVar cv_{&mu_};
  uint64_t epoch_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  bool cancelled_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::shared_ptr<Async> async_;  // set by the second constructor; tasks hold it
};

}  // namespace elasticjob::storage

#endif  // ELASTICJOB_STORAGE_CHANGE_NOTIFIER_H_
