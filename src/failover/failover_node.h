// The failover nodes, relative to the job (zk-layout.md).
#ifndef ELASTICJOB_FAILOVER_FAILOVER_NODE_H_
#define ELASTICJOB_FAILOVER_FAILOVER_NODE_H_

#include <string>
#include <string_view>

#include "sharding/sharding_node.h"

namespace elasticjob::failover {

inline constexpr std::string_view kItemsRoot = "leader/failover/items";
inline constexpr std::string_view kLatch = "leader/failover/latch";

// `leader/failover/items/{i}`: item i's owner crashed while it ran; waiting for a taker.
inline std::string ItemsNode(int item) {
  return std::string(kItemsRoot) + "/" + std::to_string(item);
}
// `sharding/{i}/failover` (ephemeral): the taker, while its session lives.
inline std::string ExecutionFailoverNode(int item) {
  return sharding::ItemNode(item) + "/failover";
}
// `sharding/{i}/failovering` (persistent): the taker, until its failover run succeeds.
inline std::string ExecutingFailoverNode(int item) {
  return sharding::ItemNode(item) + "/failovering";
}

// `attempts/{i}` (persistent; a layout extension Java ignores): the attempts item i has
// failed so far in the run going on, while it waits for a retry (docs/scheduling.md). A
// failover run of the item continues from the next attempt.
inline constexpr std::string_view kAttemptsRoot = "attempts";
inline std::string AttemptsNode(int item) {
  return std::string(kAttemptsRoot) + "/" + std::to_string(item);
}

}  // namespace elasticjob::failover

#endif  // ELASTICJOB_FAILOVER_FAILOVER_NODE_H_
