// JobItemExecutor: how one sharding item of a job of some type runs, as ElasticJob's
// TypedJobItemExecutor / ClassedJobItemExecutor SPI. A job type is a name ("SCRIPT",
// "HTTP", "MY_TYPE") and a factory making the job's item executor from its configuration;
// `ScheduleJobBootstrap(registry, "MY_TYPE", config)`, `OneOffJobBootstrap` and
// `elasticJobType: MY_TYPE` in an `elasticjob run` file look the name up. A C++ object can
// also be given directly (a DataflowJob<T>, elasticjob/api/dataflow_job.h).
//
// Types are registered explicitly, never by static self-registration: for one bootstrap in
// BootstrapOptions::job_types, for the whole process with RegisterJobType (before the
// bootstraps that use it start). The built-in types are SCRIPT and HTTP (docs/job-types.md);
// their names cannot be taken. An unknown name fails Schedule() with an error listing the
// known ones.
//
// The factory runs when the job starts (its error fails Schedule(), naming the prop and the
// value): on the configuration given, before anything is written, then on the registry's,
// which wins. It runs again whenever the job's configuration changes in the registry (its
// error is then logged, and the job keeps its last good executor).
//
// Thread safety: Process may be called concurrently for different items of one job (up to
// the job's jobExecutorThreadPoolSizeProviderType limit); implementations must allow that.
// RegisterJobType and RegisteredJobTypes are thread-safe.
//
// clang-format off
//   class EchoExecutor : public elasticjob::JobItemExecutor {
//    public:
//     void Process(const elasticjob::JobConfiguration& config,
//                  const elasticjob::ShardingContext& ctx, elasticjob::JobRunState&) override {
//       std::cout << config.props.at("echo.prefix") << ctx.sharding_item << "\n";
//     }
//   };
//   elasticjob::RegisterJobType("ECHO", [](const elasticjob::JobConfiguration& c)
//       -> elasticjob::Result<std::shared_ptr<elasticjob::JobItemExecutor>> {
//     if (!c.props.contains("echo.prefix")) {
//       return elasticjob::InvalidArgument("props.echo.prefix: missing");
//     }
//     return std::make_shared<EchoExecutor>();
//   });
//   elasticjob::ScheduleJobBootstrap job(**reg, "ECHO", config);
// clang-format on
#ifndef ELASTICJOB_API_JOB_ITEM_EXECUTOR_H_
#define ELASTICJOB_API_JOB_ITEM_EXECUTOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/api/sharding_context.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/status.h"

namespace elasticjob {

// What an item executor may ask about its job while it runs (ElasticJob's
// JobFacade.isEligibleForJobRunning).
class JobRunState {
 public:
  virtual ~JobRunState() = default;
  // False once this instance is shutting the job down, the job is paused here (its registry
  // session suspended or lost), or the cluster needs resharding (the resharding flag is
  // set: an instance joined or left, a server was disabled, the item count changed): a
  // looping executor (a streaming DataflowJob) ends its item then. Reads the registry (one
  // read); false when the registry cannot answer.
  virtual bool IsEligibleForJobRunning() = 0;
};

class JobItemExecutor {
 public:
  virtual ~JobItemExecutor() = default;
  // Runs one item. `config`: the job's configuration now (the registry's, which wins).
  // Throwing (any exception) fails the item and hands the cause to the job's error
  // handler; it never kills a thread.
  virtual void Process(const JobConfiguration& config, const ShardingContext& context,
                       JobRunState& state) = 0;
  // Checks `config` when the job starts and when its configuration changes (an error fails
  // Schedule(), or is logged and the last good configuration kept). Default: OK.
  virtual Status Validate(const JobConfiguration& config) {
    (void)config;
    return Status::Ok();
  }
  // What `/{job}` holds when BootstrapOptions::job_type_name is empty and the executor was
  // given as an object (a job by type name writes the type name).
  virtual std::string type_name() const { return "CPP_JOB"; }
};

// Makes a job's item executor from its configuration; fails (INVALID_ARGUMENT naming the
// prop and the value) when the configuration does not fit the type.
using JobItemExecutorFactory =
    std::function<Result<std::shared_ptr<JobItemExecutor>>(const JobConfiguration& config)>;

// Registers `type` for every bootstrap of this process that starts from now on.
// INVALID_ARGUMENT for an empty name or a null factory; ALREADY_EXISTS for a name taken
// (a built-in one included). Nothing is ever unregistered.
Status RegisterJobType(const std::string& type, JobItemExecutorFactory factory);

// The type names known process-wide, sorted: the built-in ones and those registered.
std::vector<std::string> RegisteredJobTypes();

}  // namespace elasticjob

#endif  // ELASTICJOB_API_JOB_ITEM_EXECUTOR_H_
