// Cancellation: the runtime's request that one run of a job's items stop now. It is made when
// this instance can no longer own the items it runs: its registry session expired while they
// ran, so other instances may be running the same items already (docs/runtime.md, Fencing).
// A job sees it through its ShardingContext (`context.cancelled()`), and should return soon
// after: the runtime cannot stop in-process code that does not look. SCRIPT jobs need
// nothing: their item's process group is killed at once.
//
// clang-format off
//   void Execute(const elasticjob::ShardingContext& ctx) override {
//     for (const auto& row : LoadRows(ctx.sharding_item)) {
//       if (ctx.cancelled()) return;  // another instance owns the item now
//       Process(row);
//     }
//   }
// clang-format on
//
// Thread safety: thread-safe. Request may come from any thread while the job reads
// requested(); callbacks run on the thread that requests, under the object's lock.
#ifndef ELASTICJOB_API_CANCELLATION_H_
#define ELASTICJOB_API_CANCELLATION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob {

class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Whether cancellation was requested (one atomic load).
  bool requested() const { return requested_.load(std::memory_order_acquire); }
  // Why (empty until requested).
  std::string reason() const;

  // Requests cancellation with `reason`: requested() is true from now on, and every callback
  // registered runs once, on this thread, in registration order. Later requests do nothing.
  void Request(std::string reason);

  // Requests cancellation as Request does, asking processes to end cleanly first: a SCRIPT
  // item's process group gets SIGTERM, then SIGKILL once `grace` has passed (an execution
  // timeout or an operator's stop: docs/scheduling.md). REQUIRES: grace > 0.
  void RequestGraceful(std::string reason, std::chrono::milliseconds grace);
  // The grace RequestGraceful gave; 0 for Request (kill at once) or until requested. One
  // atomic load: a callback may read it.
  std::chrono::milliseconds grace() const {
    return std::chrono::milliseconds(grace_ms_.load(std::memory_order_acquire));
  }

  // Registers `callback` to run when cancellation is requested; returns its id for
  // Unregister. If it was requested already, runs `callback` now and returns 0. A callback
  // runs under this object's lock: keep it short (a signal, a flag) and do not call this
  // object from it.
  uint64_t OnRequest(std::function<void()> callback);
  // Unregisters callback `id` (0 and unknown ids are ignored). Once it returns, that
  // callback is not running and never will.
  void Unregister(uint64_t id);

 private:
  // atomic: read without the lock by requested(), on the job's hot path. First, out of the
  // usual order: an item's start reads it, and the launch board prefetches the object's
  // first cache line for that.
  std::atomic<bool> requested_{false};
  mutable Mutex mu_;
  std::string reason_ ELASTICJOB_GUARDED_BY(mu_);
  uint64_t next_id_ ELASTICJOB_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::function<void()>> callbacks_ ELASTICJOB_GUARDED_BY(mu_);
  // atomic: read by callbacks (grace()), which run under mu_ but may not take it.
  std::atomic<int64_t> grace_ms_{0};
};

}  // namespace elasticjob

#endif  // ELASTICJOB_API_CANCELLATION_H_
