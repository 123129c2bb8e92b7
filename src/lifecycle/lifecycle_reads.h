// Registry reads the lifecycle APIs share: which jobs exist, a job's instances and servers,
// read from the server (the operations tools hold no cache); and the status rules, as pure
// functions of what those reads found, which the web console applies to its watch-fed copy
// of the namespace (src/console/registry_view.h) so both compute statuses alike.
//
// Thread safety: stateless functions.
#ifndef ELASTICJOB_LIFECYCLE_LIFECYCLE_READS_H_
#define ELASTICJOB_LIFECYCLE_LIFECYCLE_READS_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/lifecycle/statistics_api.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"

namespace elasticjob::lifecycle {

// INVALID_ARGUMENT naming `what` when `name` is empty or holds a '/' (not one path segment).
Status CheckName(std::string_view what, std::string_view name);

// The children of `key`, sorted ascending; empty when `key` does not exist.
Result<std::vector<std::string>> Children(RegistryCenter& reg, const std::string& key);

// Whether `key` exists on the server.
Result<bool> Exists(RegistryCenter& reg, const std::string& key);

// The names of the top-level nodes that hold a `config` child, ascending.
Result<std::vector<std::string>> JobNames(RegistryCenter& reg);

// OK when the job has a config; NOT_FOUND "job 'x' not found" otherwise.
Status CheckJobExists(RegistryCenter& reg, std::string_view job_name);

// The job's configuration, parsed (not validated). NOT_FOUND as CheckJobExists;
// FAILED_PRECONDITION naming the job and the key when the node is not a readable config.
Result<JobConfiguration> ReadConfig(RegistryCenter& reg, std::string_view job_name);

// The job's schedule as the lists show it: the cron, or `fixedRate 30s` / `fixedDelay 5m`;
// empty for a one-off job.
std::string ScheduleText(const JobConfiguration& config);

struct InstanceEntry {
  std::string instance_id;
  std::string server_ip;  // from the node's YAML, else the id's part before "@-@"
};
// The job's live instances, by id.
Result<std::vector<InstanceEntry>> Instances(RegistryCenter& reg, std::string_view job_name);

// JobStatisticsAPIImpl.getJobStatus: CRASHED without a live instance; DISABLED when every
// server state (the values of `servers/{ip}`) is DISABLED; SHARDING_FLAG when no item has an
// owner (the values of `sharding/{i}/instance`, "" for none) or one's owner is not live; OK.
JobStatus ComputeJobStatus(const std::set<std::string>& live_instance_ids,
                           const std::vector<std::string>& server_states,
                           const std::vector<std::string>& item_owners);

// ShardingStatisticsAPIImpl: DISABLED, else RUNNING, else SHARDING_FLAG when the owner is not
// a live instance, else PENDING.
ShardingStatus ComputeShardingStatus(bool disabled, bool running, bool owner_live);

}  // namespace elasticjob::lifecycle

#endif  // ELASTICJOB_LIFECYCLE_LIFECYCLE_READS_H_
