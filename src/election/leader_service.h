// LeaderService: the job's leader, ElasticJob's LeaderService. Election runs inside the
// Curator-compatible latch at `leader/election/latch`: whoever holds it writes its instance
// id to the ephemeral `leader/election/instance` if no leader is there yet.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_ELECTION_LEADER_SERVICE_H_
#define ELASTICJOB_ELECTION_LEADER_SERVICE_H_

#include <string>

#include "storage/job_node_storage.h"

namespace elasticjob::election {

class LeaderService {
 public:
  // REQUIRES: `storage` outlives this object.
  LeaderService(storage::JobNodeStorage& storage, std::string instance_id)
      : storage_(storage), instance_id_(std::move(instance_id)) {}

  // Takes the latch and becomes leader unless another instance already is.
  Status ElectLeader();
  Result<bool> IsLeader();
  Result<bool> HasLeader();
  // Gives up leadership (abdication, shutdown): deletes the leader node if it is ours.
  Status RemoveLeader();

 private:
  storage::JobNodeStorage& storage_;
  const std::string instance_id_;
};

}  // namespace elasticjob::election

#endif  // ELASTICJOB_ELECTION_LEADER_SERVICE_H_
