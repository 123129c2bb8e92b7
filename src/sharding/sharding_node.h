// The sharding nodes, relative to the job (zk-layout.md).
#ifndef ELASTICJOB_SHARDING_SHARDING_NODE_H_
#define ELASTICJOB_SHARDING_SHARDING_NODE_H_

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

}  // namespace elasticjob::sharding

#endif  // ELASTICJOB_SHARDING_SHARDING_NODE_H_
