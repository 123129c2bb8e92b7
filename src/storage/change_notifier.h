// ChangeNotifier: lets a thread wait until a condition on the registry holds, waking on the
// job's watch events instead of sleeping in a poll loop (ElasticJob sleeps 100 ms per round
// while waiting for sharding or running items).
//
// The runtime calls Notify() from the job's Watch callback; waiters re-check their
// condition (a cheap cache read) each time something under the job changed.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_STORAGE_CHANGE_NOTIFIER_H_
#define ELASTICJOB_STORAGE_CHANGE_NOTIFIER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::storage {

class ChangeNotifier {
 public:
  // Something changed: wake every waiter to re-check.
  void Notify();
  // Stops all waits (shutdown): WaitUntil returns CANCELLED.
  void Cancel();

  // Returns OK once `condition` returns true (checked now and after every Notify),
  // CANCELLED after Cancel(), TIMEOUT after `timeout`; a condition that fails with an error
  // returns that error.
  Status WaitUntil(const std::function<Result<bool>()>& condition,
                   std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t epoch_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  bool cancelled_ ELASTICJOB_GUARDED_BY(mu_) = false;
};

}  // namespace elasticjob::storage

#endif  // ELASTICJOB_STORAGE_CHANGE_NOTIFIER_H_
