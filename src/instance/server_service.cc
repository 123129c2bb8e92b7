#include "instance/server_service.h"

#include "instance/job_instance.h"

namespace elasticjob::server {

Status ServerService::PersistOnline(bool enabled) {
  storage::NodeFill fill = OnlineNode(enabled);
  return storage_.FillJobNode(fill.node, fill.value);
}

Result<bool> ServerService::IsEnableServer(std::string_view ip) {
  auto v = storage_.GetJobNodeData("servers/" + std::string(ip));
  if (!v.ok()) {
    if (v.status().code() == StatusCode::kNotFound) return false;
    return v.status();
  }
  return *v == kEnabled;
}

Result<bool> ServerService::IsAvailableServer(std::string_view ip) {
  auto enabled = IsEnableServer(ip);
  if (!enabled.ok() || !*enabled) return enabled;
  auto instances = storage_.GetJobNodeChildrenKeys("instances");
  if (!instances.ok()) return instances.status();
  const std::string prefix = std::string(ip) + std::string(instance::kDelimiter);
  for (const auto& id : *instances) {
    if (id.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

Result<bool> ServerService::HasAvailableServers() {
  auto servers = storage_.GetJobNodeChildrenKeys("servers");
  if (!servers.ok()) return servers.status();
  for (const auto& ip : *servers) {
    auto available = IsAvailableServer(ip);
    if (!available.ok()) return available.status();
    if (*available) return true;
  }
  return false;
}

}  // namespace elasticjob::server
