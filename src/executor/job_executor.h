// JobExecutor: what happens when a job's trigger fires, as ElasticJob's
// AbstractElasticJobExecutor and LiteJobFacade do it:
//   1. time-skew check (maxTimeDiffSeconds);
//   2. with failover on, this instance's claimed failover items, if any, are the run (given
//      `start_failover_run`, they start as a failover run of their own, and this run goes
//      on as if there were none); else sharding if necessary (the leader shards; the others
//      wait for it, holding no thread: ShardingService::ShardingIfNecessaryAsync) and this
//      instance's items minus those taken over by others and minus disabled ones;
//   3. if the previous run is still going here, its items are marked misfire (the marks
//      sent, not waited for) and this trigger is skipped (ElasticJob also reads the items'
//      running marks here: docs/runtime.md);
//   4. claim them (mark them running, one multi-op: RunPath's Claim) and run those claimed
//      in parallel on the item pool once the marks are confirmed; clear the marks (one more
//      multi-op, sent once the items are done) and, for failover items, the failover nodes
//      (RunPath's Complete);
//   5. while misfire marks remain (and misfire is on), run again; the marks this instance set
//      are cleared after the last re-run (someone else's before the re-run) (Complete too).
// The job's listeners (JobListeners) run before step 4 and after step 5, also when this
// instance has no items; a distribute-once listener's wait holds no thread.
//
// Runs are asynchronous: the caller's thread does steps 1 to 3 and sends the claim of the
// run's items (their running marks, ExecutionService::ClaimAsync); its confirmation starts
// the items claimed on the item pool; after the last item the clearing is sent, and its
// confirmation does step 5 and calls `done`. No thread waits for the registry or for user
// code, and the timer keeps firing for every other job. No item starts before its mark is
// written, and a mark of an instance still registered is a conflict (that item does not run
// here): no item runs on two instances at once. A cron run picked up more than
// `overdue_bound` after its fire time is skipped (a pause that long may have outlived the
// session).
//
// Three entry points share one "normal lane" (at most one normal run per job at a time) and
// the set of items running here:
//   Trigger     a cron trigger: a run already going makes it a misfire (step 3), but one
//               whose items are done and whose after-listeners still run makes it wait,
//               and a cron run still waiting for the leader's sharding takes this
//               trigger's fire instead of its own (docs/runtime.md "Resharding around a
//               fire"; such a run also gives way to a later fire's trigger under way when
//               the sharding comes);
//   TriggerNow  an operator trigger (`trigger/{instanceId}`): a run already going makes it
//               wait, and it runs once that run ends (ElasticJob drops it);
//   RunFailover the items this instance just claimed for failover, at once, beside a normal
//               run (ElasticJob waits for that run to end).
// Every item run reports one ItemRun (job, item, instance, outcome).
//
// Event tracing (`tracing`, when given; docs/tracing.md): each pass posts ElasticJob's status
// events (TASK_STAGING when its items are known, TASK_RUNNING once they are claimed,
// TASK_FINISHED or TASK_ERROR after the last; a cron trigger skipped because a run is going
// posts TASK_STAGING and the misfire TASK_FINISHED), and each item run a start and an end
// event, its context's log going to the execution's log. A prepared trigger builds its
// events ahead: its start pushes them.
//
// The run plan: what a normal run works out from the registry in steps 1 and 2 (the config,
// this instance's items, their parameters, and what step 5 will read) is kept with the
// registry's change count it was read at (`registry_changes`: the job's Watch,
// Subscription::changes). While that count stays the same every read would answer the
// same, so the next trigger takes the plan and reads nothing: a trigger is a few
// microseconds of work before its items start. Any change to the job's view (a resharding, a
// disabled item, a misfire mark, a config update, a failover) moves the count, and the trigger
// after it reads everything again.
//
// Prepared triggers: a cron trigger can also be worked out before its fire time
// (PrepareTrigger, when the run plan holds, the job has no listeners and the lane is free):
// the lane is taken then, the run and its items' contexts and reports are built, its items
// are claimed, and at the fire time the items start from a LaunchBoard (LaunchUnits) with
// nothing left to do but call the job: no registry read, no lock of this executor. The first of its
// items to start admits the run: the owner's `admissible` (paused? stopped?) and the plan's change
// count once more, or only the process's change epoch when it has not moved since the preparation
// (infra/change_epoch.h); a change since the preparation sends the run back to the registry
// (it reads everything again, as a trigger after a change does, still holding the lane).
// Admission also requires the claim confirmed and the fire time not overdue; a run let go
// after its claim removes its marks first (LetGo), then re-runs for a trigger that found it
// holding the lane meanwhile, as a run's end does (RunPath::LetGoEnded).
//
// Every run goes through the RunPath built over this executor (run_path.h), which names the
// steps from a fire to its report and owns Claim (the running marks, fenced by the session)
// and Complete (the marks cleared, misfire re-runs, the run's end). This executor reads what
// a run is (the plan, the items), keeps the lane, and runs the items on the pool.
//
// Thread safety: safe for concurrent use. `done` must keep this executor (and the services
// it uses) alive until it has been called.
#ifndef ELASTICJOB_EXECUTOR_JOB_EXECUTOR_H_
#define ELASTICJOB_EXECUTOR_JOB_EXECUTOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config_service.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/clock.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/run_reports.h"
#include "elasticjob/thread_annotations.h"
#include "execution/execution_service.h"
#include "executor/job_listeners.h"
#include "executor/pinning_job.h"
#include "executor/run_ticket.h"
#include "failover/failover_service.h"
#include "infra/job_metrics.h"
#include "infra/log.h"
#include "sharding/sharding_service.h"
#include "tracing/events/job_tracing.h"
#include "trigger/launch_board.h"

