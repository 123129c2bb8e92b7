// ScheduleJobBootstrap: runs one job on its cron across the cluster, as ElasticJob's
// ScheduleJobBootstrap does. Schedule() registers the job (config, server, instance,
// resharding flag, leader election) and arms its trigger; Shutdown() stops the trigger,
// waits (up to a deadline) for a run in progress, removes this instance's node and leadership.
//
// Lifecycle: a bootstrap schedules its job once. NEW --Schedule()--> SCHEDULED (or FAILED,
// cleaned up) --Stop()--> STOPPED --Join(timeout)--> JOINED; Shutdown() is Stop() then
// Join(options.shutdown_timeout), and the destructor calls it. A second Schedule(), a
// Schedule() after a failed one and a Schedule() after Stop()/Shutdown() fail with
// FAILED_PRECONDITION and change nothing (make a new bootstrap to schedule again). Join's
// timeout is a bound on the wait for runs in progress: a run still going then is abandoned
// (its item code goes on to its end on the shared item pool; nothing of this job's
// callbacks, listeners or registry work runs after Join returns; see docs/runtime.md).
// Schedule() on a temporary does not compile (it would be shut down at once).
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
// threads; items: CPU x 4 threads), so a thousand jobs need no thousand threads. Each job runs
// at most its `jobExecutorThreadPoolSizeProviderType` of items at once on the item pool (CPU:
// CPU x 2, SINGLE_THREAD: 1), so one slow job cannot take the whole pool. A job is a C++
// SimpleJob, a C++ item executor (a DataflowJob<T>: elasticjob/api/dataflow_job.h) or a type
// name: "SCRIPT" (`script.command.line`), "HTTP" (`http.uri`, ...) or a registered one
// (elasticjob/api/job_item_executor.h, docs/job-types.md). A failed item's cause goes to the
// job's error handler (jobErrorHandlerType: LOG by default; docs/error-handlers.md).
// ScheduleAll registers many jobs at once.
//
// User code is fenced: an exception from the job, a listener, a sharding strategy,
// on_item_run or on_trigger is caught and logged (from the job: a failed item); it never
// terminates the process.
//
// Thread safety: every method may be called from any thread (a Stop() during Schedule()
// waits for it), but not from this job's own callbacks (Join would wait for itself).
//
// clang-format off
//   auto reg = elasticjob::NewRegistryCenter("zookeeper://127.0.0.1:2181/demo");
//   if (!reg.ok() || !(*reg)->Init().ok()) { ... }
//   auto config = elasticjob::JobConfiguration::Builder("orderSync", 3)
//                     .Cron("0/5 * * * * ?")
//                     .Build();
//   elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<OrderSyncJob>(), *config);
//   if (auto s = job.Schedule(); !s.ok()) { std::cerr << s << "\n"; }
//   ...
//   job.Shutdown();
// clang-format on
//
// A complete program: examples/embedding/simple_job.cc.
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

#include "elasticjob/api/job_item_executor.h"
#include "elasticjob/api/job_listener.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/api/task_job.h"
#include "elasticjob/clock.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/logger.h"
#include "elasticjob/metrics/metrics.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/run_reports.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "elasticjob/tracing/tracer.h"

