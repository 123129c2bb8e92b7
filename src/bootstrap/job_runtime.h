// JobRuntime: one job on this instance, the composition root behind both bootstraps. It
// builds the job's services over the registry, starts its listeners, registers it (as
// ElasticJob's SchedulerFacade.registerStartUpInfo does), arms its cron trigger on the
// process's shared timer, and implements what the listeners ask of it (JobController).
//
// Process-wide machinery is shared by every job using the same Clock: one timer thread, a
// trigger pool (due triggers first, then the jobs' listener strands and the registry work
// around runs) and an item pool (user code). None grows with the number of jobs.
//
// Lifecycle: Start once (a second Start, or one after Stop, fails), Stop (no new runs), Join
// (waits up to a deadline, leaves the cluster, closes the job's Gate: a run it abandoned
// calls no user callback and no registry after that; bootstrap/user_code.h).
//
// Thread safety: Start, Stop and Join must not race each other (the bootstraps serialize
// them); everything else is thread-safe. Tasks keep the runtime alive (shared_ptr) while they
// are queued or running.
#ifndef ELASTICJOB_BOOTSTRAP_JOB_RUNTIME_H_
#define ELASTICJOB_BOOTSTRAP_JOB_RUNTIME_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/gated_registry.h"
#include "bootstrap/item_limiter.h"
#include "bootstrap/user_code.h"
#include "config/config_service.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/mutex.h"
#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/time_zone.h"
#include "election/leader_service.h"
#include "execution/execution_service.h"
#include "executor/job_executor.h"
#include "executor/job_listeners.h"
#include "executor/run_path.h"
#include "executor/typed_job.h"
#include "failover/failover_service.h"
#include "guarantee/guarantee_service.h"
#include "infra/job_metrics.h"
#include "instance/instance_service.h"
#include "instance/server_service.h"
#include "listener/listener_manager.h"
#include "reconcile/reconcile_service.h"
#include "sharding/sharding_service.h"
#include "snapshot/dump_server.h"
#include "storage/change_notifier.h"
#include "storage/job_node_storage.h"
#include "trigger/prepare_lead.h"
#include "trigger/timer_scheduler.h"
#include "workflow/node_job.h"

