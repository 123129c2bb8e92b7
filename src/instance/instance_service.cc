#include "instance/instance_service.h"

#include "elasticjob/sharding/job_sharding_strategy.h"

namespace elasticjob::instance {

Status InstanceService::PersistOnline() {
  storage::NodeFill fill = OnlineNode();
  return storage_.FillEphemeralJobNode(fill.node, fill.value);
}

Status InstanceService::RemoveInstance() {
  return storage_.RemoveJobNodeIfExisted("instances/" + self_.instance_id);
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
