// OneOffJobBootstrap: a job with no cron that runs when asked, as ElasticJob's
// OneOffJobBootstrap. Execute() runs it once across the cluster: it writes
// `trigger/{instanceId}` for every live instance of the job, and each instance (this one
// included, and Java instances alike) deletes its node and runs its own items. A trigger that
// reaches an instance while it runs the job is queued and runs after that run.
//
// The first Execute() (or Start()) registers the job as ScheduleJobBootstrap::Schedule does:
// config, server, instance, leader election, listeners. Register every instance with Start()
// before the first Execute() so that each one takes part.
//
// Lifecycle: as ScheduleJobBootstrap's. Start() registers once (a later Start() returns the
// first one's result); Start() or Execute() after Stop()/Shutdown() fails with
// FAILED_PRECONDITION; neither compiles on a temporary.
//
// Thread safety: as ScheduleJobBootstrap.
//
// clang-format off
//   elasticjob::OneOffJobBootstrap job(**reg, std::make_shared<ReindexJob>(),
//       *elasticjob::JobConfiguration::Builder("reindex", 4).Build());
//   if (auto s = job.Execute(); !s.ok()) { std::cerr << s << "\n"; }
// clang-format on
#ifndef ELASTICJOB_BOOTSTRAP_ONE_OFF_JOB_BOOTSTRAP_H_
#define ELASTICJOB_BOOTSTRAP_ONE_OFF_JOB_BOOTSTRAP_H_

#include <chrono>
#include <memory>
#include <string>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

namespace elasticjob {

class OneOffJobBootstrap {
 public:
  // REQUIRES: `registry` is initialised and outlives this bootstrap; `config` has no cron.
  OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                     JobConfiguration config, BootstrapOptions options = {});
  OneOffJobBootstrap(RegistryCenter& registry, std::string job_type, JobConfiguration config,
                     BootstrapOptions options = {});
  OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<JobItemExecutor> executor,
                     JobConfiguration config, BootstrapOptions options = {});
  ~OneOffJobBootstrap();  // Shutdown()
  OneOffJobBootstrap(const OneOffJobBootstrap&) = delete;
  OneOffJobBootstrap& operator=(const OneOffJobBootstrap&) = delete;

  // Registers this instance without running anything, once (a later call returns the first
  // one's result; Execute calls it). FAILED_PRECONDITION after Stop()/Shutdown().
  Status Start() &;
  Status Start() && = delete;
  // Runs the job once on every live instance (see above). Returns once the trigger nodes
  // are written, not when the runs end; FAILED_PRECONDITION after Stop()/Shutdown().
  // Under jobErrorHandlerType THROW (the registry's configuration) it waits for this
  // instance's run and returns its failure: INTERNAL naming the first failed item, the
  // instance and the cause (other instances' failures are theirs: logged there), CANCELLED
  // when stopped before the run ended. ElasticJob throws the cause into Quartz's thread
  // instead, where the caller never sees it.
  Status Execute() &;
  Status Execute() && = delete;
  // As ScheduleJobBootstrap's.
  void Stop();
  Status Join(std::chrono::milliseconds timeout);
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_BOOTSTRAP_ONE_OFF_JOB_BOOTSTRAP_H_
