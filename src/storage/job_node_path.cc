#include "storage/job_node_path.h"

#include <array>

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

reg::WatchPolicy JobNodePath::CachePolicy() const {
  std::string root = FullPath() + "/";
  return [root](std::string_view key) {
    if (key.size() <= root.size() || key.compare(0, root.size(), root) != 0)
      return reg::NodeWatches{};
    return JobNodeWatches(key.substr(root.size()));
  };
}

reg::NodeWatches JobNodeWatches(std::string_view node) {
  // The registry's cache asks for every level of a key on each read it serves (is the key
  // inside the cache?), so this allocates nothing. The layout is at most 5 levels deep.
  constexpr size_t kMaxDepth = 8;
  std::array<std::string_view, kMaxDepth> parts;
  size_t n = 0;
  for (size_t start = 0; start <= node.size(); ++n) {
    if (n == kMaxDepth) return reg::NodeWatches{};  // not a node of the layout
    size_t slash = node.find('/', start);
    if (slash == std::string_view::npos) slash = node.size();
    parts[n] = node.substr(start, slash - start);
    start = slash + 1;
  }
  constexpr reg::NodeWatches kNone{false, false};
  constexpr reg::NodeWatches kValue{true, false};
  const std::string_view top = parts[0];
  // Latch nodes anywhere: leader/election/latch/*, leader/failover/latch/*,
  // guarantee/{started,completed}-latch/*.
  if (n >= 2 && (parts[n - 2] == "latch" || parts[n - 2].ends_with("-latch"))) return kNone;
  if (top == "config" && n == 1) return kValue;
  if ((top == "servers" || top == "instances") && n == 2) return kValue;
  if ((top == "trigger" || top == "runtime" || top == "workflowRuns") && n == 2) return kNone;
  if (top == "systemTime" && n == 2) return kNone;
  if (top == "guarantee" && n == 3) return kNone;
  if (top == "sharding") {
    // "" by contract (zk-layout.md); its owner is usually there, the others usually not.
    if (n == 2) return reg::NodeWatches{false, false, kItemChildren, /*empty_value=*/true, 1};
    if (n == 3) return parts[2] == "running" ? kNone : kValue;
  }
  if (top == "leader" && n == 3) {
    if (parts[1] == "sharding") return parts[2] == "processing" ? kNone : kValue;
    if (parts[1] == "election" && parts[2] == "instance") return kValue;
  }
  if (top == "leader" && n == 4 && parts[1] == "failover" && parts[2] == "items") return kNone;
  // The layout's parents hold "" and are never set: their children watch is all there is
  // to see (it fires when the parent itself goes, too), and their value is not read.
  constexpr reg::NodeWatches kChildren{false, true, {}, /*empty_value=*/true};
  if (n == 1 &&
      (top == "servers" || top == "instances" || top == "sharding" || top == "leader" ||
       top == "trigger" || top == "guarantee" || top == "systemTime" || top == "workflowRuns")) {
    return kChildren;
  }
  // What each instance shows the console of itself (`runtime/{id}`, a create and a delete):
  // no reader of the job's cache needs it, so its children are outside the cache (no
  // request to load them, none when instances come and go; a read asks the server).
  if (n == 1 && top == "runtime") {
    return reg::NodeWatches{false, false, {}, /*empty_value=*/true, 0, /*children_outside=*/true};
  }
  if (top == "guarantee" && n == 2) return kChildren;
  if (top == "leader" && n == 2 &&
      (parts[1] == "election" || parts[1] == "sharding" || parts[1] == "failover")) {
    return kChildren;
  }
  if (top == "leader" && n == 3 &&
      ((parts[1] == "election" && parts[2] == "latch") ||
       (parts[1] == "failover" && (parts[2] == "items" || parts[2] == "latch")))) {
    return kChildren;
  }
  return reg::NodeWatches{};
}

}  // namespace elasticjob::storage