namespace elasticjob::executor {

class RunPath;

// The report of one item run (the public ItemRunReport, built once and handed on).
using ItemRun = ItemRunReport;

class JobExecutor {
 public:
  enum class Outcome {
    kRan,      // items ran (and any misfire re-runs)
    kNoItems,  // nothing to run here
    kMisfire,  // items still running: marked misfire, skipped
    kQueued,   // superseded by a later trigger while waiting to run
  };
  // A run's done: its ticket (the steps the run has taken: RunPath advances it) and its
  // report, called once with the ticket and the run's outcome. Empty: nothing to report.
  struct Done {
    RunTicket ticket;
    std::function<void(RunTicket&, Result<Outcome>)> report;
    explicit operator bool() const { return static_cast<bool>(report); }
    void operator()(Result<Outcome> outcome) { report(ticket, std::move(outcome)); }
  };

  // The registry's change count for the job's subtree, or nullopt (no plan is kept).
  using ChangeCount = std::function<std::optional<uint64_t>()>;

  // REQUIRES: every reference outlives this object. `listeners` may be null (none);
  // `registry_changes` may be null (every trigger reads the registry). `start_failover_run`
  // (may be null) starts RunFailover: a trigger that finds failover items claimed here and
  // not running (claimed a moment ago, their run about to start) leaves them to it and runs
  // this instance's own items. `due_fire` (may be null) gives the owner's latest cron fire
  // time whose trigger is under way (prepared, or due): a run that waited for a resharding
  // until then gives way to it (docs/runtime.md "Resharding around a fire").
  JobExecutor(config::ConfigService& config, sharding::ShardingService& sharding,
              execution::ExecutionService& execution, failover::FailoverService& failover,
              std::string instance_id, std::shared_ptr<SimpleJob> job, Executor& item_pool,
              Executor& control, Clock& clock, std::function<void(const ItemRun&)> on_item_run,
              std::shared_ptr<JobListeners> listeners = nullptr,
              ChangeCount registry_changes = nullptr,
              std::chrono::milliseconds overdue_bound = std::chrono::seconds(1),
              std::shared_ptr<const tracing::JobTracing> tracing = nullptr,
              std::function<void()> start_failover_run = nullptr,
              std::function<std::optional<Clock::WallTime>()> due_fire = nullptr)
      : job_(std::move(job)),
        pinning_(dynamic_cast<PinningJob*>(job_.get())),
        clock_(clock),
        sharding_(sharding),
        overdue_bound_(overdue_bound),
        tracing_(std::move(tracing)),
        control_(control),
        on_item_run_(std::move(on_item_run)),
        config_(config),
        execution_(execution),
        failover_(failover),
        instance_id_(std::move(instance_id)),
        item_pool_(item_pool),
        listeners_(std::move(listeners)),
        registry_changes_(std::move(registry_changes)),
        start_failover_run_(std::move(start_failover_run)),
        due_fire_(std::move(due_fire)) {}

