// ScheduleJobBootstrap: runs one job on its cron across the cluster, as ElasticJob's
// ScheduleJobBootstrap does. Schedule() registers the job (config, server, instance,
// resharding flag, leader election) and arms its trigger; Shutdown() stops the trigger,
// waits (bounded) for a run in progress, removes this instance's node and leadership.
//
// While scheduled, the job follows the registry (docs/runtime.md): a config update
// reschedules and reshards; a server set DISABLED loses its items and leadership; an
// operator's `trigger/{instanceId}` runs it now (after the current run, if one is going);
// deleting this instance's node stops it here; with failover on, a crashed instance's
// running items are claimed and run at once; a lost session pauses the trigger until the
// instance is registered again on the new session. Job listeners (BootstrapOptions::listeners
// and the config's jobListenerTypes; elasticjob/api/job_listener.h) run before and after
// each execution, on every instance or once across the cluster.
//
// All bootstraps of a process share one timer thread and two small pools (coordination: 2
// threads; items: CPU x 2 threads), so a thousand jobs need no thousand threads. A job is
// a C++ SimpleJob or a type name ("SCRIPT", running `script.command.line`). ScheduleAll
// registers many jobs at once.
//
// Thread safety: Schedule and Shutdown must not race each other; otherwise thread-safe.
//
//   auto reg = elasticjob::NewRegistryCenter("zookeeper://127.0.0.1:2181/demo");
//   (*reg)->Init();
//   auto config = elasticjob::JobConfiguration::Builder("orderSync", 3).Cron("0/5 * * * *
//   ?").Build(); elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<OrderSyncJob>(),
//   *config); if (auto s = job.Schedule(); !s.ok()) { std::cerr << s << "\n"; }
//   ...
//   job.Shutdown();
#ifndef ELASTICJOB_BOOTSTRAP_SCHEDULE_JOB_BOOTSTRAP_H_
#define ELASTICJOB_BOOTSTRAP_SCHEDULE_JOB_BOOTSTRAP_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "elasticjob/api/job_listener.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/clock.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/run_reports.h"

namespace elasticjob {

struct BootstrapOptions {
  // What `/{job}` holds: ElasticJob writes the job class; a C++ job can name the Java class
  // it stands in for ("com.acme.OrderJob"). Default: "SCRIPT" for script jobs, else
  // "CPP_SIMPLE".
  std::string job_type_name;
  // The address to register; default: detected (see docs/runtime.md).
  std::string server_ip;
  // Time source; default: the system clock. Borrowed.
  Clock* clock = nullptr;
  // Called after every item run (default: one line on stdout), on the item's thread.
  // The options are copied into every job scheduled with them, so with many jobs a
  // listener that captures much should capture one pointer to it instead: a small closure
  // lives inside the std::function, and every job's runs then call the one object.
  std::function<void(const ItemRunReport&)> on_item_run;
  // Called after every trigger is handled (default: none). Copied like on_item_run.
  std::function<void(const TriggerReport&)> on_trigger;
  // Listeners of this job, besides those named by the config's jobListenerTypes.
  std::vector<JobListener> listeners;
  // More jobListenerTypes names (the built-in ones are LOG and DISTRIBUTE_ONCE_LOG).
  std::map<std::string, JobListenerFactory> listener_types;
  // Bound on the wait for a run in progress at Shutdown().
  std::chrono::milliseconds shutdown_timeout{std::chrono::seconds(30)};
};

class ScheduleJobBootstrap {
 public:
  // REQUIRES: `registry` is initialised and outlives this bootstrap.
  ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                       JobConfiguration config, BootstrapOptions options = {});
  // A job by type name: "SCRIPT" (props `script.command.line`).
  ScheduleJobBootstrap(RegistryCenter& registry, std::string job_type, JobConfiguration config,
                       BootstrapOptions options = {});
  ~ScheduleJobBootstrap();  // Shutdown()
  ScheduleJobBootstrap(const ScheduleJobBootstrap&) = delete;
  ScheduleJobBootstrap& operator=(const ScheduleJobBootstrap&) = delete;

  // Registers the job and arms its trigger. Fails naming the job and the problem: invalid
  // configuration, job conflict, an unknown job type, registry errors.
  Status Schedule();
  // Stops the job on this instance (idempotent).
  void Shutdown();

  // Schedule() of many jobs, their registrations overlapping: up to `parallelism` of them
  // are in flight at once, each on a thread that lives only for this call (the registry
  // pipelines their round trips on its one session). A thousand jobs start in about the
  // time of a hundred one after another. Returns each job's Status, in the order given;
  // a failure leaves the others scheduled. REQUIRES: no null pointer.
  static std::vector<Status> ScheduleAll(std::span<ScheduleJobBootstrap* const> jobs,
                                         int parallelism = kDefaultParallelism);
  // Shutdown() of many jobs, overlapping in the same way (each removes its instance node
  // and leadership: two round trips a job).
  static void ShutdownAll(std::span<ScheduleJobBootstrap* const> jobs,
                          int parallelism = kDefaultParallelism);
  static constexpr int kDefaultParallelism = 32;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_BOOTSTRAP_SCHEDULE_JOB_BOOTSTRAP_H_
