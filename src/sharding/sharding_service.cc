#include "sharding/sharding_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "infra/job_metrics.h"
#include "infra/log.h"
#include "sharding/sharding_node.h"
#include "sharding/strategy/checked_sharding.h"

namespace elasticjob::sharding {

Status ShardingService::SetReshardingFlag() {
  // Always a write, never skipped on a cached "exists": a flag raised while a leader is
  // sharding must not be lost (see TryShardAsLeader).
  auto root = storage_.IsJobRootNodeExisted();
  if (!root.ok() || !*root) return root.status();
  return storage_.FillJobNode(kNecessary, "");
}

Result<std::vector<storage::NodeFill>> ShardingService::FirstShardingNodes(
    const JobConfiguration& config) {
  const int total = config.sharding_total_count;
  auto strategy = strategies_.Find(config.job_sharding_strategy_type.value_or(""));
  if (!strategy.ok()) return strategy.status();
  auto plan = CheckedSharding(**strategy, {instances_.self().instance_id},
                              storage_.path().job_name(), total);
  if (!plan.ok()) return plan.status();
  std::vector<storage::NodeFill> nodes;
  nodes.reserve(2 * static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) nodes.push_back({ItemNode(i), ""});
  for (const auto& a : *plan) {
    for (int item : a.items) nodes.push_back({InstanceNode(item), a.instance_id});
  }
  return nodes;
}

Result<std::vector<std::string>> ShardingService::AvailableInstancesDirectly() {
  auto ids = storage_.registry().GetChildrenKeysDirectly(storage_.path().FullPath("instances"));
  if (!ids.ok()) {
    if (ids.status().code() == StatusCode::kNotFound) return std::vector<std::string>{};
    return ids.status();
  }
  std::map<std::string, bool> enabled;  // per server IP
  std::vector<std::string> out;
  for (const auto& id : *ids) {
    std::string ip = id.substr(0, id.find(instance::kDelimiter));
    auto it = enabled.find(ip);
    if (it == enabled.end()) {
      auto state = storage_.GetJobNodeDataDirectly("servers/" + ip);
      if (!state.ok() && state.status().code() != StatusCode::kNotFound) return state.status();
      it = enabled.emplace(ip, state.ok() && *state == "ENABLED").first;
    }
    if (it->second) out.push_back(id);
  }
  return SortInstancesAsLeader(std::move(out));
}

Result<bool> ShardingService::IsNeedSharding() { return storage_.IsJobNodeExisted(kNecessary); }

Result<std::vector<int>> ShardingService::RunningItems(int total) {
  std::vector<int> out;
  std::optional<std::vector<int>> here;  // what runs here, asked at the first mark of ours
  for (int i = 0; i < total; ++i) {
    // From the server: running marks are outside the cache.
    auto owner = storage_.GetJobNodeDataDirectly(RunningNode(i));
    if (!owner.ok() && owner.status().code() == StatusCode::kNotFound) continue;
    if (!owner.ok()) return owner.status();
    if (*owner == instances_.self().instance_id && running_watcher_ != nullptr) {
      // Ours while nothing of ours runs it: its clearing was lost (the connection went, or
      // the retry came in a session that then ended). Waiting for it would stop the job
      // for good (issue 24: `necessary` stayed set after a partition): it goes now. (A run
      // of ours holds the item locally before it writes the mark, and lets go only once
      // the mark is cleared.)
      if (!here.has_value()) here = running_watcher_->LocallyRunningItems();
      if (std::find(here->begin(), here->end(), i) == here->end()) {
        log_("WARN", fmt::format("job '{}' item {}: removing a running mark of this "
                                 "instance that no run of it holds",
                                 storage_.path().job_name(), i));
        if (Status r = storage_.RemoveJobNodeIfExisted(RunningNode(i)); !r.ok()) return r;
        continue;
      }
    }
    out.push_back(i);
  }
  return out;
}

Result<bool> ShardingService::NotProcessing() {
  auto processing = storage_.IsJobNodeExisted(kProcessing);
  if (!processing.ok()) return processing;
  return !*processing;
}

Result<bool> ShardingService::HasShardingInfoInOfflineServers(int total) {
  auto online = storage_.GetJobNodeChildrenKeys("instances");
  if (!online.ok()) return online.status();
  for (int i = 0; i < total; ++i) {
    auto owner = storage_.GetJobNodeData(InstanceNode(i));
    if (!owner.ok() && owner.status().code() != StatusCode::kNotFound) return owner.status();
    if (!owner.ok() || std::find(online->begin(), online->end(), *owner) == online->end()) {
      return true;
    }
  }
  return false;
}

Result<bool> ShardingService::CoversTotalCount() {
  // An assignment planned for an older, smaller total count leaves the new items without
  // an owner. Its leader raises the flag again once it sees the count moved, but between
  // its commit and that, the flag is down and no sharding is in progress.
  auto config = config_.LoadLastGood();
  if (!config.ok()) return config.status();
  for (int i = 0; i < config->sharding_total_count; ++i) {
    auto owned = storage_.IsJobNodeExisted(InstanceNode(i));
    if (!owned.ok() || !*owned) return owned;
  }
  return true;
}

Result<bool> ShardingService::HasShardingInfo() {
  auto items = storage_.GetJobNodeChildrenKeys(kShardingRoot);
  if (!items.ok()) return items.status();
  return !items->empty();
}

Status ShardingService::ShardingIfNecessary(std::chrono::milliseconds wait) {
  Status s = notifier_.WaitUntil([this] { return TryShardingIfNecessary(Asker{}); }, wait);
  return s.ok() ? s : s.WithContext("sharding");
}

void ShardingService::ShardingIfNecessaryAsync(std::function<void(Status)> done,
                                               std::chrono::milliseconds wait, FireTime fire_time) {
  notifier_.WhenTrue(
      [this, fire_time = std::move(fire_time)] {
        Asker asker;
        if (fire_time) asker.fire = fire_time();
        asker.always = !asker.fire.has_value();
        return TryShardingIfNecessary(asker);
      },
      wait, "sharding: waiting for a leader, running items or the leader's assignment",
      std::move(done));
}

Result<bool> ShardingService::TryShardingIfNecessary(const Asker& asker) {
  // A sharding transaction fails when another instance sharded at the same time (the
  // leadership moved mid-way): look again, as the other one may have done the work.
  Result<bool> r = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = TryShardingIfNecessaryOnce(asker);
    if (r.ok() || !LostShardingRace(r.status())) return r;
  }
  return false;  // three lost races in a row: the next change tries again
}

