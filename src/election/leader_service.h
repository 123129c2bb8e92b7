// LeaderService: the job's leader, ElasticJob's LeaderService. Election runs inside the
// Curator-compatible latch at `leader/election/latch`: whoever holds it writes its instance
// id to the ephemeral `leader/election/instance` if no leader is there yet.
//
// A job this instance has just created (ScheduleAll: its root and config created by this
// instance's own transaction, so no other instance had it) needs no latch: its leader node
// goes into the transaction that registers the instance (LeaderNode, after
// PrepareLeaderNode), where it fails, changing nothing, if someone was elected meanwhile.
// docs/runtime.md ("Start-up") says why that is the latch's outcome.
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
#include <string_view>
#include <vector>

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
  // The leader node naming this instance, for a transaction that creates it (see above).
  storage::NodeFill LeaderNode() const;
  // The leader node's parents (`leader`, `leader/election`: containers, as the latch makes
  // them), created unless they exist: LeaderNode's transaction needs them. REQUIRES: the
  // job's root exists (the caller has just created it: nothing is asked about it).
  Status PrepareLeaderNode();
  // The parents PrepareLeaderNode makes, relative to the job.
  static std::vector<std::string_view> LeaderNodeParents();
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
