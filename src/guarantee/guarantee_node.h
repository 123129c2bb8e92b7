// The guarantee nodes of distribute-once listeners, relative to the job (zk-layout.md).
#ifndef ELASTICJOB_GUARANTEE_GUARANTEE_NODE_H_
#define ELASTICJOB_GUARANTEE_GUARANTEE_NODE_H_

#include <string>
#include <string_view>

namespace elasticjob::guarantee {

inline constexpr std::string_view kStartedRoot = "guarantee/started";
inline constexpr std::string_view kCompletedRoot = "guarantee/completed";
inline constexpr std::string_view kStartedLatch = "guarantee/started-latch";
inline constexpr std::string_view kCompletedLatch = "guarantee/completed-latch";

// `guarantee/started/{i}` or `guarantee/completed/{i}` (persistent, empty).
inline std::string ItemNode(std::string_view root, int item) {
  return std::string(root) + "/" + std::to_string(item);
}

}  // namespace elasticjob::guarantee

#endif  // ELASTICJOB_GUARANTEE_GUARANTEE_NODE_H_
