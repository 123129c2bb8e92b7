// The sharding nodes, relative to the job (zk-layout.md).
#ifndef ELASTICJOB_SHARDING_SHARDING_NODE_H_
#define ELASTICJOB_SHARDING_SHARDING_NODE_H_

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace elasticjob::sharding {

inline constexpr std::string_view kNecessary = "leader/sharding/necessary";
inline constexpr std::string_view kProcessing = "leader/sharding/processing";
inline constexpr std::string_view kShardingRoot = "sharding";

inline std::string ItemNode(int item) { return "sharding/" + std::to_string(item); }
inline std::string InstanceNode(int item) { return ItemNode(item) + "/instance"; }
inline std::string RunningNode(int item) { return ItemNode(item) + "/running"; }
inline std::string MisfireNode(int item) { return ItemNode(item) + "/misfire"; }
inline std::string DisabledNode(int item) { return ItemNode(item) + "/disabled"; }

// The item a child of `sharding/` or `leader/failover/items/` names: decimal digits only (no
// sign, no spaces), within int. nullopt for any other name, which readers skip.
inline std::optional<int> ParseItemName(std::string_view name) {
  if (name.empty() || name.front() < '0' || name.front() > '9') return std::nullopt;
  int item = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), item);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return item;
}

}  // namespace elasticjob::sharding

#endif  // ELASTICJOB_SHARDING_SHARDING_NODE_H_
