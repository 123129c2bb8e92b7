// FailoverService: the items of a crashed instance, taken over by the living ones, as
// ElasticJob 3.0.5's FailoverService.
//
//   1. An instance sees another's `instances/{id}` vanish (JobCrashedJobListener): each item
//      that instance was running (a `running` node and `sharding/{i}/instance` = id), or was
//      running for failover (`failovering` = id), becomes `leader/failover/items/{i}`, and the
//      item's stale `running` node goes.
//   2. Instances claim them under the failover latch, one item per latch round: the claimer
//      writes `sharding/{i}/failover` (ephemeral) and `sharding/{i}/failovering` (persistent)
//      with its instance id and deletes `leader/failover/items/{i}`.
//   3. The claimer runs the item at once; a successful run deletes both nodes.
//
// Unlike ElasticJob, claiming does not wait for the claimer's own run to end, and rounds go
// on until no item is left (ElasticJob claims again only after its next run), so a crashed
// instance's items run on survivors within one latch round trip each (docs/runtime.md).
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_FAILOVER_FAILOVER_SERVICE_H_
#define ELASTICJOB_FAILOVER_FAILOVER_SERVICE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "storage/job_node_storage.h"

namespace elasticjob::metrics {
struct JobMetrics;
}  // namespace elasticjob::metrics

namespace elasticjob::failover {

class FailoverService {
 public:
  // Counts the items put up for failover there (null: not counted). REQUIRES: before use.
  void set_metrics(metrics::JobMetrics* metrics) { metrics_ = metrics; }
  // REQUIRES: `storage` outlives this object.
  FailoverService(storage::JobNodeStorage& storage, std::string instance_id)
      : storage_(storage), instance_id_(std::move(instance_id)) {}

  // Step 1 for `items`, which were running on the crashed instance `crashed` (one latch
  // round for them all); for each item: unless a taker
  // already holds it, queue it for failover and delete its stale running node. Under the
  // failover latch, and looked up on the server, not the cache: another instance may have
  // taken the item over a moment ago (its claim under the latch, then its running mark),
  // and a cache that has not seen that yet would queue the item again and delete the
  // taker's fresh mark, which lets a second taker run the item beside the first (chaos
  // netns_partition; ElasticJob's setCrashedFailoverFlag has this race). A running mark that
  // is not `crashed`'s is a live claim's: the item is not queued and the mark stays.
  Status SetCrashedFailoverFlag(const std::vector<int>& items, const std::string& crashed);
  // Step 1 for an item a crashed instance was itself running for failover.
  Status SetCrashedFailoverFlagDirectly(int item);
  // The items the crashed `instance_id` was running (its running node is there and it owns
  // the item), when its server is not disabled.
  Result<std::vector<int>> GetCrashedShardingItems(const std::string& instance_id);

  // Step 2: while items are queued and `keep_going()` holds (asked before each latch round
  // and again once the latch is held), claims one per latch round and calls
  // `claimed(item)` after each claim (outside the latch).
  Status FailoverIfNecessary(const std::function<bool()>& keep_going,
                             const std::function<void(int)>& claimed);
  // Whether items are queued for failover.
  Result<bool> NeedFailover();

  // Step 3: the failover runs of `items` succeeded (only nodes that exist are deleted).
  Status UpdateFailoverComplete(const std::vector<int>& items);

  // Items whose `failover` node names `instance_id` (taken over by it).
  Result<std::vector<int>> GetFailoverItems(const std::string& instance_id);
  // Items whose `failovering` node names `instance_id`.
  Result<std::vector<int>> GetFailoveringItems(const std::string& instance_id);
  Result<std::vector<int>> GetLocalFailoverItems() { return GetFailoverItems(instance_id_); }
  // Among `local_items` (this instance's own), those another instance took over.
  Result<std::vector<int>> GetLocalTakeOffItems(const std::vector<int>& local_items);
  // Item -> instance id of every `failovering` node.
  Result<std::map<int, std::string>> GetAllFailoveringItems();
  Status ClearFailoveringItem(int item);
  // The attempt count carried through a failover (`attempts/{i}`, docs/scheduling.md): item
  // `item` has failed `failed` attempts and waits for a retry here.
  Status RecordFailedAttempts(int item, int failed);
  // The count recorded for `item` (0 when none or unreadable as a count).
  Result<int> FailedAttempts(int item);
  // The item's attempts ended (succeeded, or none left): its count goes.
  Status ClearFailedAttempts(int item);
  // Failover switched off: every item's failover and failovering nodes go.
  Status RemoveFailoverInfo();

 private:
  metrics::JobMetrics* metrics_ = nullptr;  // borrowed; may be null
  // Items (children of `sharding/`) whose `node_of(i)` holds `instance_id`.
  Result<std::vector<int>> ItemsWhere(const std::function<std::string(int)>& node_of,
                                      const std::string& instance_id);
  Result<std::vector<int>> ShardingItems();

  storage::JobNodeStorage& storage_;
  const std::string instance_id_;
};

}  // namespace elasticjob::failover

#endif  // ELASTICJOB_FAILOVER_FAILOVER_SERVICE_H_
