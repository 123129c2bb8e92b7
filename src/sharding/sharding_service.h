// ShardingService: who owns which item, ElasticJob's ShardingService.
//
// Any change that needs a new assignment sets `leader/sharding/necessary`. Before a run,
// ShardingIfNecessary: the leader alone computes the assignment with the job's strategy
// and writes it in ONE multi-op (check the namespace root; create every
// `sharding/{i}/instance`; delete `necessary` and `processing`), after waiting for running
// items to finish; the other instances wait until it is done, woken by registry events.
//
// An instance whose job is shut down here (LeaderService::Shutdown) shards nothing, and
// every write of a sharding is fenced by this instance's `instances/{id}` node: the
// processing node and the assignment are created in multi-ops that check it exists, so a
// sharding begun before an operator removed the node (or before a Join removed it) changes
// nothing once it is gone, whatever a stale cache says of the leadership.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_SHARDING_SHARDING_SERVICE_H_
#define ELASTICJOB_SHARDING_SHARDING_SERVICE_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <vector>

#include "config/config_service.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "election/leader_service.h"
#include "instance/instance_service.h"
#include "storage/change_notifier.h"
#include "storage/job_node_storage.h"

namespace elasticjob::metrics {
struct JobMetrics;
}  // namespace elasticjob::metrics

namespace elasticjob::sharding {

// Running marks are outside the registry cache (storage::JobNodeWatches), so no event tells
// of them unless asked: the leader, waiting for items to finish before it shards, asks the
// runtime to watch the marks it saw (their events reach the job's listeners, which call
// ShardNowIfIdleLeader and wake the waits) until it has sharded.
class RunningMarkWatcher {
 public:
  virtual ~RunningMarkWatcher() = default;
  // Watches the running marks of `items` (adding to those watched); the watches are set
  // when it returns.
  virtual void WatchRunningMarks(const std::vector<int>& items) = 0;
  virtual void StopWatchingRunningMarks() = 0;
  // The items this instance runs now (every lane): a mark of ours on any other item is
  // stale (its clearing failed, or came in a session that then ended).
  virtual std::vector<int> LocallyRunningItems() = 0;
};

class ShardingService {
 public:
  // Counts this instance's shardings there (null: not counted). REQUIRES: before use.
  void set_metrics(metrics::JobMetrics* metrics) { metrics_ = metrics; }
  // REQUIRES: every argument outlives this object. Without `running_watcher` (tests on the
  // in-memory registry, whose watch sees every node), running marks are not watched.
  ShardingService(storage::JobNodeStorage& storage, config::ConfigService& config,
                  election::LeaderService& leader, instance::InstanceService& instances,
                  server::ServerService& servers, const JobShardingStrategyRegistry& strategies,
                  storage::ChangeNotifier& notifier, RunningMarkWatcher* running_watcher = nullptr)
      : storage_(storage),
        config_(config),
        leader_(leader),
        instances_(instances),
        servers_(servers),
        strategies_(strategies),
        notifier_(notifier),
        running_watcher_(running_watcher) {}

  Status SetReshardingFlag();
  Result<bool> IsNeedSharding();

  // See above, blocking the calling thread. `wait` bounds the wait (for a leader, for
  // running items, for the leader's sharding); on timeout the call fails with TIMEOUT and
  // the next trigger tries again.
  Status ShardingIfNecessary(std::chrono::milliseconds wait = std::chrono::seconds(30));
  // The same without holding a thread while waiting: `done` is called once, on the calling
  // thread when no wait is needed, else on the notifier's executor (ChangeNotifier).
  void ShardingIfNecessaryAsync(std::function<void(Status)> done,
                                std::chrono::milliseconds wait = std::chrono::seconds(30));

  // Shards at once if this instance leads, a resharding is pending and no item is running;
  // else does nothing. The runtime calls it when the flag appears or a run ends, so the
  // assignment is written as soon as it can be, not at the leader's next trigger (and
  // followers waiting for it go on). ElasticJob shards only in the leader's trigger.
  // OK too when another instance sharded at the same time and won (an expected race,
  // logged at INFO); an error only for a real failure.
  Status ShardNowIfIdleLeader();

  // The items among [0, sharding_total_count) assigned to `instance_id` (none when its
  // server is not available).
  Result<std::vector<int>> GetShardingItems(const std::string& instance_id,
                                            int sharding_total_count);
  Result<std::vector<int>> GetLocalShardingItems(int sharding_total_count) {
    return GetShardingItems(instances_.self().instance_id, sharding_total_count);
  }
  // The items among [0, sharding_total_count) marked running anywhere (from the server). A
  // mark of this instance on an item none of its runs holds is stale: removed, not counted.
  Result<std::vector<int>> RunningItems(int sharding_total_count);
  // Whether some item among [0, total) is owned by no live instance (reconcile).
  Result<bool> HasShardingInfoInOfflineServers(int sharding_total_count);
  // Whether `sharding/` has any item (static sharding keeps an assignment once made).
  Result<bool> HasShardingInfo();

 private:
  metrics::JobMetrics* metrics_ = nullptr;  // borrowed; may be null
  // What can be done now towards ShardingIfNecessary (electing, sharding as leader); true
  // once this instance may read its assignment, false while it must wait.
  Result<bool> TryShardingIfNecessary();
  Result<bool> TryShardingIfNecessaryOnce();
  // One leader path at a time: while another one shards, false at once, and that one runs
  // TryShardAsLeaderOnce again when it is done (so a flag raised while it ran, whose
  // events found it busy, is not left up with nobody sharding). Returns the last attempt's
  // result.
  Result<bool> TryShardAsLeader();
  // Re-checks the flag; false while items run or another sharding is in progress; else
  // shards and returns true, or false when the membership or the total count moved
  // meanwhile (the flag is raised again).
  Result<bool> TryShardAsLeaderOnce();
  // Whether `s`, from a sharding step, says another instance sharded at the same time (its
  // transaction deleted or created the nodes ours expected): NOT_FOUND or ALREADY_EXISTS.
  static bool LostShardingRace(const Status& s);
  // Whether every item of the configured total count has an owner.
  Result<bool> CoversTotalCount();
  // The live instances on ENABLED servers, read from the server, in the leader's order.
  Result<std::vector<std::string>> AvailableInstancesDirectly();
  // Whether no instance is sharding (`leader/sharding/processing` absent).
  Result<bool> NotProcessing();
  // The fence of every sharding write: this instance's `instances/{id}` exists.
  TransactionOp SelfRegistered();
  // What a failed fenced multi-op means: CANCELLED when this instance's node is gone (it
  // left the cluster: not a race to retry), else `failed`.
  Status FencedFailure(Status failed);

  storage::JobNodeStorage& storage_;
  config::ConfigService& config_;
  election::LeaderService& leader_;
  instance::InstanceService& instances_;
  server::ServerService& servers_;
  const JobShardingStrategyRegistry& strategies_;
  storage::ChangeNotifier& notifier_;
  RunningMarkWatcher* const running_watcher_;
  std::mutex shard_mu_;
  bool sharding_ = false;     // GUARDED_BY(shard_mu_): a TryShardAsLeader is under way
  bool shard_again_ = false;  // GUARDED_BY(shard_mu_): another path asked meanwhile
};

}  // namespace elasticjob::sharding

#endif  // ELASTICJOB_SHARDING_SHARDING_SERVICE_H_