  // See above. `done` gets the outcome or the first coordination error (item failures are
  // reported through ItemRun, not here).
  // `fire_time`: the cron fire time it answers (reported with each item run).
  void Trigger(Done done, std::optional<Clock::WallTime> fire_time = std::nullopt) {
    Start(std::move(done), /*queue_if_busy=*/false, fire_time);
  }
  // With a `parameter`, this run's items see it as their job parameter (an operator's
  // one-time parameter); a second trigger while one waits replaces it. With `keep` (a
  // workflow node's run request, docs/workflows.md), a trigger that finds a run going waits
  // in a queue of its own, in order: it neither replaces nor is replaced by another trigger;
  // the kept triggers go before a replaceable one.
  void TriggerNow(Done done, std::optional<std::string> parameter = std::nullopt,
                  bool keep = false) {
    Start(std::move(done), /*queue_if_busy=*/true, std::nullopt, std::move(parameter), keep);
  }

  // A cron trigger prepared before its fire time (see "Prepared triggers" above).
  struct Prepared;
  // Takes the lane and works out the run for the cron fire at `fire_time`, when the run plan
  // holds, this instance has items, the job has no listeners and the lane is free; else
  // returns null and takes nothing (Trigger at the fire time). At the fire time
  // `*admissible` is read once, before any item starts: false skips the run (the lane is
  // released, `done` is never called, `skipped` is). `change_counter`, when given, is the
  // counter behind the registry change count (reg::CountedSubscription::change_counter), read
  // directly then. REQUIRES: both outlive the prepared run (what `skipped` holds may keep them).
  std::shared_ptr<Prepared> PrepareTrigger(Clock::WallTime fire_time, Done done,
                                           const std::atomic<bool>* admissible,
                                           const std::atomic<uint64_t>* change_counter,
                                           std::function<void()> skipped);
  // The item starts of `prepared`, to run together at its fire time (LaunchBoard).
  std::vector<trigger::LaunchBoard::Unit> LaunchUnits(const std::shared_ptr<Prepared>& prepared);
  // Lets go of `prepared` (the lane, its `done` uncalled) unless it has been admitted or
  // skipped already; returns whether it did.
  bool Abandon(const std::shared_ptr<Prepared>& prepared);
  void RunFailover(Done done);
  // No more queued runs: a queued operator trigger gets CANCELLED.
  void Stop();
  // Join's, once it has given up on the runs still going and closed the job's gate: a run
  // waiting for a retry (retryIntervalMs) has it now, and any later one at once, instead of
  // at its time. The attempt calls nothing then, so the run ends rather than holding the
  // job's runtime, and with it the shared timer and its clock, until that time.
  void EndRetryWaits();

  // Fencing (docs/runtime.md): this instance's registry session expired, so the items of
  // every run holding items here may be run by others already. Each such run is cancelled
  // (its contexts' Cancellation requested with `reason`: a SCRIPT item's process group is
  // killed at once, in-process code sees `cancelled()`; an item not started yet does not
  // start), its items are no longer reported as this instance's (running_items), its end
  // clears only marks still ours, leaves the failover nodes and re-runs nothing. The items
  // stay held here until their code returns, so no run of ours starts beside it. Returns
  // the items fenced now whose code was running or still to start (sorted): a run whose items
  // had all returned (its end being written) is fenced too, but cancels nothing.
  std::vector<int> Fence(const std::string& reason);

  // An operator's stop (docs/scheduling.md): `item` of the runs going here that hold it
  // (every item of every run when nullopt), not fenced and not done, is cancelled with
  // `reason` as a timeout is (SCRIPT groups SIGTERM, then SIGKILL after the grace; not
  // retried); the run's other items go on. With `before` (the stop's place in the
  // registry's order of writes), a run claimed after it (a later fire's) is left alone, and
  // a run whose claim is still out is judged when its claim answers (ClaimAnswered; its
  // items are not in the result). Returns the items cancelled (sorted).
  std::vector<int> CancelRunning(std::optional<int> item, const std::string& reason,
                                 std::optional<int64_t> before = std::nullopt);

