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
// Resharding around a fire (docs/runtime.md "Resharding around a fire"). A flag raised while
// items run under the assignment it replaces (an instance back from a pause raises it on
// reconnecting, often just before a fire that another instance's run was claimed for
// already) must not let a trigger of that same fire run, under the new assignment, an item
// its old owner ran: each item runs once per fire. So the leader keeps a guard: its own last
// run's fire, when that run was admitted at most `late` before the flag was first seen (a
// trigger of that fire elsewhere that saw the flag waits for the sharding; one later than
// that is skipped as overdue). While the guard is set, the new assignment is written only
// for a later fire: the eager path (ShardNowIfIdleLeader, for a scheduled job) leaves it to
// the leader's next trigger, and a trigger of a fire no later than the guard does not shard;
// triggers waiting meanwhile give way to the next fire's (JobExecutor). ElasticJob shards
// only in the leader's trigger; here the leader shards at once when no guard is set. Runs
// of other instances are not guarded: a mark seen before a fire may be a claim made ahead
// that its instance lets go at the fire on seeing the flag (docs/chaos-findings.md).
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_SHARDING_SHARDING_SERVICE_H_
#define ELASTICJOB_SHARDING_SHARDING_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "config/config_service.h"
#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "election/leader_service.h"
#include "infra/log.h"
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

