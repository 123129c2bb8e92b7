#include "failover/failover_service.h"

#include <algorithm>
#include <charconv>

#include "failover/failover_node.h"
#include "infra/job_metrics.h"
#include "instance/job_instance.h"

namespace elasticjob::failover {
Status FailoverService::SetCrashedFailoverFlag(const std::vector<int>& items,
                                               const std::string& crashed) {
  if (items.empty()) return Status::Ok();
  Status inner;
  // One latch round for all the items. Claims are made under this latch
  // (FailoverIfNecessary, ExecutionService::RecoverClaim), so what the server says here
  // cannot be overtaken by another taker's claim.
  Status s = storage_.ExecuteInLeader(kLatch, [&] {
    for (int item : items) {
      auto mark = storage_.GetJobNodeDataDirectly(sharding::RunningNode(item));
      if (!mark.ok() && mark.status().code() != StatusCode::kNotFound) {
        inner = mark.status();
        return;
      }
      if (mark.ok() && *mark != crashed) continue;  // a live claim's mark: taken over already
      auto assigned = storage_.GetJobNodeDataDirectly(ExecutionFailoverNode(item));
      if (assigned.ok()) continue;  // a taker holds it (ephemeral: a live one)
      if (assigned.status().code() != StatusCode::kNotFound) {
        inner = assigned.status();
        return;
      }
      if (inner = storage_.CreateJobNodeIfNeeded(ItemsNode(item)); !inner.ok()) return;
      if (metrics_ != nullptr) metrics_->failovers_given.Inc();
      if (!mark.ok()) continue;
      if (inner = storage_.RemoveJobNodeIfExisted(sharding::RunningNode(item)); !inner.ok()) return;
    }
  });
  return s.ok() ? inner : s;
}

Status FailoverService::SetCrashedFailoverFlagDirectly(int item) {
  Status s = storage_.CreateJobNodeIfNeeded(ItemsNode(item));
  if (s.ok() && metrics_ != nullptr) metrics_->failovers_given.Inc();
  return s;
}

Result<std::vector<int>> FailoverService::GetCrashedShardingItems(const std::string& instance_id) {
  std::string ip = instance_id.substr(0, instance_id.find(instance::kDelimiter));
  auto server = storage_.GetJobNodeData("servers/" + ip);
  if (server.ok() && *server == "DISABLED") return std::vector<int>{};
  auto items = ShardingItems();
  if (!items.ok()) return items;
  std::vector<int> out;
  for (int i : *items) {
    auto running = storage_.IsJobNodeExisted(sharding::RunningNode(i));
    if (!running.ok()) return running.status();
    if (!*running) continue;
    auto owner = storage_.GetJobNodeData(sharding::InstanceNode(i));
    if (owner.ok() && *owner == instance_id) out.push_back(i);
  }
  return out;
}

Result<bool> FailoverService::NeedFailover() {
  auto items = storage_.GetJobNodeChildrenKeys(kItemsRoot);
  if (!items.ok()) return items.status();
  return !items->empty();
}

Status FailoverService::FailoverIfNecessary(const std::function<bool()>& keep_going,
                                            const std::function<void(int)>& claimed) {
  while (keep_going()) {
    auto need = NeedFailover();
    if (!need.ok() || !*need) return need.status();
    int item = -1;
    Status inner;
    Status s = storage_.ExecuteInLeader(kLatch, [&] {
      // The wait for the latch may have outlasted the job here (shut down, paused).
      if (!keep_going()) return;
      // Inside the latch, confirm each candidate on the server: the cache may not have
      // applied the previous holder's delete yet.
      auto children = storage_.registry().GetChildrenKeys(storage_.path().FullPath(kItemsRoot));
      if (!children.ok()) {
        if (children.status().code() != StatusCode::kNotFound) inner = children.status();
        return;
      }
      for (const auto& name : *children) {  // descending, as ElasticJob takes get(0)
        std::optional<int> parsed = sharding::ParseItemName(name);
        if (!parsed.has_value()) continue;
        const int candidate = *parsed;
        auto gone = storage_.GetJobNodeDataDirectly(ItemsNode(candidate));
        if (!gone.ok()) continue;  // taken meanwhile
        // Not an item of the job (a hostile or stale node: items beyond the total lose their
        // node at resharding): claiming it would create sharding/{i} and run item i.
        auto item_node = storage_.GetJobNodeDataDirectly(sharding::ItemNode(candidate));
        if (!item_node.ok()) {
          if (item_node.status().code() == StatusCode::kNotFound) continue;
          inner = item_node.status();
          return;
        }
        if (inner = storage_.FillEphemeralJobNode(ExecutionFailoverNode(candidate), instance_id_);
            !inner.ok())
          return;
        if (inner = storage_.FillJobNode(ExecutingFailoverNode(candidate), instance_id_);
            !inner.ok())
          return;
        inner = storage_.RemoveJobNodeIfExisted(ItemsNode(candidate));
        item = candidate;
        return;
      }
    });
    if (!s.ok()) return s;
    if (!inner.ok()) return inner;
    if (item < 0) return Status::Ok();
    claimed(item);
  }
  return Status::Ok();
}

Status FailoverService::UpdateFailoverComplete(const std::vector<int>& items) {
  for (int item : items) {
    for (const std::string& node : {ExecutionFailoverNode(item), ExecutingFailoverNode(item)}) {
      auto exists = storage_.IsJobNodeExisted(node);
      if (!exists.ok()) return exists.status();
      if (!*exists) continue;
      if (Status s = storage_.RemoveJobNodeIfExisted(node); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

Result<std::vector<int>> FailoverService::ShardingItems() {
  auto names = storage_.GetJobNodeChildrenKeys(sharding::kShardingRoot);
  if (!names.ok()) return names.status();
  std::vector<int> out;
  for (const auto& name : *names) {
    if (std::optional<int> item = sharding::ParseItemName(name)) out.push_back(*item);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<int>> FailoverService::ItemsWhere(const std::function<std::string(int)>& node_of,
                                                     const std::string& instance_id) {
  auto items = ShardingItems();
  if (!items.ok()) return items;
  std::vector<int> out;
  for (int i : *items) {
    auto v = storage_.GetJobNodeData(node_of(i));
    if (v.ok() && *v == instance_id) out.push_back(i);
    if (!v.ok() && v.status().code() != StatusCode::kNotFound) return v.status();
  }
  return out;
}

Result<std::vector<int>> FailoverService::GetFailoverItems(const std::string& instance_id) {
  return ItemsWhere(ExecutionFailoverNode, instance_id);
}

Result<std::vector<int>> FailoverService::GetFailoveringItems(const std::string& instance_id) {
  return ItemsWhere(ExecutingFailoverNode, instance_id);
}

Result<std::vector<int>> FailoverService::GetLocalTakeOffItems(const std::vector<int>& local) {
  std::vector<int> out;
  for (int i : local) {
    auto taken = storage_.IsJobNodeExisted(ExecutionFailoverNode(i));
    if (!taken.ok()) return taken.status();
    if (*taken) out.push_back(i);
  }
  return out;
}

Result<std::map<int, std::string>> FailoverService::GetAllFailoveringItems() {
  auto items = ShardingItems();
  if (!items.ok()) return items.status();
  std::map<int, std::string> out;
  for (int i : *items) {
    auto v = storage_.GetJobNodeData(ExecutingFailoverNode(i));
    if (v.ok()) out.emplace(i, *v);
    if (!v.ok() && v.status().code() != StatusCode::kNotFound) return v.status();
  }
  return out;
}

Status FailoverService::ClearFailoveringItem(int item) {
  return storage_.RemoveJobNodeIfExisted(ExecutingFailoverNode(item));
}

Status FailoverService::RecordFailedAttempts(int item, int failed) {
  return storage_.FillJobNode(AttemptsNode(item), std::to_string(failed));
}

Result<int> FailoverService::FailedAttempts(int item) {
  auto value = storage_.GetJobNodeDataDirectly(AttemptsNode(item));
  if (!value.ok()) {
    if (value.status().code() == StatusCode::kNotFound) return 0;
    return value.status();
  }
  int failed = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), failed);
  return ec == std::errc() && end == value->data() + value->size() && failed > 0 ? failed : 0;
}

Status FailoverService::ClearFailedAttempts(int item) {
  return storage_.RemoveJobNodeIfExisted(AttemptsNode(item));
}

Status FailoverService::RemoveFailoverInfo() {
  auto items = ShardingItems();
  if (!items.ok()) return items.status();
  for (int i : *items) {
    if (Status s = storage_.RemoveJobNodeIfExisted(ExecutionFailoverNode(i)); !s.ok()) return s;
    if (Status s = storage_.RemoveJobNodeIfExisted(ExecutingFailoverNode(i)); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace elasticjob::failover