  // The items running here now (every lane), but those of fenced runs: a mark of ours on any
  // other item is stale.
  std::vector<int> running_items();
  // Whether a normal run is going on here.
  bool running() {
    MutexLock lock(&mu_);
    return normal_running_;
  }

  // Records this job's item runs, misfires and skipped fire times there (null: not
  // recorded). REQUIRES: before the first trigger.
  void set_metrics(metrics::JobMetrics* metrics) { metrics_ = metrics; }
  // Where an item's start asks for the lease (CoordinatorRegistry::LeaseHeld): the process's
  // registry itself, not the job's (gated) view of it, so that the start reads one object
  // every job shares instead of three of its own. Null: the execution service's registry.
  // REQUIRES: before the first run; `registry` outlives this object.
  void set_lease_source(reg::CoordinatorRegistry* registry) { lease_ = registry; }
  // Where this job's lines go (its BootstrapOptions::logger); default: the process default.
  // Its items' JobLog lines go there too when tracing is off. Before the first trigger.
  void set_logger(infra::JobLogger log) { log_ = std::move(log); }

  // Where execution timeouts and retry intervals are timed (docs/scheduling.md): `at` runs a
  // task at a wall time and returns its id, `cancel` cancels one. Unset: timeoutMs and
  // retryIntervalMs are not timed (retries follow at once). REQUIRES: before the first run.
  struct Timer {
    std::function<uint64_t(Clock::WallTime, std::function<void()>)> at;
    std::function<void(uint64_t)> cancel;
  };
  void set_timer(Timer timer) { timer_ = std::move(timer); }

