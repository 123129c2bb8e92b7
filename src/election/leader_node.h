// The election's nodes, relative to the job (zk-layout.md).
#ifndef ELASTICJOB_ELECTION_LEADER_NODE_H_
#define ELASTICJOB_ELECTION_LEADER_NODE_H_

#include <string_view>

namespace elasticjob::election {

inline constexpr std::string_view kLeaderElection = "leader/election";
inline constexpr std::string_view kLeaderLatch = "leader/election/latch";
inline constexpr std::string_view kLeaderInstance = "leader/election/instance";

}  // namespace elasticjob::election

#endif  // ELASTICJOB_ELECTION_LEADER_NODE_H_