ShardingService::Asker ShardingService::Wider(const Asker& a, const Asker& b) {
  if (a.always) return a;
  if (b.always) return b;
  if (!a.fire.has_value()) return b;
  if (!b.fire.has_value()) return a;
  return *a.fire >= *b.fire ? a : b;
}

bool ShardingService::MayShardLocked(const Asker& asker) {
  return !guard_.has_value() || asker.always || (asker.fire.has_value() && *asker.fire > *guard_);
}

void ShardingService::GuardLocked() {
  if (timing_.clock == nullptr) return;
  const Clock::WallTime now = timing_.clock->WallNow();
  if (!flag_seen_at_.has_value()) flag_seen_at_ = now;
  const int64_t last = last_run_fire_.load(std::memory_order_relaxed);
  if (last == std::numeric_limits<int64_t>::min()) return;
  const Clock::WallTime fire{Clock::WallTime::duration(last)};
  if (fire >= *flag_seen_at_ - timing_.late) {
    guard_ = guard_.has_value() ? std::max(*guard_, fire) : fire;
  }
}

void ShardingService::ClearGuardLocked() {
  flag_seen_at_.reset();
  guard_.reset();
  deferral_logged_ = false;
}

TransactionOp ShardingService::SelfRegistered() {
  return TransactionOp::CheckExists(
      storage_.path().FullPath("instances/" + instances_.self().instance_id));
}