 private:
  // The run path's steps (Claim, Complete) act on the runs and the lane here.
  friend class RunPath;
  struct Run;
  struct Plan {
    uint64_t changes = 0;  // the registry's change count it was read at
    std::shared_ptr<const JobConfiguration> config;
    std::shared_ptr<const std::map<int, std::string>> params;
    std::vector<int> items;  // this instance's items (none claimed for failover)
    std::string task_id;
    std::vector<int> misfired;  // of `items`, those with a misfire mark
    bool need_sharding = false;
    std::shared_ptr<const tracing::RunInfo> trace;  // with tracing on
  };
  // The registry's change count for this job (nullopt: not counted).
  std::optional<uint64_t> RegistryChanges();
  // Gives `run` what `plan` worked out (its items, their parameters, the task id).
  void TakePlan(Run& run, const std::shared_ptr<const Plan>& plan);
  // The kept plan if the registry has not changed since it was read, else null.
  std::shared_ptr<const Plan> CurrentPlan(std::optional<uint64_t> changes);
  // Keeps what `run` (a normal run that read the registry from change count `changes`, and
  // is prepared) has worked out as the plan.
  void KeepPlan(std::optional<uint64_t> changes, const Run& run);
  void Start(Done done, bool queue_if_busy, std::optional<Clock::WallTime> fire_time,
             std::optional<std::string> parameter = std::nullopt, bool keep = false);
  // A normal run holding the lane, with nothing known yet: failover items, else sharding and
  // this instance's items (read from the registry at change count `changes`), then Proceed.
  void ReadItems(const std::shared_ptr<Run>& run, std::optional<uint64_t> changes);
  // A cron run's wait for the sharding is over: it is no longer the lane's waiting run. When
  // it `waited` (the sharding was not there at once) and the trigger of a later fire is
  // under way (due_fire_), it ends (kQueued), giving way to that trigger, and true is
  // returned.
  [[nodiscard]] bool StopWaiting(const std::shared_ptr<Run>& run, bool waited);
  // A prepared run whose plan changed before its fire time: reads everything again.
  void Reread(const std::shared_ptr<Run>& run);
  // The first item start of a prepared run decides for all of them: true to run (`after`
  // is left empty: the marks were claimed at the preparation). `now`: the board's wall time
  // for the start (LaunchBoard::Unit::begin), against which the run is overdue or not.
  bool Admit(Prepared& prepared, std::function<void()>& after, Clock::WallTime now);
  // Releases a prepared run that runs nothing (its lane and items), dropping its `done`
  // (RunPath::LetGoEnded, once no misfire re-run follows; Abandon).
  void Drop(const std::shared_ptr<Run>& run);
  // A normal run whose items are known: misfire checks, marks, listeners, then the run
  // path's Claim.
  void Proceed(const std::shared_ptr<Run>& run);
  // Computes the run's item parameters and task id.
  Status Prepare(Run& run);
  ShardingContexts ContextsOf(const Run& run);
  // The listeners before and after `run`, then `next`.
  void Before(const std::shared_ptr<Run>& run, std::function<void()> next);
  void After(const std::shared_ptr<Run>& run, std::function<void()> next);
  // The run's items become those of `claimed` (a subset: the rest run elsewhere), the
  // others released.
  void KeepClaimed(Run& run, const std::vector<int>& claimed);
  // Starts the run's items (claimed) on the item pool.
  void StartItems(const std::shared_ptr<Run>& run);
  // Why a prepared run was let go.
  enum LetGoReason {
    kAdmittedReason,  // not let go
    kOverdue,         // picked up too long after its fire time (Overdue)
    kNotAdmissible,   // paused or stopped
    kChanged,         // the registry changed since the preparation: read it again
    kClaimPending,    // its marks were not all confirmed by the fire time
    kAbandoned,       // the runtime let go of it (Abandon)
  };
  // A prepared run let go, once its claim has ended too: removes what the claim wrote
  // unless the run goes on, then rereads, hands it to the run path's LetGoEnded (released
  // and skipped, or re-run for a trigger that found it holding the lane) or to its Claimed
  // (its claim late: the items claimed start now).
  void LetGo(const std::shared_ptr<Prepared>& prepared);
  // Whether `fire_time` is more than overdue_bound_ ago.
  bool Overdue(Clock::WallTime fire_time);
  // The session lease at an item's start (docs/runtime.md "The session lease"): true when
  // this instance heard from the registry lately, or, after waiting for its word, still
  // holds the session `run` claimed its items in; `ctx.start_deadline` is then the lease's
  // end. False: the run is cancelled (its items do not start) with the reason. May block
  // the item's thread, only when the lease lapsed.
  bool LeaseAllowsStart(Run& run, ShardingContext& ctx);
  void RunItems(const std::shared_ptr<Run>& run);
  // One item of `run`: the job's code, the report, and the end of the pass after the last.
  void RunItem(const std::shared_ptr<Run>& run, ShardingContext ctx);
  // Item `i` of a prepared run, with its context and report worked out ahead: its code now,
  // its end (EndPrepared) after the starts its launch board drainer can make
  // (LaunchBoard::AfterStarts).
  void RunPrepared(Prepared& prepared, size_t i);
  static void EndPrepared(void* prepared, size_t i);
  // Runs the user code for `ctx` and reports it in `report` (its `started` set here), then
  // ends the item (EndItem). `start` and `end`: the item's events (tracing on;
  // JobTracing::MakeItemEvents), pushed as the code starts and ends.
  void RunUserCode(const std::shared_ptr<Run>& run, ShardingContext& ctx, ItemRun& report,
                   std::unique_ptr<tracing::Event> start = nullptr,
                   std::unique_ptr<tracing::Event> end = nullptr);
  // The item's start and user code (fenced: cancellation, the session lease), its outcome
  // and duration in `report`; returns the time the code took. `pin`: a prepared run's
  // (PinningJob::Pin), or null.
  std::chrono::nanoseconds RunCode(Run& run, ShardingContext& ctx, ItemRun& report,
                                   std::unique_ptr<tracing::Event> start,
                                   const void* pin = nullptr);
  // What follows: the metrics, the trace's end event, the report (on_item_run) and the
  // pass's end after its last item.
  void EndItem(const std::shared_ptr<Run>& run, const ShardingContext& ctx, ItemRun& report,
               std::chrono::nanoseconds took, std::unique_ptr<tracing::Event> end);
  // An item of a job with timeoutMs or maxRetries (docs/scheduling.md), in place of
  // RunUserCode's plain call: each attempt under a cancellation of its own, ended (and
  // reported failed) at the timeout even if its code runs on, failed attempts run again after
  // retryIntervalMs; the item ends as RunUserCode's does after its last attempt.
  struct Attempts;
  void RunControlled(const std::shared_ptr<Run>& run, ShardingContext& ctx, ItemRun& report,
                     std::unique_ptr<tracing::Event> start, std::unique_ptr<tracing::Event> end);
  void StartAttempt(const std::shared_ptr<Attempts>& a);
  // The attempt of `a` ended (its code returned, or its timeout came first).
  void AttemptEnded(const std::shared_ptr<Attempts>& a, bool success, std::string error,
                    bool timed_out);
  // Takes the retry waiting under `key` (AttemptEnded) out, unless EndRetryWaits took it:
  // what starts it.
  std::function<void()> TakeRetryWait(uint64_t key);
  // An item's end after its last attempt: metrics, report, and the pass's end after the last.
  // An item's end in the metrics (none without them).
  void CountItemEnd(const ItemRun& report, std::chrono::nanoseconds took);
  // The last item of `run` to end ends the pass: its tracing status, then the run path's
  // Complete on the control executor (LaunchBoard::PostAfterRun).
  void EndPassIfLast(const std::shared_ptr<Run>& run);
  void ControlledItemEnded(const std::shared_ptr<Run>& run, ItemRun& report, bool traced);
  // Tracing: the execution source of `run`'s items, the status events of a cron trigger
  // skipped because `items` are still running, and a status event of `run`.
  static ExecutionSource SourceOf(const Run& run);
  void TraceMisfire(const JobConfiguration& config, const std::vector<int>& items);
  void TraceStatus(const Run& run, TraceState state, std::string message);
  ShardingContext ContextOf(Run& run, int item);
  // The claim of `run` answered with `fencing_token` (0: none, or the claim failed): sets the
  // token and applies the stops that waited for it and are stamped at or after it.
  void ClaimAnswered(Run& run, int64_t fencing_token);
  // An operator's stop of `item` (every item when nullopt) of `run`: returns the items
  // cancelled.
  static std::vector<int> StopRun(Run& run, std::optional<int> item, const std::string& reason);
  // Requests the run's cancellation and each of its items' (gracefully when `grace` > 0).
  static void CancelRun(Run& run, const std::string& reason, std::chrono::milliseconds grace);
  // The cancellation that stops the item of `ctx` in `run` (the run's, or the item's own),
  // or null while neither is requested.
  static const Cancellation* CancelledOf(const Run& run, const ShardingContext& ctx);
  // The report of `item`'s run, but for its start, end and outcome.
  ItemRun ReportOf(const Run& run, int item);
  // Complete, for a normal run whose pass ended: whether it runs again (a trigger found it
  // going, or misfire marks someone else left: `marked`, unless `resharding`), decided
  // under the lane's lock with a late trigger's mark, so that trigger is either re-run or
  // runs itself. Without a re-run the lane stays taken for the after-listeners. `ours`:
  // the misfire marks in the registry are this run's own (Start set them).
  struct Rerun {
    bool again = false;
    bool ours = false;
  };
  Rerun DecideRerun(const Run& run, bool resharding, const std::vector<int>& marked);
  // This run's misfire marks are cleared (sent): a later trigger marks its own.
  void ForgetMisfireMarks();
  // What a trigger would run here now, sorted: the claimed failover items, else this
  // instance's items minus those taken over and the disabled ones (from the cache; no
  // sharding wait: a re-run does not follow while one is pending).
  Result<std::vector<int>> ItemsNow(const JobConfiguration& config);
  // Ends `run`: releases its items and lane, then Deliver.
  void End(const std::shared_ptr<Run>& run, Result<Outcome> result);
  // Releases `run`'s items (and the normal lane, for a normal run); returns a queued operator
  // trigger to start, if any.
  // A trigger waiting for the current run, and its one-time parameter.
  struct Queued {
    Done done;
    std::optional<std::string> parameter;
    bool keep = false;
  };
  Queued ReleaseLocked(const Run& run) ELASTICJOB_REQUIRES(mu_);
  // Notes that `run` holds its items (in running_items_), for ReleaseLocked and Fence.
  void HoldLocked(const std::shared_ptr<Run>& run) ELASTICJOB_REQUIRES(mu_);
  // Calls `run`'s done with `result`, then starts `queued` (if any) on the control executor.
  void Deliver(const std::shared_ptr<Run>& run, Result<Outcome> result, Queued queued);

