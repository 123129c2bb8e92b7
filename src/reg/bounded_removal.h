// RemoveWithin: deletes registry nodes without letting an unreachable registry hold the
// caller past a deadline. What a process does on its way out (an instance leaving the
// cluster at shutdown) must not wait for the client's timeouts and retries: a synchronous
// call to a ZooKeeper server that stopped answering returns only after the session's
// receive timeout (two thirds of the session timeout), once per retry (docs/runtime.md,
// "Shutdown").
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_REG_BOUNDED_REMOVAL_H_
#define ELASTICJOB_REG_BOUNDED_REMOVAL_H_

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "reg/coordinator_registry.h"

namespace elasticjob::reg {

// Deletes each of `keys` (nodes without children) in a transaction of its own, sent
// asynchronously, and waits until all have answered or `deadline` has passed. OK when each
// is deleted or was not there; TIMEOUT naming the keys not answered by the deadline (their
// deletes may still happen later, or end with the session); else the first error. The
// answers come on a process-wide thread, so a registry may still complete them after the
// caller has gone.
Status RemoveWithin(CoordinatorRegistry& registry, const std::vector<std::string>& keys,
                    std::chrono::steady_clock::time_point deadline);

// What a leave at shutdown is given when the shutdown's deadline has passed already (runs
// held it to the end of the grace): time for a registry that answers to take the nodes,
// short beside a grace.
inline constexpr std::chrono::milliseconds kLeaveAtLeast{500};

// `deadline`, or kLeaveAtLeast from now if that is later.
inline std::chrono::steady_clock::time_point LeaveDeadline(
    std::chrono::steady_clock::time_point deadline) {
  return std::max(deadline, std::chrono::steady_clock::now() + kLeaveAtLeast);
}

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_BOUNDED_REMOVAL_H_
