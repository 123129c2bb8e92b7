// InstanceService: `instances/{ip}@-@{pid}`, ElasticJob's InstanceService.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_INSTANCE_INSTANCE_SERVICE_H_
#define ELASTICJOB_INSTANCE_INSTANCE_SERVICE_H_

#include <vector>

#include "instance/job_instance.h"
#include "server/server_service.h"
#include "storage/job_node_storage.h"

namespace elasticjob::instance {

class InstanceService {
 public:
  // REQUIRES: `storage` and `servers` outlive this object.
  InstanceService(storage::JobNodeStorage& storage, server::ServerService& servers,
                  JobInstance self)
      : storage_(storage), servers_(servers), self_(std::move(self)) {}

  const JobInstance& self() const { return self_; }

  // Registers this instance (ephemeral, owned by the session).
  Status PersistOnline();
  // What PersistOnline writes, for a transaction of several registrations.
  storage::NodeFill OnlineNode() const {
    return {"instances/" + self_.instance_id, self_.ToYaml(), /*ephemeral=*/true};
  }
  // Deregisters this instance (graceful shutdown).
  Status RemoveInstance();
  // The live instances whose server is ENABLED, in the leader's order (descending ids).
  Result<std::vector<std::string>> GetAvailableJobInstances();
  Result<bool> IsLocalJobInstanceExisted();

 private:
  storage::JobNodeStorage& storage_;
  server::ServerService& servers_;
  const JobInstance self_;
};

}  // namespace elasticjob::instance

#endif  // ELASTICJOB_INSTANCE_INSTANCE_SERVICE_H_