namespace elasticjob::bootstrap {

struct SharedRuntime;

// How a job is started among many (ScheduleAll); the defaults start it alone.
struct StartHints {
  // No `/{job}` node in the registry moments ago (ConfigService::SetUp's `seen_absent`).
  bool seen_absent = false;
  // The online registration's transaction grouped with other jobs' (FillJobNodes).
  bool grouped = false;
};

class JobRuntime final : public listener::JobController,
                         public sharding::RunningMarkWatcher,
                         private executor::RunPath::Owner,
                         public std::enable_shared_from_this<JobRuntime> {
 public:
  // `job` and `item_executor` null: a job by type name (`job_type`: "SCRIPT", "HTTP", ...).
  JobRuntime(RegistryCenter& registry, std::shared_ptr<SimpleJob> job, std::string job_type,
             JobConfiguration config, BootstrapOptions options,
             std::shared_ptr<JobItemExecutor> item_executor = nullptr);
  ~JobRuntime() override;

  // Registers the job and starts its listeners; `scheduled` arms the cron trigger (a one-off
  // job has no cron and runs only when triggered). FAILED_PRECONDITION when called before or
  // after Stop. On failure the caller Joins (what was registered is removed).
  Status Start(bool scheduled, StartHints hints = {});
  // Writes `trigger/{id}` for every live instance of the job: each runs its items once.
  Status TriggerCluster();
  // TriggerCluster, then waits for this instance's run of it (OneOffJobBootstrap::Execute
  // under jobErrorHandlerType THROW): OK when every item here succeeded (or it had none),
  // INTERNAL naming the first failed item and its cause, the trigger's own error, or
  // CANCELLED when the job is stopped first.
  Status TriggerClusterAndWait();
  // The error handler's type now (jobErrorHandlerType, the registry's).
  std::string error_handler_type() { return typed_ != nullptr ? typed_->error_handler_type() : ""; }
  // No new runs; cancels the job's waits; returns at once (idempotent).
  void Stop();
  // Stop, then waits until `deadline` for triggers armed, queued or running, then leaves the
  // cluster and closes the gate. OK, or TIMEOUT naming what was abandoned. Once: a later call
  // returns the first one's result.
  Status Join(std::chrono::steady_clock::time_point deadline);

  const JobConfiguration& config() const { return config_; }
  RegistryCenter& registry() const { return registry_; }

  // listener::JobController
  bool IsShutdown() override;
  bool IsPaused() override;
  void Pause() override;
  void Resume() override;
  void Reschedule(const JobConfiguration& config) override;
  void TriggerNow() override;
  void TriggerNowWithParameter(const std::string& parameter) override;
  void TakeWorkflowRun(const std::string& name, const std::string& value) override;
  void FailoverIfNecessary() override;
  void ShardIfNecessary() override;
  void ShutdownInstance() override;
  std::vector<int> LocallyRunningItems() override;
  void FenceRunningItems() override;
  void StopRunning(std::optional<int> item, std::optional<int64_t> before) override;
  void ScheduleRunAt(const std::string& name) override;
  void OnDelayFire(const std::string& name) override;
  void CheckDelayEnded() override;
  void GuaranteeCleared(guarantee::Phase phase) override;

  // sharding::RunningMarkWatcher: each mark gets a watch of its own, delivering to the
  // job's listeners on its strand like the job's own watch.
  void WatchRunningMarks(const std::vector<int>& items) override;
  void StopWatchingRunningMarks() override;

 private:
  using Source = TriggerReport::Source;
  // What a config update changes besides the schedule: the job type's executor and error
  // handler, the item limit (what they refuse is logged; the last good ones stay).
  void ApplyConfig(const JobConfiguration& config);
  // The config's type names this instance must know (ConfigService's runnable check): the
  // sharding strategy, the item limit, the error handler (and its props), the listener
  // types. INVALID_ARGUMENT naming the field, the value and the known names.
  // A run at a time (`triggerAt/{name}`, scheduled_runs.cc): when it is due, the instance
  // that deletes the node writes every live instance's trigger node in the same multi-op.
  // Nodes already there at start-up come as the watch's replay (ScheduleRunAt).
  void FireRunAt(const std::string& name);
  // How long a run at a time whose multi-op failed waits before it is tried again.
  static constexpr std::chrono::milliseconds kRunAtRetry{1000};
  // A fixed-delay job (fixed_delay.cc): measures the registry clock's offset, writes the
  // first fire unless the job has one, and ends at once this instance's part of a fire that
  // began before it started.
  Status StartFixedDelay();
  // This instance's part of fixed-delay fire `fire_ms` (registry ms; 0: none) is over:
  // records it (`delay/ended/{id}`) and checks whether the fire is over (DelayEndCheck).
  void EndDelayPart(int64_t fire_ms);
  // When the open fire has ended on every live instance, with no running mark and no
  // failover item left, moves the job on to `delay/next/{registry now + delay}`.
  void DelayEndCheck();
  // The fixed-delay fire a run from `source` ended (a fire's run), else 0.
  int64_t DelayFireOf(Source source);
  // Runs `task` soon on the trigger pool. REQUIRES: BeginTask counted it.
  void PostTask(std::function<void()> task);
  // Runs `task` at `at` on the process's timer.
  void RunAtTime(Clock::WallTime at, std::function<void()> task);
  Status CheckRunnable(const JobConfiguration& config);
  // Builds typed_ (the job's item executor and error handler) for `instance_id`.
  Status BuildTypedJob(const std::string& instance_id);
  // JobRunState::IsEligibleForJobRunning: not stopped, not paused, no resharding pending.
  bool EligibleForJobRunning();
  // Registers BootstrapOptions' sharding strategies with strategies_.
  Status RegisterStrategies();
  // Start's steps (Start settles the job's readiness in metrics_ after them).
  Status StartSteps(bool scheduled, StartHints hints);
  // The job's readiness in metrics_: its start ended (scheduled or not); it stopped.
  void ResolveStarting(bool scheduled);
  void Unscheduled();
  void ArmNextLocked(Clock::WallTime after) ELASTICJOB_REQUIRES(mu_);
  void ArmReconcile();
  // The latest fire time prepared (its trigger is under way, or due at that time).
  std::optional<Clock::WallTime> DueFire() const;
  // Serves this job on the dump port when monitorPort is set; a failure is logged.
  void OpenDumpPort();
  // The lead before a fire time (`due`, ArmNextLocked: the shared PrepareLead's): arms the
  // next one, and has this one's run prepared (RunPath::Prepare) and launched on the
  // LaunchBoard (RunPath::Launch), or arms RunPath::Fire for the fire time when it cannot be.
  // `arming`: the ArmNextLocked call that armed it; a later one (a reschedule) has armed the
  // next fire already.
  void OnPrepare(Clock::WallTime fire_time, uint64_t arming, Clock::WallTime due);
  // Cancels the armed fire (timer tasks, a prepared run not started); returns whether
  // anything was.
  bool CancelArmedLocked() ELASTICJOB_REQUIRES(mu_);
  // executor::RunPath::Owner: what the run path's steps ask of this runtime (run_path.h).
  std::shared_ptr<executor::RunPath::Owner> Hold() override;
  std::function<void()> LimitedStart(std::function<void()> run, std::shared_ptr<const void> keep,
                                     const void** touch) override;
  std::array<const void*, kStartTouches> StartTouches() override;
  Admission AdmitFire() override;
  void FireSkipped() override;
  void ClaimedAhead(Clock::WallTime answered, std::chrono::nanoseconds took) override;
  void LookForFailover() override;
  void RunEnded(Source source, const Result<executor::JobExecutor::Outcome>& outcome) override;
  void Reported(const TriggerReport& report) override;
  void Released() override;
  // Counts a task about to be posted; false once stopped.
  bool BeginTask();
  void EndTask();
  // Every event of the job's subtree (and of the running marks watched for the leader).
  void OnJobEvent(const TreeEvent& event);
  // The job's Watch's change count (JobExecutor's run plan), nullopt once it has ended.
  std::optional<uint64_t> RegistryChanges();
  // One line about this job to its logger (BootstrapOptions::logger, else the default).
  void Log(std::string_view level, std::string_view message) const override;

  // Declared first, so destroyed last: the shared machinery a Join that abandoned runs left
  // with the runtime, released on a thread of its own (never on a pool thread it would join).
  struct LastHold {
    std::shared_ptr<SharedRuntime> shared;
    ~LastHold();
  } last_hold_;
  // The registry's internal protocol (reg/coordinator_registry.h): the registry itself, or an
  // adapter over an application's own RegistryCenter.
  reg::CoordinatorRef coordinator_;
  reg::CoordinatorRegistry& registry_;
  // User code and registry behind one gate, closed by Join (bootstrap/user_code.h).
  std::shared_ptr<Gate> gate_;
  GatedRegistry gated_;
  std::shared_ptr<SimpleJob> job_;
  std::string job_type_;
  std::shared_ptr<JobItemExecutor> item_executor_;  // a C++ item executor, or null
  // What the executor runs: job_, item_executor_ or the type's, with the error handler.
  std::shared_ptr<executor::TypedJob> typed_;
  JobConfiguration config_;
  BootstrapOptions options_;
  Clock& clock_;
  storage::JobNodeStorage storage_;
  std::shared_ptr<SharedRuntime> shared_;
  std::unique_ptr<storage::ChangeNotifier> notifier_;  // waits on the shared pools
  JobShardingStrategyRegistry strategies_;
  std::unique_ptr<config::ConfigService> config_service_;
  std::unique_ptr<server::ServerService> servers_;
  std::unique_ptr<instance::InstanceService> instances_;
  std::unique_ptr<election::LeaderService> leader_;
  std::unique_ptr<sharding::ShardingService> sharding_;
  std::unique_ptr<execution::ExecutionService> execution_;
  std::unique_ptr<failover::FailoverService> failover_;
  std::unique_ptr<reconcile::ReconcileService> reconcile_;
  std::unique_ptr<guarantee::GuaranteeService> guarantee_;
  std::shared_ptr<executor::JobListeners> job_listeners_;
  std::shared_ptr<ItemLimiter> limiter_;  // this job's share of the item pool
  std::unique_ptr<executor::JobExecutor> executor_;
  // Every run's way from its start to its report, over executor_ (RunPath::Failover runs
  // this instance's claimed failover items not running yet; REQUIRES: BeginTask counted it).
  std::unique_ptr<executor::RunPath> run_path_;
  // Workflow nodes' runs here (workflow/node_job.h), and this instance's id; set in Start.
  std::shared_ptr<workflow::NodeRuns> node_runs_;
  std::string instance_id_;
  std::unique_ptr<listener::ListenerManager> listeners_;
  std::unique_ptr<SerialExecutor> strand_;  // the job's event strand
  Mutex watch_mu_;
  std::unique_ptr<reg::CountedSubscription> watch_ ELASTICJOB_GUARDED_BY(watch_mu_);
  // The watch's change counter (reg::CountedSubscription::change_counter), read at every fire time
  // without watch_mu_ (RegistryChanges): set after the watch starts, null once it ends.
  // counter_owner_ keeps it alive for a reader that loaded it just before.
  std::atomic<const std::atomic<uint64_t>*> counter_{nullptr};
  std::shared_ptr<const std::atomic<uint64_t>> counter_owner_ ELASTICJOB_GUARDED_BY(watch_mu_);
  std::unique_ptr<Subscription> connection_;
  // The configuration's monitorPort as given (the registry's never carries one).
  const int monitor_port_;
  // What the job records (BootstrapOptions::metrics; null: nothing). Recorded into from the
  // fire path without locks (job_metrics.h).
  const std::shared_ptr<metrics::JobMetrics> metrics_;
  // Whether this runtime counts in metrics_->starting and ->scheduled (atomic: Stop and the
  // destructor may settle them from other threads than Start).
  std::atomic<bool> metrics_starting_{false};
  std::atomic<bool> metrics_scheduled_{false};
  // This job on the dump port, from Start to Join (which do not race).
  std::unique_ptr<snapshot::DumpServer::Registration> dump_;
  Mutex marks_mu_;
  std::map<int, std::unique_ptr<Subscription>> mark_watches_ ELASTICJOB_GUARDED_BY(marks_mu_);

  Mutex mu_;
  CondVar idle_cv_{&mu_};
  Mutex join_mu_;  // one Join at a time; the first one's result stays
  std::optional<Status> joined_ ELASTICJOB_GUARDED_BY(join_mu_);
  bool scheduled_ = false;  // a cron job (set once in Start), not a one-off one
  bool started_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool start_called_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool paused_ ELASTICJOB_GUARDED_BY(mu_) = false;
  // !stopped_ && !paused_, written with them: what a prepared trigger's admission reads at
  // its fire time, without mu_.
  std::atomic<bool> admissible_{true};
  int outstanding_ ELASTICJOB_GUARDED_BY(mu_) = 0;        // triggers armed, queued or running
  bool shard_posted_ ELASTICJOB_GUARDED_BY(mu_) = false;  // a ShardIfNecessary task is queued
  std::optional<CronExpression> cron_ ELASTICJOB_GUARDED_BY(mu_);
  static constexpr std::chrono::milliseconds kNoRate{0};
  std::chrono::milliseconds fixed_rate_ ELASTICJOB_GUARDED_BY(mu_){0};   // > 0 instead of a cron
  std::chrono::milliseconds fixed_delay_ ELASTICJOB_GUARDED_BY(mu_){0};  // > 0 instead of a cron
  // A fixed delay's state (fixed_delay.cc): the registry's clock minus ours (ms, measured at
  // start); the newest fire named by `delay/next` (registry ms); the fire armed here (or let
  // pass: it began before this instance); the newest fire whose part here is over; whether
  // StartFixedDelay has run.
  int64_t delay_offset_ms_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t delay_next_ms_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t delay_armed_ms_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t delay_done_ms_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  bool delay_ready_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::string cron_text_ ELASTICJOB_GUARDED_BY(mu_);
  std::optional<TimeZone> zone_ ELASTICJOB_GUARDED_BY(mu_);
  std::string zone_text_ ELASTICJOB_GUARDED_BY(mu_);
  // How long before its fire time a cron trigger is worked out (OnPrepare): the shared
  // runtime's PrepareLead (200 ms, longer while claims come back later than that), which
  // the prepared runs' claims inform (ClaimedAhead). Set at Start, before any run; the
  // shared runtime outlives every run of the job.
  trigger::PrepareLead* prepare_lead_ = nullptr;
  trigger::TimerScheduler::TaskId next_task_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // the next OnPrepare
  trigger::TimerScheduler::TaskId fire_task_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // a RunPath::Fire
  // The run prepared for the next fire time, until it starts.
  std::weak_ptr<executor::JobExecutor::Prepared> prepared_ ELASTICJOB_GUARDED_BY(mu_);
  uint64_t arming_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // ArmNextLocked calls
  // The latest fire time prepared (OnPrepare), in system clock ticks (0: none yet): the
  // executor's due fire (DueFire).
  std::atomic<Clock::WallTime::rep> due_fire_{0};
  // TriggerClusterAndWait's wait for the next operator run here.
  struct ThrowWait {
    bool active = false;
    bool done = false;
    Status result;  // the first item failure or the trigger's error
  } throw_wait_ ELASTICJOB_GUARDED_BY(mu_);
  CondVar throw_cv_{&mu_};
  // The registry change count at which NeedFailover last found nothing.
  std::optional<uint64_t> no_failover_at_ ELASTICJOB_GUARDED_BY(mu_);
  trigger::TimerScheduler::TaskId reconcile_task_ ELASTICJOB_GUARDED_BY(mu_) = 0;
};

}  // namespace elasticjob::bootstrap

#endif  // ELASTICJOB_BOOTSTRAP_JOB_RUNTIME_H_
