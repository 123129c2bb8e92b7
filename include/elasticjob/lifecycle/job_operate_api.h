// JobOperateAPI and ShardingOperateAPI: the operations ElasticJob's console offers on a
// running cluster (trigger, disable, enable, shutdown, remove; disable or enable one item),
// written to the registry exactly as ElasticJob 3.0.5's lifecycle module writes them, so a
// Java instance honours an operation done here and a C++ instance one done by a Java console
// (paths and values: docs/operations.md).
//
// A job name and a server IP select what an operation applies to, as in ElasticJob: both
// given, that server of that job; only the job (empty IP), all its servers or instances;
// only the IP (empty job), that server in every job of the namespace. Unlike ElasticJob,
// which silently does nothing, naming a job or server that is not registered is NOT_FOUND
// with the name, and the result counts what was changed.
//
// Thread safety: stateless besides the borrowed registry; any thread (calls block).
//
//   auto ops = elasticjob::NewJobOperateAPI(**reg);
//   auto n = ops->Trigger("orderSync", "", "2024-06-01");  // every instance runs once
//   ops->Disable("", "10.0.0.7");                          // that host, in every job
#ifndef ELASTICJOB_LIFECYCLE_JOB_OPERATE_API_H_
#define ELASTICJOB_LIFECYCLE_JOB_OPERATE_API_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"

namespace elasticjob {

class JobOperateAPI {
 public:
  virtual ~JobOperateAPI() = default;

  // Runs the job now on every live instance of the selection (each gets
  // `/{job}/trigger/{instanceId}`; it deletes the node and runs its items once). With a
  // `parameter`, that run (and only it) sees it as its job parameter: the parameter is the
  // trigger node's value, which a Java instance ignores (it just runs with its configured
  // parameter). Returns the number of instances triggered; FAILED_PRECONDITION when the
  // selection has no live instance; INVALID_ARGUMENT when both names are empty.
  virtual Result<int> Trigger(std::string_view job_name, std::string_view server_ip,
                              std::optional<std::string> parameter = std::nullopt) = 0;

  // Writes DISABLED (Enable: ENABLED) to `/{job}/servers/{ip}` of every server selected:
  // a disabled server's instances lose their items (resharding) and leadership. Returns the
  // number of server nodes written.
  // Schedules one extra run of `job_name` at `at` (docs/scheduling.md): writes
  // `/{job}/triggerAt/{epochMs}-{id}` with `parameter` as its value, kept in the registry until
  // an instance of the job runs it (on every instance live then); a time past runs at once.
  // Returns the node's name; NOT_FOUND for an unknown job.
  virtual Result<std::string> TriggerAt(std::string_view job_name,
                                        std::chrono::system_clock::time_point at,
                                        std::optional<std::string> parameter = std::nullopt) {
    (void)job_name, (void)at, (void)parameter;
    return FailedPrecondition("this JobOperateAPI cannot schedule runs");
  }
  // Stops what `job_name` runs now, without disabling it (docs/scheduling.md): writes
  // `/{job}/stop`, which every live instance (only those on `server_ip` when it is not empty)
  // reads, cancelling `item` (every item when nullopt) of its runs claimed before the request
  // was written, as a timeout does; the runs' other items go on, and the next fire runs as
  // usual. Returns the number of live instances asked; NOT_FOUND for an
  // unknown job, FAILED_PRECONDITION when no live instance is asked, INVALID_ARGUMENT for a
  // negative item or an empty job name.
  virtual Result<int> Stop(std::string_view job_name, std::string_view server_ip,
                           std::optional<int> item) {
    (void)job_name, (void)server_ip, (void)item;
    return FailedPrecondition("this JobOperateAPI cannot stop runs");
  }
  virtual Result<int> Disable(std::string_view job_name, std::string_view server_ip) = 0;
  virtual Result<int> Enable(std::string_view job_name, std::string_view server_ip) = 0;

  // Deletes `/{job}/instances/{id}` of every instance selected (by its registered serverIp):
  // each stops the job and leaves the cluster; the process goes on. Returns the number of
  // instances shut down.
  virtual Result<int> Shutdown(std::string_view job_name, std::string_view server_ip) = 0;

  // Shutdown, then deletes the selected `/{job}/servers/{ip}` nodes. The configuration stays
  // (JobConfigurationAPI::RemoveJobConfiguration removes a job). Returns the number of
  // server nodes removed.
  virtual Result<int> Remove(std::string_view job_name, std::string_view server_ip) = 0;
};

class ShardingOperateAPI {
 public:
  virtual ~ShardingOperateAPI() = default;

  // Creates (Enable: deletes) `/{job}/sharding/{item}/disabled`: the item is skipped by
  // every run from the next trigger on, without resharding. NOT_FOUND for an unknown job;
  // INVALID_ARGUMENT for an item outside [0, shardingTotalCount).
  virtual Status Disable(std::string_view job_name, int item) = 0;
  virtual Status Enable(std::string_view job_name, int item) = 0;
};

// REQUIRES: `registry` is initialised and outlives the result.
std::unique_ptr<JobOperateAPI> NewJobOperateAPI(RegistryCenter& registry);
std::unique_ptr<ShardingOperateAPI> NewShardingOperateAPI(RegistryCenter& registry);

}  // namespace elasticjob

#endif  // ELASTICJOB_LIFECYCLE_JOB_OPERATE_API_H_