Status ShardingService::FencedFailure(Status failed) {
  auto self = storage_.GetJobNodeDataDirectly("instances/" + instances_.self().instance_id);
  if (self.ok() || self.status().code() != StatusCode::kNotFound) return failed;
  return Status(StatusCode::kCancelled,
                fmt::format("job '{}': this instance left the cluster: sharding nothing",
                            storage_.path().job_name()));
}

Result<bool> ShardingService::TryShardingIfNecessaryOnce(const Asker& asker) {
  if (leader_.is_shut_down()) {
    return Status(StatusCode::kCancelled,
                  fmt::format("job '{}' is shut down here", storage_.path().job_name()));
  }
  auto need = IsNeedSharding();
  if (!need.ok()) return need.status();
  // No flag: a sharding may still be writing (a leader that lost its leadership mid-way, or
  // one whose flag we have not seen yet): never read an assignment it has half reset.
  if (!*need) {
    auto idle = NotProcessing();
    if (!idle.ok() || !*idle) return idle;
    auto covered = CoversTotalCount();
    if (!covered.ok() || *covered) return covered;
    // Items without an owner and no sharding coming: ask for one (its leader may be
    // raising the flag itself; one more write of it changes nothing).
    if (Status s = SetReshardingFlag(); !s.ok()) return s;
    return false;
  }
  auto available = instances_.GetAvailableJobInstances();
  if (!available.ok()) return available.status();
  if (available->empty()) return true;
  // A leader is needed: elect one if there is none (ElasticJob's isLeaderUntilBlock).
  auto has = leader_.HasLeader();
  if (!has.ok()) return has.status();
  if (!*has) {
    auto me = servers_.IsAvailableServer(instances_.self().server_ip);
    if (!me.ok() || !*me) return me;  // wait for an available instance to lead
    if (Status e = leader_.ElectLeader(); !e.ok()) return e;
    has = leader_.HasLeader();
    if (!has.ok() || !*has) return has;
  }
  auto is_leader = leader_.IsLeader();
  if (!is_leader.ok()) return is_leader.status();
  if (*is_leader) return TryShardAsLeader(asker);
  // Not the leader: ready once the leader's sharding is done.
  auto need_now = IsNeedSharding();
  if (!need_now.ok()) return need_now.status();
  if (*need_now) return false;
  return NotProcessing();
}

Status ShardingService::ShardNowIfIdleLeader(bool scheduled,
                                             std::optional<Clock::WallTime> last_fire) {
  auto need = IsNeedSharding();
  if (!need.ok() || !*need) return need.status();
  auto leading = leader_.IsLeader();
  if (!leading.ok() || !*leading) return leading.status();
  auto available = instances_.GetAvailableJobInstances();
  if (!available.ok() || available->empty()) return available.status();
  // Not ready: a later event calls again.
  Result<bool> sharded = TryShardAsLeader(Asker{.always = !scheduled, .fire = last_fire});
  if (sharded.ok() || !LostShardingRace(sharded.status())) return sharded.status();
  // Two instances that both saw themselves lead (an election under way at start-up, or a
  // leadership that moved mid-way) shard at once: one transaction wins, the other fails
  // NOT_FOUND or ALREADY_EXISTS on the nodes the winner wrote. An expected outcome, not a
  // failure: the winner's assignment stands, and a flag still up brings the next attempt.
  log_("INFO", fmt::format("job '{}': another instance sharded at the same time ({}); "
                           "its assignment stands",
                           storage_.path().job_name(), sharded.status().ToString()));
  return Status::Ok();
}

bool ShardingService::LostShardingRace(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kAlreadyExists;
}