  // What a prepared item's admission and start read, first and in one cache line (the board
  // prefetches it).
  alignas(64) const std::shared_ptr<SimpleJob> job_;
  // job_ when it pins its state for prepared runs (the runtime's JobCode), else null.
  PinningJob* const pinning_;
  Clock& clock_;
  metrics::JobMetrics* metrics_ = nullptr;     // borrowed (the runtime's); may be null
  reg::CoordinatorRegistry* lease_ = nullptr;  // borrowed; null: execution_'s (set_lease_source)
  sharding::ShardingService& sharding_;
  // A cron run picked up later than this after its fire time is skipped (Overdue).
  const std::chrono::milliseconds overdue_bound_;
  // The rest: read by a start only when it is traced, fails or is let go.
  const std::shared_ptr<const tracing::JobTracing> tracing_;  // null: tracing off
  Executor& control_;
  const std::function<void(const ItemRun&)> on_item_run_;
  infra::JobLogger log_;
  config::ConfigService& config_;
  execution::ExecutionService& execution_;
  failover::FailoverService& failover_;
  const std::string instance_id_;
  Executor& item_pool_;
  const std::shared_ptr<JobListeners> listeners_;
  const ChangeCount registry_changes_;
  // Starts a failover run (RunFailover, with the owner's report) for the failover items this
  // instance has claimed and does not run yet; null: a trigger runs them instead of its
  // items, as ElasticJob's does.
  const std::function<void()> start_failover_run_;
  const std::function<std::optional<Clock::WallTime>()> due_fire_;
  Timer timer_;  // set_timer's; before the first run
  // The run path built over this executor (its constructor sets it, before any run): its
  // Claim and Complete are every run's.
  RunPath* path_ = nullptr;

