// ItemLimiter: one job's share of the process's item pool. At most limit() of the job's
// items run at once (jobExecutorThreadPoolSizeProviderType: CPU = CPU x 2, SINGLE_THREAD =
// 1, as ElasticJob's per-job pools are sized); the rest wait in this job's queue, in order,
// and take no pool thread while they wait. No thread of its own: a limit on the shared pool.
// The limit can change at any time (a config update); a lower one takes effect as items end.
//
// Thread safety: safe for concurrent use. Held by shared_ptr: a task in flight keeps it.
#ifndef ELASTICJOB_BOOTSTRAP_ITEM_LIMITER_H_
#define ELASTICJOB_BOOTSTRAP_ITEM_LIMITER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::bootstrap {

// The item limit `config` asks for: jobExecutorThreadPoolSizeProviderType (ElasticJob 3.0.4's
// jobExecutorServiceHandlerType reads into the same field) unset or CPU: CPU x 2;
// SINGLE_THREAD: 1. Else INVALID_ARGUMENT naming the value and the known ones.
Result<int> ItemLimitOf(const JobConfiguration& config);

class ItemLimiter final : public Executor, public std::enable_shared_from_this<ItemLimiter> {
 public:
  // REQUIRES: `pool` outlives every task posted here; limit >= 1.
  ItemLimiter(Executor& pool, int limit) : pool_(pool), limit_(limit) {}

  // Runs `task` on the pool now if the job is below its limit, else queues it.
  void Post(std::function<void()> task) override;
  // Runs `task` on this thread now if the job is below its limit, else queues a copy of it
  // holding `keep` (for the pool). For a thread of the pool that is already there to run it
  // (a prepared launch): the start in place copies, counts and allocates nothing.
  // REQUIRES: the caller holds this limiter (a shared_ptr) until the call returns.
  void RunHereOrQueue(const std::function<void()>& task, const std::shared_ptr<const void>& keep);
  void SetLimit(int limit);
  int limit();
  // Items running now (for tests).
  int active();

 private:
  // Takes a slot if one is free and nothing waits (true), or queues `make()` (false).
  template <typename Make>
  bool Admit(const Make& make);
  // A free slot, taken without a lock: true when taken.
  bool TryTake();
  // After a task: frees its slot, then hands queued tasks to the pool while there is room.
  void Release();
  // Hands queued tasks to the pool while there is room.
  void Pump();
  std::function<void()> Wrap(std::function<void()> task);

  Executor& pool_;
  // The count and the limit are atomics: an item's start and end take no lock unless items
  // wait (sequentially consistent: a queuer's count and a releaser's slot are seen by one of
  // the two, so a queued task never waits for a slot that is free).
  std::atomic<int> limit_;
  std::atomic<int> active_{0};
  std::atomic<int> queued_count_{0};
  Mutex mu_;
  std::deque<std::function<void()>> queued_ ELASTICJOB_GUARDED_BY(mu_);
};

}  // namespace elasticjob::bootstrap

#endif  // ELASTICJOB_BOOTSTRAP_ITEM_LIMITER_H_
