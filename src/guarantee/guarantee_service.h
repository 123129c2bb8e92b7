// GuaranteeService: the registry side of distribute-once listeners, ElasticJob 3.0.5's
// GuaranteeService. One Phase is either `started` (before the items run) or `completed`
// (after):
//
//   Register(items)          each item's `guarantee/{phase}/{i}` (persistent), written to the
//                            server even if the cache still shows it;
//   IsAll(total)             the phase's root has `total` children (read from the server);
//   ExecuteInLeaderForLast   under the phase's latch: if all are there, run the hook; then
//                            (always) clear the phase, waking the instances that wait;
//   Clear()                  deletes the phase's root and its children.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_GUARANTEE_GUARANTEE_SERVICE_H_
#define ELASTICJOB_GUARANTEE_GUARANTEE_SERVICE_H_

#include <functional>
#include <string_view>
#include <vector>

#include "storage/job_node_storage.h"

namespace elasticjob::guarantee {

enum class Phase { kStarted, kCompleted };

std::string_view RootOf(Phase phase);

class GuaranteeService {
 public:
  // REQUIRES: `storage` outlives this object.
  explicit GuaranteeService(storage::JobNodeStorage& storage) : storage_(storage) {}

  Status Register(Phase phase, const std::vector<int>& items);
  // Whether item `item`'s node of `phase` exists on the server.
  Result<bool> IsRegistered(Phase phase, int item);
  Result<bool> IsAll(Phase phase, int total);
  Status Clear(Phase phase);
  // Runs `hook` under the phase's latch if all `total` items are registered, then clears
  // the phase. Returns whether `hook` ran.
  Result<bool> ExecuteInLeaderForLast(Phase phase, int total, const std::function<void()>& hook);

 private:
  storage::JobNodeStorage& storage_;
};

}  // namespace elasticjob::guarantee

#endif  // ELASTICJOB_GUARANTEE_GUARANTEE_SERVICE_H_
