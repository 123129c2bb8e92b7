// JobConfigurationAPI: reads, adds, updates and removes a job's configuration in the
// registry, as ElasticJob 3.0.5's JobConfigurationAPI does (docs/operations.md). Running
// instances follow the `/{job}/config` node: an update reschedules them (cron, time zone)
// and, when shardingTotalCount changes, reshards; removing the job shuts them down.
//
// Thread safety: the implementation holds no state besides the borrowed registry and may be
// used from any thread (calls block on the registry).
//
//   auto reg = elasticjob::NewRegistryCenter("zookeeper://127.0.0.1:2181/demo");
//   (*reg)->Init();
//   auto api = elasticjob::NewJobConfigurationAPI(**reg);
//   auto config = api->GetJobConfiguration("orderSync");
//   config->cron = "0/10 * * * * ?";
//   if (Status s = api->UpdateJobConfiguration(*config); !s.ok()) { ... }
#ifndef ELASTICJOB_LIFECYCLE_JOB_CONFIGURATION_API_H_
#define ELASTICJOB_LIFECYCLE_JOB_CONFIGURATION_API_H_

#include <memory>
#include <string_view>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"

namespace elasticjob {

class JobConfigurationAPI {
 public:
  virtual ~JobConfigurationAPI() = default;

  // The job's configuration. NOT_FOUND "job 'x' not found" when it has no `/{job}/config`;
  // FAILED_PRECONDITION naming the job and the key when the node is not a readable config
  // (the registry's state, not the caller's argument, is wrong); a registry error otherwise.
  virtual Result<JobConfiguration> GetJobConfiguration(std::string_view job_name) = 0;

  // Replaces the configuration of the existing job `config.job_name`. The configuration is
  // validated first (ValidateJobConfiguration): a bad one is refused with INVALID_ARGUMENT
  // naming the field and the value, and nothing is written. NOT_FOUND when the job has no
  // config. The YAML is written for the release the registry's current node was written by
  // (3.0.4's thread-pool key if it uses it, else 3.0.5's).
  virtual Status UpdateJobConfiguration(const JobConfiguration& config) = 0;

  // Registers a new job (beyond ElasticJob's API): `/{job}` gets `job_type` ("SCRIPT",
  // "HTTP", or a class name) and `/{job}/config` its YAML, as a starting instance writes
  // them. Validated as UpdateJobConfiguration; ALREADY_EXISTS when the job has a config
  // (nothing changed then). Instances that follow the namespace (`elasticjob agent`) start
  // it.
  virtual Status AddJob(const JobConfiguration& config, std::string_view job_type) = 0;

  // Removes the job's whole subtree `/{job}`, as ElasticJob's removeJobConfiguration does:
  // running instances see their instance node go and shut the job down. NOT_FOUND when the
  // job does not exist.
  virtual Status RemoveJobConfiguration(std::string_view job_name) = 0;
};

// REQUIRES: `registry` is initialised and outlives the result.
std::unique_ptr<JobConfigurationAPI> NewJobConfigurationAPI(RegistryCenter& registry);

}  // namespace elasticjob

#endif  // ELASTICJOB_LIFECYCLE_JOB_CONFIGURATION_API_H_