Result<bool> ShardingService::TryShardAsLeader(Asker asker) {
  {
    MutexLock lock(&shard_mu_);
    // Another path of ours is sharding: waiting for it would hold a coordination thread for
    // as long as its registry calls take. It shards once more for us when it is done: it
    // may have read the flag or the membership before the change that brought us here, and
    // that change's flag write may come while it runs (then its events reach only us).
    if (sharding_) {
      again_asker_ = shard_again_ ? Wider(again_asker_, asker) : asker;
      shard_again_ = true;
      return false;
    }
    sharding_ = true;
  }
  bool for_others = false;
  for (;;) {
    Result<bool> r = TryShardAsLeaderOnce(asker);
    {
      MutexLock lock(&shard_mu_);
      if (shard_again_) {
        shard_again_ = false;
        for_others = true;
        asker = Wider(asker, again_asker_);
        continue;
      }
      sharding_ = false;
    }
    // Those who asked meanwhile wait for a change: what came of it may be none (a strategy
    // that failed, a later fire to wait for), so they look again themselves.
    if (for_others) notifier_.Notify();
    return r;
  }
}

Result<bool> ShardingService::TryShardAsLeaderOnce(const Asker& asker) {
  auto need = IsNeedSharding();  // another path of ours may have sharded meanwhile
  if (!need.ok()) return need.status();
  if (!*need) {
    if (running_watcher_ != nullptr) running_watcher_->StopWatchingRunningMarks();
    MutexLock lock(&shard_mu_);
    ClearGuardLocked();
    return true;
  }
  // Leadership again, under the lock: the caller read it before waiting for it, and a
  // shutdown (IsLeader false from then on) may have come meanwhile.
  auto leading = leader_.IsLeader();
  if (!leading.ok()) return leading.status();
  if (!*leading) {
    if (leader_.is_shut_down()) {
      return Status(StatusCode::kCancelled,
                    fmt::format("job '{}' is shut down here", storage_.path().job_name()));
    }
    return false;  // no longer the leader: the next leader shards
  }
  {
    MutexLock lock(&shard_mu_);
    GuardLocked();  // from the first look at this flag
  }
  auto config = config_.LoadLastGood(/*from_cache=*/false);
  if (!config.ok()) return config.status();
  const int total = config->sharding_total_count;
  // Let items that are still running finish first (their owners may change), and another
  // instance's sharding end.
  auto running = RunningItems(total);
  if (!running.ok()) return running.status();
  if (!running->empty() && running_watcher_ != nullptr) {
    running_watcher_->WatchRunningMarks(*running);
    running = RunningItems(total);  // one gone before its watch was set sends no event
    if (!running.ok()) return running.status();
  }
  if (!running->empty()) return false;
  {
    // A run of ours under the assignment the flag replaces: the new one is for a later fire.
    MutexLock lock(&shard_mu_);
    GuardLocked();  // a run admitted since
    if (!MayShardLocked(asker)) {
      if (!std::exchange(deferral_logged_, true)) {
        log_("INFO", fmt::format("job '{}': items ran under the assignment being "
                                 "replaced: the new one is written for the next "
                                 "fire (the leader's next trigger)",
                                 storage_.path().job_name()));
      }
      return false;
    }
  }
  auto idle = NotProcessing();
  if (!idle.ok() || !*idle) return idle;
  // The membership from the server, not the cache: an instance that registered just now
  // must be in the plan, or its flag below must survive.
  auto available = AvailableInstancesDirectly();
  if (!available.ok()) return available.status();
  if (available->empty()) return true;
  auto strategy = strategies_.Find(config->job_sharding_strategy_type.value_or(""));
  if (!strategy.ok()) return strategy.status();
  // The plan first, fenced and checked (a strategy is user code): a failure leaves no
  // processing node for the others to wait on.
  auto plan = CheckedSharding(**strategy, *available, storage_.path().job_name(), total);
  if (!plan.ok()) return plan.status();
  // Fenced (see the header): an instance that left the cluster creates no processing node.
  Status s = storage_.registry().ExecuteInTransaction(
      {SelfRegistered(),
       TransactionOp::Create(storage_.path().FullPath(kProcessing), "", CreateMode::kEphemeral)});
  if (!s.ok()) return FencedFailure(s);
  // Items beyond the new total go first (they have children, which a multi-op cannot
  // delete recursively); losing them is harmless if the rest fails.
  auto existing = storage_.GetJobNodeChildrenKeys(kShardingRoot);
  if (!existing.ok()) return existing.status();
  for (const auto& name : *existing) {
    std::optional<int> item = ParseItemName(name);
    if (item.has_value() && *item >= total) {
      if (s = storage_.RemoveJobNodeIfExisted(ItemNode(*item)); !s.ok()) return s;
    }
  }
  // One multi-op: "/" is the namespace root (ElasticJob checks it), the fence, then the
  // reset (missing item nodes created, old owners deleted) and the new owners, so a sharding
  // that loses a race with another one changes nothing. (ElasticJob resets outside its
  // transaction.)
  auto full = [&](const std::string& node) { return storage_.path().FullPath(node); };
  if (s = storage_.CreateJobNodeIfNeeded(kShardingRoot); !s.ok()) return s;  // items' parent
  std::vector<TransactionOp> ops = {TransactionOp::CheckExists("/"), SelfRegistered()};
  for (int i = 0; i < total; ++i) {
    auto item_exists = storage_.IsJobNodeExisted(ItemNode(i));
    if (!item_exists.ok()) return item_exists.status();
    if (!*item_exists) {
      ops.push_back(TransactionOp::Create(full(ItemNode(i)), ""));
      continue;
    }
    auto owner_exists = storage_.IsJobNodeExisted(InstanceNode(i));
    if (!owner_exists.ok()) return owner_exists.status();
    if (*owner_exists) ops.push_back(TransactionOp::Delete(full(InstanceNode(i))));
  }
  for (const auto& a : *plan) {
    for (int item : a.items) {
      ops.push_back(TransactionOp::Create(full(InstanceNode(item)), a.instance_id));
    }
  }
  ops.push_back(TransactionOp::Delete(storage_.path().FullPath(kNecessary)));
  ops.push_back(TransactionOp::Delete(storage_.path().FullPath(kProcessing)));
  if (s = storage_.registry().ExecuteInTransaction(ops); !s.ok()) {
    // Another instance sharded meanwhile (leadership moved mid-way): leave no processing
    // node behind for others to wait on; the flag, if still set, brings a new attempt.
    (void)storage_.RemoveJobNodeIfExisted(kProcessing);
    return FencedFailure(s);
  }
  if (metrics_ != nullptr) metrics_->reshardings.Inc();
  // Every run's mark would fire these watches again: they were for this sharding only.
  if (running_watcher_ != nullptr) running_watcher_->StopWatchingRunningMarks();
  {
    MutexLock lock(&shard_mu_);
    ClearGuardLocked();  // a flag raised again below starts afresh
  }
  // The transaction deleted the flag, including one raised by a membership change after we
  // read the membership. Read it again: if it moved, raise the flag again. (Every change is
  // written before its flag, so a change whose flag we deleted is visible now.)
  // The same for the total count: a change flagged meanwhile must not be lost either.
  auto after = AvailableInstancesDirectly();
  if (!after.ok()) return after.status();
  auto config_after = config_.LoadLastGood(/*from_cache=*/false);
  if (!config_after.ok()) return config_after.status();
  if (*after != *available || config_after->sharding_total_count != total) {
    if (s = SetReshardingFlag(); !s.ok()) return s;
    return false;  // not done: the raised flag brings the next sharding
  }
  return true;
}

Result<std::vector<int>> ShardingService::GetShardingItems(const std::string& instance_id,
                                                           int sharding_total_count) {
  std::string ip = instance_id.substr(0, instance_id.find(instance::kDelimiter));
  auto available = servers_.IsAvailableServer(ip);
  if (!available.ok()) return available.status();
  std::vector<int> items;
  if (!*available) return items;
  for (int i = 0; i < sharding_total_count; ++i) {
    auto owner = storage_.GetJobNodeData(InstanceNode(i));
    if (owner.ok() && *owner == instance_id) items.push_back(i);
    if (!owner.ok() && owner.status().code() != StatusCode::kNotFound) return owner.status();
  }
  return items;
}

}  // namespace elasticjob::sharding