// The timing a leader's guard of a resharding around a fire is worked out with
// (ShardingService); without a clock there is no guard.
struct FireTiming {
  Clock* clock = nullptr;
  std::chrono::milliseconds late{0};  // how late after its fire a trigger may still run
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
                  storage::ChangeNotifier& notifier, RunningMarkWatcher* running_watcher = nullptr,
                  FireTiming timing = {}, infra::JobLogger log = {})
      : log_(std::move(log)),
        storage_(storage),
        config_(config),
        leader_(leader),
        instances_(instances),
        servers_(servers),
        strategies_(strategies),
        notifier_(notifier),
        running_watcher_(running_watcher),
        timing_(timing) {}

  // A run of this instance for the cron fire at `fire` was admitted under the current
  // assignment (its items start now). Cheap: one atomic store (the fire path calls it).
  void NoteRunAdmitted(Clock::WallTime fire) {
    last_run_fire_.store(fire.time_since_epoch().count(), std::memory_order_relaxed);
  }
  // What NoteRunAdmitted writes, for a launch board unit's prefetch.
  const void* run_admitted_address() const { return &last_run_fire_; }

  // A trigger's fire time as the wait for the sharding sees it now (it may move to a later
  // fire while it waits); nullopt: an operator's run, which may always shard.
  using FireTime = std::function<std::optional<Clock::WallTime>()>;

  Status SetReshardingFlag();
  Result<bool> IsNeedSharding();

  // The nodes of the first sharding of a job this instance has just created and leads
  // alone (JobRuntime's start-up writes them in the multi-op that brings the instance
  // online, in place of the resharding flag): every item's node, and the owner of each item
  // the job's strategy (of `config`) gives this instance, the only one available. The
  // assignment is the one the first fire's sharding would write, so the first fire has
  // nothing to shard. An instance that joins later raises the flag after its own nodes,
  // as ElasticJob's start-up does, and the next fire shards among them all. The strategy
  // is checked as at a fire (CheckedSharding): its error is returned.
  Result<std::vector<storage::NodeFill>> FirstShardingNodes(const JobConfiguration& config);

  // See above, blocking the calling thread. `wait` bounds the wait (for a leader, for
  // running items, for the leader's sharding); on timeout the call fails with TIMEOUT and
  // the next trigger tries again.
  Status ShardingIfNecessary(std::chrono::milliseconds wait = std::chrono::seconds(30));
  // The same without holding a thread while waiting: `done` is called once, on the calling
  // thread when no wait is needed, else on the notifier's executor (ChangeNotifier).
  // `fire_time` (may be null: an operator's run) is the waiting trigger's, for the rule on
  // runs seen (above).
  void ShardingIfNecessaryAsync(std::function<void(Status)> done,
                                std::chrono::milliseconds wait = std::chrono::seconds(30),
                                FireTime fire_time = nullptr);
  // Has the waits re-check (a waiting trigger's fire time moved).
  void Recheck() { notifier_.Notify(); }

  // Shards at once if this instance leads, a resharding is pending and no item is running;
  // else does nothing. The runtime calls it when the flag appears or a run ends, so the
  // assignment is written as soon as it can be, not at the leader's next trigger (and
  // followers waiting for it go on). ElasticJob shards only in the leader's trigger.
  // OK too when another instance sharded at the same time and won (an expected race,
  // logged at INFO); an error only for a real failure. `scheduled`: the job has a schedule,
  // so the leader's next trigger comes, and `last_fire` is the latest fire whose trigger has
  // come here: with a guard set (above), it shards only when that fire is past the guard
  // (that trigger may have found a run going on, and left the sharding to us).
  Status ShardNowIfIdleLeader(bool scheduled = false,
                              std::optional<Clock::WallTime> last_fire = std::nullopt);

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
  // Who asks for a sharding, for the guard (above).
  struct Asker {
    // An operator's run, or the eager path of a job without a schedule: not guarded.
    bool always = true;
    // Else the fire its trigger is of (for the eager path: the latest fire whose trigger
    // has come here); nullopt: none.
    std::optional<Clock::WallTime> fire;
  };
  // Of two askers, the one the rule lets shard in more cases.
  static Asker Wider(const Asker& a, const Asker& b);
  // Whether `asker` may write the new assignment now. REQUIRES: shard_mu_ held.
  bool MayShardLocked(const Asker& asker) ELASTICJOB_REQUIRES(shard_mu_);
  // Moves the guard for a leader attempt now. REQUIRES: shard_mu_ held.
  void GuardLocked() ELASTICJOB_REQUIRES(shard_mu_);
  // The flag is gone (or written for): no guard. REQUIRES: shard_mu_ held.
  void ClearGuardLocked() ELASTICJOB_REQUIRES(shard_mu_);
  // What can be done now towards ShardingIfNecessary (electing, sharding as leader); true
  // once this instance may read its assignment, false while it must wait.
  Result<bool> TryShardingIfNecessary(const Asker& asker);
  Result<bool> TryShardingIfNecessaryOnce(const Asker& asker);
  // One leader path at a time: while another one shards, false at once, and that one runs
  // TryShardAsLeaderOnce again when it is done, for the wider of the two askers (so a flag
  // raised while it ran, whose events found it busy, is not left up with nobody sharding).
  // Returns the last attempt's result.
  Result<bool> TryShardAsLeader(Asker asker);
  // Re-checks the flag; false while items run, another sharding is in progress or
  // `asker` must leave it to a later fire (above); else shards and returns true, or false
  // when the membership or the total count moved meanwhile (the flag is raised again).
  Result<bool> TryShardAsLeaderOnce(const Asker& asker);
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

  const infra::JobLogger log_;  // where the job's lines go
  storage::JobNodeStorage& storage_;
  config::ConfigService& config_;
  election::LeaderService& leader_;
  instance::InstanceService& instances_;
  server::ServerService& servers_;
  const JobShardingStrategyRegistry& strategies_;
  storage::ChangeNotifier& notifier_;
  RunningMarkWatcher* const running_watcher_;
  const FireTiming timing_;
  // NoteRunAdmitted's last fire (system clock ticks; min: none).
  std::atomic<int64_t> last_run_fire_{std::numeric_limits<int64_t>::min()};
  Mutex shard_mu_;
  bool sharding_ ELASTICJOB_GUARDED_BY(shard_mu_) = false;     // a TryShardAsLeader is under way
  bool shard_again_ ELASTICJOB_GUARDED_BY(shard_mu_) = false;  // another path asked meanwhile
  Asker again_asker_ ELASTICJOB_GUARDED_BY(shard_mu_);         // the widest of them
  // Until the flag is gone: when a leader attempt of ours first saw
  // it, and the guard (above).
  std::optional<Clock::WallTime> flag_seen_at_ ELASTICJOB_GUARDED_BY(shard_mu_);
  std::optional<Clock::WallTime> guard_ ELASTICJOB_GUARDED_BY(shard_mu_);
  bool deferral_logged_ ELASTICJOB_GUARDED_BY(shard_mu_) = false;  // said once per flag
};

}  // namespace elasticjob::sharding

#endif  // ELASTICJOB_SHARDING_SHARDING_SERVICE_H_
