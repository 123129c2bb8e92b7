// InstanceService: `instances/{ip}@-@{pid}`, ElasticJob's InstanceService, and beside it
// `runtime/{ip}@-@{pid}` (InstanceRuntime: version, host, pid, start times; a layout
// extension Java ElasticJob ignores), written and removed with it.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_INSTANCE_INSTANCE_SERVICE_H_
#define ELASTICJOB_INSTANCE_INSTANCE_SERVICE_H_

#include <vector>

#include "elasticjob/clock.h"
#include "instance/instance_runtime.h"
#include "instance/job_instance.h"
#include "instance/server_service.h"
#include "storage/job_node_storage.h"

namespace elasticjob::instance {

class InstanceService {
 public:
  // `runtime` is what `runtime/{id}` holds but its registered_time, which each write sets
  // from `clock` (left as in `runtime` without one).
  // REQUIRES: `storage`, `servers` and `clock` (when set) outlive this object.
  InstanceService(storage::JobNodeStorage& storage, server::ServerService& servers,
                  JobInstance self, InstanceRuntime runtime = {}, const Clock* clock = nullptr)
      : storage_(storage),
        servers_(servers),
        self_(std::move(self)),
        runtime_(std::move(runtime)),
        clock_(clock) {}

  const JobInstance& self() const { return self_; }

  // Registers this instance (ephemeral, owned by the session): `instances/{id}`, then
  // `runtime/{id}`.
  Status PersistOnline();
  // What PersistOnline writes, for a transaction of several registrations.
  storage::NodeFill OnlineNode() const {
    return {"instances/" + self_.instance_id, self_.ToYaml(), /*ephemeral=*/true};
  }
  storage::NodeFill RuntimeNode() const;
  // Deregisters this instance (graceful shutdown): `instances/{id}`, then `runtime/{id}`.
  // Returns the first failure.
  Status RemoveInstance();
  // The live instances whose server is ENABLED, in the leader's order (descending ids).
  Result<std::vector<std::string>> GetAvailableJobInstances();
  Result<bool> IsLocalJobInstanceExisted();

 private:
  storage::JobNodeStorage& storage_;
  server::ServerService& servers_;
  const JobInstance self_;
  const InstanceRuntime runtime_;
  const Clock* const clock_;
};

}  // namespace elasticjob::instance

#endif  // ELASTICJOB_INSTANCE_INSTANCE_SERVICE_H_
