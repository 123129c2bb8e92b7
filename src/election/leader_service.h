// LeaderService: the job's leader, ElasticJob's LeaderService. Election runs inside the
// Curator-compatible latch at `leader/election/latch`: whoever holds it writes its instance
// id to the ephemeral `leader/election/instance` if no leader is there yet.
//
// Once the job is shut down here (Shutdown), this instance is not the leader whatever the
// node (or a cache still holding it) says, and elects itself no more: ElasticJob's
// isLeader() is false once JobRegistry.isShutdown.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_ELECTION_LEADER_SERVICE_H_
#define ELASTICJOB_ELECTION_LEADER_SERVICE_H_

#include <atomic>
#include <string>

#include "storage/job_node_storage.h"

namespace elasticjob::election {

class LeaderService {
 public:
  // REQUIRES: `storage` outlives this object.
  LeaderService(storage::JobNodeStorage& storage, std::string instance_id)
      : storage_(storage), instance_id_(std::move(instance_id)) {}

  // Takes the latch and becomes leader unless another instance already is. CANCELLED once
  // shut down.
  Status ElectLeader();
  // Whether the leader node names this instance (from the cache); false once shut down.
  Result<bool> IsLeader();
  Result<bool> HasLeader();
  // Gives up leadership (abdication, shutdown): deletes the leader node if the server says
  // it is ours (a cache may not hold our election yet, or still hold an old one). Works
  // after Shutdown.
  Status RemoveLeader();
  // The job is shut down here: from now on IsLeader is false and ElectLeader elects no one.
  // Call it before RemoveLeader. Does not block.
  void Shutdown() { shut_down_.store(true); }
  bool is_shut_down() const { return shut_down_.load(); }

 private:
  storage::JobNodeStorage& storage_;
  const std::string instance_id_;
  // Read by every IsLeader without a lock; set once.
  std::atomic<bool> shut_down_{false};
};

}  // namespace elasticjob::election

#endif  // ELASTICJOB_ELECTION_LEADER_SERVICE_H_
