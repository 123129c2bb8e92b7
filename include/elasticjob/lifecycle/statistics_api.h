// The read side of the lifecycle module, as ElasticJob 3.0.5's JobStatisticsAPI,
// ServerStatisticsAPI and ShardingStatisticsAPI compute it from the registry (statuses and
// their rules: docs/operations.md), plus the next fire times of a job.
//
// Every call reads the server (no cache), so it sees every write committed before it.
//
// Thread safety: stateless besides the borrowed registry; any thread (calls block).
//
//   auto stats = elasticjob::NewJobStatisticsAPI(**reg);
//   for (const auto& job : *stats->GetAllJobsBriefInfo()) {
//     std::cout << job.job_name << " " << JobStatusName(job.status) << "\n";
//   }
#ifndef ELASTICJOB_LIFECYCLE_STATISTICS_API_H_
#define ELASTICJOB_LIFECYCLE_STATISTICS_API_H_

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"

namespace elasticjob {

enum class JobStatus {
  kOk,            // instances running, sharding settled
  kCrashed,       // no live instance
  kDisabled,      // every server of the job DISABLED
  kShardingFlag,  // no item assigned, or one assigned to an instance that is gone
};
// "OK", "CRASHED", "DISABLED", "SHARDING_FLAG" (ElasticJob's names).
const char* JobStatusName(JobStatus status);

struct JobBriefInfo {
  std::string job_name;
  JobStatus status = JobStatus::kOk;
  // From the configuration (empty in the per-server view, as in ElasticJob).
  std::string description;
  std::string cron;
  int sharding_total_count = 0;
  // Live instances (in the per-server view: those on that server).
  int instance_count = 0;
};

class JobStatisticsAPI {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  virtual ~JobStatisticsAPI() = default;

  // The number of jobs in the namespace (top-level nodes that hold a config).
  virtual Result<int> GetJobsTotalCount() = 0;
  // Every job with a config, sorted by name. A job whose config is not readable is listed
  // with its status, no cron, and "config not readable: <reason>" as its description.
  virtual Result<std::vector<JobBriefInfo>> GetAllJobsBriefInfo() = 0;
  // One job; NOT_FOUND "job 'x' not found" without a config.
  virtual Result<JobBriefInfo> GetJobBriefInfo(std::string_view job_name) = 0;
  // The jobs registered on server `ip`, sorted by name, each with status DISABLED or OK (that
  // server's state) and its instances on that server. Empty when the server runs none.
  virtual Result<std::vector<JobBriefInfo>> GetJobsBriefInfo(std::string_view server_ip) = 0;
  // Up to `count` fire times of the job strictly after `after`, from its registered cron and
  // time zone (the system's zone when it names none): fewer when the cron stops firing,
  // none for a job without a cron. NOT_FOUND for an unknown job, FAILED_PRECONDITION for a
  // registered config whose cron or zone is invalid.
  virtual Result<std::vector<TimePoint>> GetNextFireTimes(std::string_view job_name, int count,
                                                          TimePoint after) = 0;
};

struct ServerBriefInfo {
  std::string server_ip;
  std::set<std::string> instances;  // live instance ids on this server, over all jobs
  std::set<std::string> job_names;  // jobs with a `servers/{ip}` node for it
  int disabled_jobs = 0;            // of those, how many have it DISABLED
};

class ServerStatisticsAPI {
 public:
  virtual ~ServerStatisticsAPI() = default;
  // The number of distinct server IPs over all jobs.
  virtual Result<int> GetServersTotalCount() = 0;
  // Every server, sorted by IP.
  virtual Result<std::vector<ServerBriefInfo>> GetAllServersBriefInfo() = 0;
};

enum class ShardingStatus {
  kDisabled,      // `sharding/{i}/disabled` exists
  kRunning,       // `sharding/{i}/running` exists
  kShardingFlag,  // no owner, or its owner's instance node is gone
  kPending,       // assigned to a live instance, waiting for its next trigger
};
// "DISABLED", "RUNNING", "SHARDING_FLAG", "PENDING".
const char* ShardingStatusName(ShardingStatus status);

struct ShardingInfo {
  int item = 0;
  std::string instance_id;  // the owner (`sharding/{i}/instance`); empty when unassigned
  std::string server_ip;    // the owner's IP (from its instance node, else from its id)
  ShardingStatus status = ShardingStatus::kPending;
  bool failover = false;  // `sharding/{i}/failover` exists: a failover run holds it
};

class ShardingStatisticsAPI {
 public:
  virtual ~ShardingStatisticsAPI() = default;
  // The job's items, by item number. NOT_FOUND for an unknown job.
  virtual Result<std::vector<ShardingInfo>> GetShardingInfo(std::string_view job_name) = 0;
};

// REQUIRES: `registry` is initialised and outlives the result.
std::unique_ptr<JobStatisticsAPI> NewJobStatisticsAPI(RegistryCenter& registry);
std::unique_ptr<ServerStatisticsAPI> NewServerStatisticsAPI(RegistryCenter& registry);
std::unique_ptr<ShardingStatisticsAPI> NewShardingStatisticsAPI(RegistryCenter& registry);

}  // namespace elasticjob

#endif  // ELASTICJOB_LIFECYCLE_STATISTICS_API_H_
