#include "storage/job_node_path.h"

namespace elasticjob::storage {

std::string JobNodePath::FullPath(std::string_view node) const {
  std::string path = "/" + job_name_;
  if (!node.empty()) {
    path += '/';
    path += node;
  }
  return path;
}

std::string JobNodePath::ServerNodePath(std::string_view ip) const {
  return ServersNodePath() + "/" + std::string(ip);
}

std::string JobNodePath::InstanceNodePath(std::string_view instance_id) const {
  return InstancesNodePath() + "/" + std::string(instance_id);
}

std::string JobNodePath::ShardingNodePath(int item, std::string_view name) const {
  std::string path = ShardingNodePath() + "/" + std::to_string(item);
  if (!name.empty()) {
    path += '/';
    path += name;
  }
  return path;
}

}  // namespace elasticjob::storage