  Mutex mu_;
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool normal_running_ ELASTICJOB_GUARDED_BY(mu_) = false;    // the normal lane is taken
  bool normal_after_ ELASTICJOB_GUARDED_BY(mu_) = false;      // ... by its after-listeners
  std::vector<int> normal_items_ ELASTICJOB_GUARDED_BY(mu_);  // its items, once known
  bool misfire_pending_ ELASTICJOB_GUARDED_BY(mu_) = false;   // a cron trigger found it taken
  // The normal lane's cron run while it waits for the leader's sharding (ReadItems).
  std::shared_ptr<Run> waiting_run_ ELASTICJOB_GUARDED_BY(mu_);
  // The normal run's misfire marks are set in the registry by us (sent), until the run's last
  // re-run ends.
  bool misfire_marked_ ELASTICJOB_GUARDED_BY(mu_) = false;
  Done queued_ ELASTICJOB_GUARDED_BY(mu_);  // a trigger waiting to run
  std::optional<std::string> queued_parameter_ ELASTICJOB_GUARDED_BY(mu_);  // its parameter
  std::deque<Queued> kept_ ELASTICJOB_GUARDED_BY(mu_);      // kept triggers waiting, in order
  std::set<int> running_items_ ELASTICJOB_GUARDED_BY(mu_);  // every lane's items
  // Of running_items_, those of fenced runs (their code may still run: they stay held).
  std::set<int> fenced_items_ ELASTICJOB_GUARDED_BY(mu_);
  // The runs holding items (`holding`), by address.
  std::map<const Run*, std::shared_ptr<Run>> holding_runs_ ELASTICJOB_GUARDED_BY(mu_);
  std::shared_ptr<const Plan> plan_ ELASTICJOB_GUARDED_BY(mu_);
  // The retries waiting for their time, by key: what starts each, and its timer task. Held
  // here, not by the timer's task, so that EndRetryWaits can end the wait.
  struct RetryWait {
    uint64_t timer = 0;
    std::function<void()> start;
  };
  std::map<uint64_t, RetryWait> retry_waits_ ELASTICJOB_GUARDED_BY(mu_);
  uint64_t next_retry_wait_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  bool retry_waits_ended_ ELASTICJOB_GUARDED_BY(mu_) = false;  // EndRetryWaits was called
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_JOB_EXECUTOR_H_