namespace elasticjob {

class TaskModels;  // elasticjob/bootstrap/task_models.h

// The dump port of a job whose configuration sets monitorPort (docs/dump.md). Jobs of one
// process with the same address and port share one listener, started with the options of
// the first of them.
struct DumpPortOptions {
  // The address the port listens on: loopback, so only this host can ask. "0.0.0.0" for
  // every interface (the dump masks IPv4 addresses, not the rest of the job's nodes).
  std::string address = "127.0.0.1";
  // How long a client gets to send its line, and again to take the reply.
  std::chrono::milliseconds io_timeout{std::chrono::seconds(5)};
  // Connections open at once; one more is accepted and closed at once.
  int max_connections = 8;
};

struct BootstrapOptions {
  // What `/{job}` holds: ElasticJob writes the job class; a C++ job can name the Java class
  // it stands in for ("com.acme.OrderJob"). Default: the type name for a job by type name
  // ("SCRIPT", "HTTP"), "CPP_SIMPLE" for a SimpleJob, the item executor's type_name() for
  // one ("CPP_DATAFLOW" for a DataflowJob).
  std::string job_type_name;
  // The address to register; default: detected (see docs/runtime.md).
  std::string server_ip;
  // Time source; default: the system clock. Borrowed.
  Clock* clock = nullptr;
  // Where this job's log lines go (elasticjob/logger.h); shared by the jobs given it. Null:
  // the process default (SetDefaultLogger; built in: spdlog on stderr).
  std::shared_ptr<Logger> logger;
  // Called after every item run (default: none; the library prints nothing), on the item's
  // thread. An exception from it is caught and logged. Never called after Join() returned.
  // The options are copied into every job scheduled with them, so with many jobs a
  // listener that captures much should capture one pointer to it instead: a small closure
  // lives inside the std::function, and every job's runs then call the one object.
  std::function<void(const ItemRunReport&)> on_item_run;
  // Called after every trigger is handled (default: none). Copied like on_item_run, fenced
  // like it.
  std::function<void(const TriggerReport&)> on_trigger;
  // Listeners of this job, besides those named by the config's jobListenerTypes.
  std::vector<JobListener> listeners;
  // More jobListenerTypes names (the built-in ones are LOG and DISTRIBUTE_ONCE_LOG).
  std::map<std::string, JobListenerFactory> listener_types;
  // This job's sharding strategy, when its configuration names none (jobShardingStrategyType
  // unset: the configuration given to Schedule() gets this strategy's type(), and the
  // registry's configuration, which wins as for every field, must name it). Also
  // registered under its type(), as sharding_strategies are. Null: none.
  std::shared_ptr<const JobShardingStrategy> sharding_strategy;
  // More strategies that jobShardingStrategyType may name, each under its type(), registered
  // explicitly here (no static self-registration). The built-in ones are AVG_ALLOCATION
  // (default), ODEVITY, ROUND_ROBIN and SINGLE_SHARDING_BALANCE. A null entry, an empty name
  // or a name taken twice (a built-in one included) fails Schedule(), as does a
  // configuration naming an unknown type (the error lists the known ones).
  std::vector<std::shared_ptr<const JobShardingStrategy>> sharding_strategies;
  // Where and how the dump port listens when the configuration's monitorPort is not -1. A
  // port that cannot be opened (taken, say) is logged; the job runs without it.
  DumpPortOptions dump_port;
  // More job types a job by type name may name, for this bootstrap only (besides the built-in
  // SCRIPT and HTTP and those of RegisterJobType; a name here wins over the latter). A
  // built-in name, an empty name or a null factory fails Schedule().
  std::map<std::string, JobItemExecutorFactory> job_types;
  // Bound on the wait for runs in progress at Shutdown() (Join's timeout).
  std::chrono::milliseconds shutdown_timeout{std::chrono::seconds(30)};
  // Event tracing (elasticjob/tracing/tracer.h): the process's Tracer, shared by its jobs;
  // null: off. Every item run, trigger step and job log line is written to its database;
  // nothing of it goes to the registry. Must be one Tracer::Open made (else Schedule()
  // fails). SCRIPT jobs' stdout and stderr are captured into their executions' logs then.
  std::shared_ptr<Tracer> tracer;
  // A task job's TaskWorker RPC endpoint (docs/task-models.md): "host:port", port 0 picks a
  // free one. Default: "127.0.0.1:0".
  std::string task_rpc_address;
  // A MapJob/MapReduceJob's shared task store (docs/task-models.md):
  // "postgresql://user:password@host:port/db", the same on every instance of the job. The
  // run's sub-tasks and results are kept there, and when its coordinator is lost the next
  // trigger on the new leader resumes the run (no finished sub-task runs again). Per
  // process, like the tracer's URL: nothing of it goes to the registry. "": the local store
  // (a temp SQLite file that dies with the coordinator). Another scheme fails Schedule().
  std::string task_store;
  // The task models (elasticjob/bootstrap/task_models.h, component elasticjob::tasks): a
  // SimpleJob or a job by type name with the prop `task.broadcast: "true"` runs on them, and
  // without them fails Schedule() saying so. Task jobs (the TaskJob constructors) need not
  // set it. Null: none.
  std::shared_ptr<const TaskModels> task_models;
  // Prometheus metrics (elasticjob/metrics/metrics.h; docs/metrics.md): the process's
  // Metrics, shared by its jobs; this job's item runs, lateness, misfires, failovers and
  // the rest are recorded there, and its readiness (/readyz) counted. Null: not recorded.
  std::shared_ptr<Metrics> metrics;
};

class ScheduleJobBootstrap {
 public:
  // REQUIRES: `registry` is initialised and outlives this bootstrap.
  ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                       JobConfiguration config, BootstrapOptions options = {});
  // A job by type name: "SCRIPT" (props `script.command.line`), "HTTP" (props `http.*`), or
  // one of options.job_types or RegisterJobType's. An unknown name fails Schedule(), listing
  // the known ones. With the prop `task.broadcast: "true"` (this or the SimpleJob
  // constructor) the job is broadcast: each trigger runs it once on every live instance
  // (docs/task-models.md; one item).
  ScheduleJobBootstrap(RegistryCenter& registry, std::string job_type, JobConfiguration config,
                       BootstrapOptions options = {});
  // A C++ item executor (a DataflowJob<T>, say).
  ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<JobItemExecutor> executor,
                       JobConfiguration config, BootstrapOptions options = {});
  // A task job (BroadcastJob, MapJob, MapReduceJob; elasticjob/api/task_job.h): `config` has
  // one item; its sharding strategy is TASK_LEADER unless it names one. Schedule() also
  // starts this instance's task endpoint (options.task_rpc_address).
  ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<TaskJob> job,
                       JobConfiguration config, BootstrapOptions options = {});
  ~ScheduleJobBootstrap();  // Shutdown()
  ScheduleJobBootstrap(const ScheduleJobBootstrap&) = delete;
  ScheduleJobBootstrap& operator=(const ScheduleJobBootstrap&) = delete;

  // Registers the job and arms its trigger, once. Fails naming the job and the problem:
  // invalid configuration, job conflict, an unknown job type, sharding strategy or
  // jobExecutorThreadPoolSizeProviderType, registry errors (a failure leaves nothing
  // registered or running, and the bootstrap FAILED). FAILED_PRECONDITION when called
  // before (whatever it returned) or after Stop()/Shutdown(): a bootstrap is never rebuilt.
  Status Schedule() &;
  // A temporary would be shut down by its destructor as soon as it is scheduled.
  Status Schedule() && = delete;
  // No new run from now on (cron, operator, failover, misfire re-run) and no waiting; runs
  // in progress go on. Idempotent; also before Schedule() (which then fails).
  void Stop();
  // Stop(), then waits up to `timeout` for the runs in progress, then leaves the cluster
  // (removes `instances/{id}` and, if leading, `leader/election/instance`: two registry round
  // trips, bounded by the registry's own timeouts) and returns. OK when every run ended;
  // TIMEOUT naming what was abandoned otherwise: an item already in the job's code goes on to
  // its end on the shared item pool, but no callback, listener or registry work of this job
  // runs after Join returns, and an item not yet started does not start (their reports are
  // dropped, their running marks left for the next owner, as a crash leaves them). A later
  // Join returns at once with the first one's result. REQUIRES: not called from this job's
  // callbacks, listeners or code; a custom Clock outlives what Join abandoned.
  Status Join(std::chrono::milliseconds timeout);
  // Stop() and Join(options.shutdown_timeout); the result is logged when not OK.
  void Shutdown();

  // Schedule() of many jobs, their registrations overlapping: up to `parallelism` of them
  // are in flight at once, each on a thread that lives only for this call (the registry
  // pipelines their round trips on its one session, and loads their caches together).
  // Their writes go grouped: one listing of each registry's namespace tells which jobs it
  // lacks, whose root and config are then created without a look first, and the jobs'
  // config and online transactions are merged into few multi-ops (on ZooKeeper up to 1,000
  // steps a request). A job whose grouped write fails (another process wrote its nodes
  // meanwhile) goes on as its own Schedule() would: the registry's configuration wins.
  // Returns each job's Status, in the order given; a failure leaves the others scheduled.
  // REQUIRES: no null pointer.
  static std::vector<Status> ScheduleAll(std::span<ScheduleJobBootstrap* const> jobs,
                                         int parallelism = kDefaultParallelism);
  // Shutdown() of many jobs: all are stopped first, then joined overlapping in the same way
  // (each removes its instance node and leadership: two round trips a job), each within its
  // own shutdown_timeout counted from the call.
  static void ShutdownAll(std::span<ScheduleJobBootstrap* const> jobs,
                          int parallelism = kDefaultParallelism);
  static constexpr int kDefaultParallelism = 256;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_BOOTSTRAP_SCHEDULE_JOB_BOOTSTRAP_H_
