#include "instance/instance_service.h"

#include <chrono>

#include "elasticjob/sharding/job_sharding_strategy.h"

namespace elasticjob::instance {

storage::NodeFill InstanceService::RuntimeNode() const {
  InstanceRuntime value = runtime_;
  if (clock_ != nullptr) {
    value.registered_time =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_->WallNow().time_since_epoch())
            .count();
  }
  return {"runtime/" + self_.instance_id, value.ToJson(), /*ephemeral=*/true};
}

Status InstanceService::PersistOnline() {
  for (const storage::NodeFill& fill : {OnlineNode(), RuntimeNode()}) {
    if (Status s = storage_.FillEphemeralJobNode(fill.node, fill.value); !s.ok()) return s;
  }
  return Status::Ok();
}

Status InstanceService::RemoveInstance() {
  Status instance = storage_.RemoveJobNodeIfExisted("instances/" + self_.instance_id);
  Status runtime = storage_.RemoveJobNodeIfExisted("runtime/" + self_.instance_id);
  return instance.ok() ? runtime : instance;
}

Result<std::vector<std::string>> InstanceService::GetAvailableJobInstances() {
  auto ids = storage_.GetJobNodeChildrenKeys("instances");
  if (!ids.ok()) return ids.status();
  std::vector<std::string> out;
  for (const auto& id : *ids) {
    std::string ip = id.substr(0, id.find(kDelimiter));
    auto enabled = servers_.IsEnableServer(ip);
    if (!enabled.ok()) return enabled.status();
    if (*enabled) out.push_back(id);
  }
  return SortInstancesAsLeader(std::move(out));
}

Result<bool> InstanceService::IsLocalJobInstanceExisted() {
  return storage_.IsJobNodeExisted("instances/" + self_.instance_id);
}

}  // namespace elasticjob::instance
