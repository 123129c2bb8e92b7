// ChangeEpoch: one process-wide count that moves whenever anything a prepared trigger relied
// on may have changed: any registry watch's change count (SubscriptionState::Changed) and any
// job's admission (paused, stopped). A prepared run notes it before it reads those; at its
// fire time, the same count means none of them moved, so the run is admitted without reading
// its job's own (each a cache miss when ten thousand jobs start in the same millisecond).
// Any other count sends it to the per-job reads, which decide as before.
//
// Writers move their own state first, then the epoch; readers read the epoch first, then
// the state (sequentially consistent atomics): a reader that sees the old epoch at its fire
// time knows that no write it did not see has happened since.
#ifndef ELASTICJOB_INFRA_CHANGE_EPOCH_H_
#define ELASTICJOB_INFRA_CHANGE_EPOCH_H_

#include <atomic>
#include <cstdint>

namespace elasticjob::infra {

inline std::atomic<uint64_t>& ChangeEpoch() {
  static std::atomic<uint64_t> epoch{1};
  return epoch;
}

inline void BumpChangeEpoch() { ChangeEpoch().fetch_add(1); }

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_CHANGE_EPOCH_H_
