#include "election/leader_service.h"

#include "election/leader_node.h"

namespace elasticjob::election {

Status LeaderService::ElectLeader() {
  if (is_shut_down()) {
    return Status(StatusCode::kCancelled, "the job is shut down here: not electing a leader");
  }
  // A leader the cache knows of: the latch would only find it too. Its node going is an
  // event that elects again.
  if (auto has = HasLeader(); has.ok() && *has) return Status::Ok();
  Status inner;
  Status s = storage_.ExecuteInLeader(kLeaderLatch, [&] {
    auto has = storage_.IsJobNodeExisted(kLeaderInstance);
    if (!has.ok()) {
      inner = has.status();
    } else if (!*has && !is_shut_down()) {  // shut down while waiting for the latch
      inner = storage_.FillEphemeralJobNode(kLeaderInstance, instance_id_);
    }
  });
  return s.ok() ? inner : s;
}

Result<bool> LeaderService::IsLeader() {
  if (is_shut_down()) return false;
  auto v = storage_.GetJobNodeData(kLeaderInstance);
  if (!v.ok()) {
    if (v.status().code() == StatusCode::kNotFound) return false;
    return v.status();
  }
  return *v == instance_id_;
}

storage::NodeFill LeaderService::LeaderNode() const {
  return {std::string(kLeaderInstance), instance_id_, /*ephemeral=*/true};
}

std::vector<std::string_view> LeaderService::LeaderNodeParents() {
  return {kLeaderElection.substr(0, kLeaderElection.find('/')), kLeaderElection};
}

Status LeaderService::PrepareLeaderNode() {
  return storage_.CreateJobContainerBelowRoot(kLeaderElection);
}

Result<bool> LeaderService::HasLeader() { return storage_.IsJobNodeExisted(kLeaderInstance); }

Status LeaderService::RemoveLeader() {
  auto v = storage_.GetJobNodeDataDirectly(kLeaderInstance);
  if (!v.ok()) return v.status().code() == StatusCode::kNotFound ? Status::Ok() : v.status();
  if (*v != instance_id_) return Status::Ok();
  return storage_.RemoveJobNodeIfExisted(kLeaderInstance);
}

}  // namespace elasticjob::election
