// ReplyLatch: counts the replies a batch of asynchronous requests to the client seam still
// owes, for the thread that sent them to wait on. The client answers every request exactly
// once (with an error when the connection or the handle goes: reg/client/registry_client.h),
// so Wait ends. Used by the registry's container chains and the tree cache's loads.
//
// Thread safety: safe for concurrent use (Done runs on the client's event thread).
#ifndef ELASTICJOB_REG_REPLY_LATCH_H_
#define ELASTICJOB_REG_REPLY_LATCH_H_

#include "elasticjob/mutex.h"

namespace elasticjob::reg {

class ReplyLatch {
 public:
  // One more reply owed: called before the request is handed over.
  void Add() {
    MutexLock lock(&mu_);
    ++pending_;
  }
  // A reply came.
  void Done() {
    MutexLock lock(&mu_);
    if (--pending_ == 0) cv_.SignalAll();
  }
  // Waits until every reply owed has come.
  void Wait() {
    MutexLock lock(&mu_);
    while (pending_ != 0) cv_.Wait();
  }

 private:
  Mutex mu_;
  CondVar cv_{&mu_};
  int pending_ ELASTICJOB_GUARDED_BY(mu_) = 0;
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_REPLY_LATCH_H_
