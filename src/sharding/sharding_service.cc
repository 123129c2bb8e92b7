#include "sharding/sharding_service.h"

#include <fmt/format.h>

#include "sharding/sharding_node.h"

namespace elasticjob::sharding {

Status ShardingService::SetReshardingFlag() { return storage_.CreateJobNodeIfNeeded(kNecessary); }

Result<bool> ShardingService::IsNeedSharding() { return storage_.IsJobNodeExisted(kNecessary); }

Result<bool> ShardingService::HasRunningItems(int total) {
  for (int i = 0; i < total; ++i) {
    auto running = storage_.IsJobNodeExisted(RunningNode(i));
    if (!running.ok() || *running) return running;
  }
  return false;
}

Status ShardingService::ShardingIfNecessary(std::chrono::milliseconds wait) {
  wait_ = wait;
  auto need = IsNeedSharding();
  if (!need.ok() || !*need) return need.status();
  auto available = instances_.GetAvailableJobInstances();
  if (!available.ok() || available->empty()) return available.status();
  // A leader is needed: elect one if there is none (ElasticJob's isLeaderUntilBlock).
  Status s = notifier_.WaitUntil(
      [&]() -> Result<bool> {
        auto has = leader_.HasLeader();
        if (!has.ok() || *has) return has;
        auto me = servers_.IsAvailableServer(instances_.self().server_ip);
        if (!me.ok() || !*me) return false;  // wait for an available instance to lead
        if (Status e = leader_.ElectLeader(); !e.ok()) return e;
        return leader_.HasLeader();
      },
      wait);
  if (!s.ok()) return s.WithContext("waiting for a leader");
  auto is_leader = leader_.IsLeader();
  if (!is_leader.ok()) return is_leader.status();
  if (*is_leader) return ShardAsLeader();
  // Not the leader: wait for the leader's sharding to finish.
  s = notifier_.WaitUntil(
      [&]() -> Result<bool> {
        auto need_now = storage_.IsJobNodeExisted(kNecessary);
        if (!need_now.ok()) return need_now.status();
        if (*need_now) return false;
        auto processing = storage_.IsJobNodeExisted(kProcessing);
        if (!processing.ok()) return processing;
        return !*processing;
      },
      wait);
  return s.ok() ? s : s.WithContext("waiting for the leader to shard");
}

Status ShardingService::ShardAsLeader() {
  auto config = config_.Load(false);
  if (!config.ok()) return config.status();
  const int total = config->sharding_total_count;
  // Let items that are still running finish first (their owners may change).
  Status s = notifier_.WaitUntil(
      [&]() -> Result<bool> {
        auto running = HasRunningItems(total);
        if (!running.ok()) return running.status();
        return !*running;
      },
      wait_);
  if (!s.ok()) return s.WithContext("waiting for running items before sharding");
  auto available = instances_.GetAvailableJobInstances();
  if (!available.ok()) return available.status();
  if (available->empty()) return Status::Ok();
  auto strategy = strategies_.Find(config->job_sharding_strategy_type.value_or(""));
  if (!strategy.ok()) return strategy.status();
  if (s = storage_.FillEphemeralJobNode(kProcessing, ""); !s.ok()) return s;
  // Reset: drop old owners, create item nodes, delete items beyond the new total.
  for (int i = 0; i < total; ++i) {
    if (s = storage_.RemoveJobNodeIfExisted(InstanceNode(i)); !s.ok()) return s;
    if (s = storage_.CreateJobNodeIfNeeded(ItemNode(i)); !s.ok()) return s;
  }
  auto existing = storage_.GetJobNodeChildrenKeys(kShardingRoot);
  if (!existing.ok()) return existing.status();
  for (const auto& name : *existing) {
    int item = -1;
    try {
      item = std::stoi(name);
    } catch (...) {
      continue;
    }
    if (item >= total) {
      if (s = storage_.RemoveJobNodeIfExisted(ItemNode(item)); !s.ok()) return s;
    }
  }
  std::vector<ShardingAssignment> plan =
      (*strategy)->Sharding(*available, storage_.path().job_name(), total);
  // One multi-op: "/" is the namespace root (ElasticJob checks it), the rest job-relative.
  std::vector<TransactionOp> ops = {TransactionOp::CheckExists("/")};
  for (const auto& a : plan) {
    for (int item : a.items) {
      ops.push_back(
          TransactionOp::Create(storage_.path().FullPath(InstanceNode(item)), a.instance_id));
    }
  }
  ops.push_back(TransactionOp::Delete(storage_.path().FullPath(kNecessary)));
  ops.push_back(TransactionOp::Delete(storage_.path().FullPath(kProcessing)));
  return storage_.registry().ExecuteInTransaction(ops);
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
