#include "executor/job_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>

#include "elasticjob/config/job_configuration.h"
#include "executor/job_run.h"
#include "executor/run_path.h"
#include "executor/typed_job.h"
#include "infra/change_epoch.h"
#include "infra/log.h"

namespace elasticjob::executor {

namespace {

// How long a SCRIPT item's process group has between SIGTERM and SIGKILL at an operator's stop.
constexpr std::chrono::milliseconds kStopGrace{3000};

int64_t EpochMillis(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::vector<int> Minus(std::vector<int> items, const std::vector<int>& drop) {
  items.erase(
      std::remove_if(items.begin(), items.end(),
                     [&](int i) { return std::find(drop.begin(), drop.end(), i) != drop.end(); }),
      items.end());
  return items;
}

}  // namespace

void JobExecutor::Start(Done done, bool queue_if_busy, std::optional<Clock::WallTime> fire_time,
                        std::optional<std::string> parameter, bool keep) {
  // The count first: a change after it, even one made while the registry is read below,
  // leaves the plan kept from those reads out of date.
  const std::optional<uint64_t> changes = RegistryChanges();
  std::shared_ptr<const Plan> plan = CurrentPlan(changes);
  std::shared_ptr<const JobConfiguration> config;
  if (plan != nullptr) {
    config = plan->config;
  } else {
    auto loaded = config_.LoadLastGood();
    if (!loaded.ok()) return done(loaded.status());
    config = std::make_shared<const JobConfiguration>(*std::move(loaded));
  }
  if (Status s = config_.CheckMaxTimeDiffSecondsTolerable(config->max_time_diff_seconds); !s.ok())
    return done(s);
  if (fire_time.has_value() && Overdue(*fire_time)) {
    // Picked up long after its fire time: the process was paused (a debugger, a VM
    // migration, SIGSTOP) or starved, and its session may have expired meanwhile, its items
    // gone to others. Skipped, as Quartz's "do nothing" misfire policy skips a late fire.
    if (metrics_ != nullptr) metrics_->skipped_overdue.Inc();
    log_("WARN", fmt::format("job={} instance={}: the fire time passed {} ms ago (was "
                             "the process paused?): skipped",
                             config->job_name, instance_id_,
                             std::chrono::duration_cast<std::chrono::milliseconds>(
                                 clock_.WallNow() - *fire_time)
                                 .count()));
    return done(Outcome::kMisfire);
  }
  {
    MutexLock lock(&mu_);
    if (stopped_) {
      lock.Unlock();
      return done(Status(StatusCode::kCancelled, "job stopped"));
    }
    if (normal_running_) {
      // An operator trigger, or a cron trigger while the after-listeners of a finished run
      // go on (nothing to re-run; ElasticJob's Quartz would drop it): run after it.
      if (keep) {
        kept_.push_back({std::move(done), std::move(parameter), true});
        return;
      }
      if (queue_if_busy || normal_after_) {
        // Run after the current run; a second operator trigger while one waits joins it.
        Done superseded = std::move(queued_);
        queued_ = std::move(done);
        queued_parameter_ = std::move(parameter);
        lock.Unlock();
        if (superseded) superseded(Outcome::kQueued);
        return;
      }
      if (fire_time.has_value() && waiting_run_ != nullptr) {
        // That run waits for the leader's sharding still, from an earlier fire: this fire
        // takes its place (docs/runtime.md "Resharding around a fire"), so that it runs once,
        // for this fire, not for the one whose items may have run elsewhere meanwhile.
        Done superseded = std::exchange(waiting_run_->done, std::move(done));
        const Clock::WallTime earlier = *waiting_run_->fire_time;
        waiting_run_->fire_time = fire_time;
        waiting_run_->sharding_fire.store(fire_time->time_since_epoch().count());
        const std::string job = waiting_run_->config->job_name;
        lock.Unlock();
        log_("INFO", fmt::format("job={} instance={}: the trigger of {} ms waited for "
                                 "the leader's sharding up to the next fire; it runs "
                                 "for that fire",
                                 job, instance_id_, EpochMillis(earlier)));
        sharding_.Recheck();
        return superseded(Outcome::kQueued);
      }
      // A cron trigger while the previous run goes on: a misfire. The running call re-runs
      // before it lets go of the lane (RunPath::Complete); mark and note it in one step under the
      // lock, so that call sees both or neither.
      if (!config->misfire) {
        std::vector<int> items = tracing_ != nullptr ? normal_items_ : std::vector<int>{};
        lock.Unlock();
        if (tracing_ != nullptr) TraceMisfire(*config, items);
        if (metrics_ != nullptr) metrics_->misfires.Inc();
        return done(Outcome::kMisfire);
      }
      // The marks are sent, not waited for: a process that falls behind must not fall
      // further behind waiting for the registry on its trigger threads. Once: they stay
      // until the last re-run ends (RunPath::Completed), so a job that keeps falling behind writes
      // them once, not at every trigger (each write a create the server rejects, or a
      // change of the job's view that sends every later trigger back to the registry).
      if (!misfire_marked_ && !normal_items_.empty()) {
        execution_.SetMisfireAsync(normal_items_, control_);
        misfire_marked_ = true;
      }
      misfire_pending_ = true;
      std::vector<int> items = tracing_ != nullptr ? normal_items_ : std::vector<int>{};
      lock.Unlock();
      if (tracing_ != nullptr) TraceMisfire(*config, items);
      if (metrics_ != nullptr) metrics_->misfires.Inc();
      return done(Outcome::kMisfire);
    }
    normal_running_ = true;
  }
  auto run = std::make_shared<Run>();
  run->config = std::move(config);
  run->fire_time = fire_time;
  run->done = std::move(done);
  run->parameter = std::move(parameter);
  if (plan != nullptr) {
    // Nothing the plan was worked out from has changed: no claimed failover items, no
    // resharding pending, the same items.
    TakePlan(*run, plan);
    return Proceed(run);
  }
  ReadItems(run, changes);
}

void JobExecutor::ReadItems(const std::shared_ptr<Run>& run, std::optional<uint64_t> changes) {
  // Failover items first (LiteJobFacade.getShardingContexts).
  if (run->config->failover) {
    auto claimed = failover_.GetLocalFailoverItems();
    if (!claimed.ok()) return End(run, claimed.status());
    {
      MutexLock lock(&mu_);
      for (int i : *claimed) {
        if (running_items_.count(i) == 0) run->items.push_back(i);  // not in a failover run
      }
    }
    if (!run->items.empty() && start_failover_run_) {
      // Claimed and not running yet: the claim loop starts their failover run right after
      // each claim (or a registry error ended it before it held them). They run there,
      // beside this run, and this trigger runs this instance's items: ElasticJob runs the
      // failover items instead, and its own items miss the fire (chaos kill9_mid_item: a
      // trigger between a claim and its run).
      run->items.clear();
      start_failover_run_();
    }
    run->failover_items = !run->items.empty();
  }
  if (run->failover_items) return Proceed(run);
  // Waiting for the leader's sharding holds no thread: the rest runs when it is done. A
  // cron run waits as the lane's waiting run: a later cron trigger takes its place (Start).
  sharding::ShardingService::FireTime fire = nullptr;
  const bool cron = run->normal && run->fire_time.has_value();  // read before any merge
  if (cron) {
    run->sharding_fire.store(run->fire_time->time_since_epoch().count());
    fire = [run]() -> std::optional<Clock::WallTime> {
      return Clock::WallTime(Clock::WallTime::duration(run->sharding_fire.load()));
    };
    MutexLock lock(&mu_);
    waiting_run_ = run;
  }
  // Whether the call below has returned: a `done` called before that did not wait.
  auto parked = std::make_shared<std::atomic<bool>>(false);
  sharding_.ShardingIfNecessaryAsync(
      [this, run, changes, cron, parked](Status s) {
        // It gave way to a later fire's trigger (only a run that waited does).
        if (cron && StopWaiting(run, parked->load())) return;
        if (!s.ok()) return End(run, s);
        auto local = sharding_.GetLocalShardingItems(run->config->sharding_total_count);
        if (!local.ok()) return End(run, local.status());
        std::vector<int> items = *local;
        if (run->config->failover) {
          auto taken = failover_.GetLocalTakeOffItems(items);
          if (!taken.ok()) return End(run, taken.status());
          items = Minus(std::move(items), *taken);
        }
        auto disabled = execution_.GetDisabledItems(items);
        if (!disabled.ok()) return End(run, disabled.status());
        run->items = Minus(std::move(items), *disabled);
        // Parameters and task id now, so the plan keeps the run's own (Proceed then has none
        // to compute).
        if (Status p = Prepare(*run); !p.ok()) return End(run, p);
        KeepPlan(changes, *run);
        Proceed(run);
      },
      std::chrono::seconds(30), std::move(fire));
  parked->store(true);
}

bool JobExecutor::StopWaiting(const std::shared_ptr<Run>& run, bool waited) {
  Queued queued;
  std::optional<Clock::WallTime> later;
  {
    MutexLock lock(&mu_);
    if (waiting_run_ == run) waiting_run_.reset();
    // The trigger of a later fire is under way (prepared, or due) and has not reached us:
    // the run gives way to it, in this same step (that trigger must find the lane free).
    if (!waited) return false;
    later = due_fire_ ? due_fire_() : std::nullopt;
    if (!later.has_value() || *later <= *run->fire_time) return false;
    queued = ReleaseLocked(*run);
  }
  log_("INFO", fmt::format("job={} instance={}: the trigger of {} ms waited for the "
                           "leader's sharding until the trigger of {} ms: it gives "
                           "way to that one",
                           run->config->job_name, instance_id_, EpochMillis(*run->fire_time),
                           EpochMillis(*later)));
  Deliver(run, Outcome::kQueued, std::move(queued));
  return true;
}

std::shared_ptr<JobExecutor::Prepared> JobExecutor::PrepareTrigger(
    Clock::WallTime fire_time, Done done, const std::atomic<bool>* admissible,
    const std::atomic<uint64_t>* change_counter, std::function<void()> skipped) {
  // Listeners run around the items at the fire time, as ElasticJob's do: no preparing.
  if (listeners_ != nullptr && !listeners_->empty()) return nullptr;
  // The epoch first, then what it guards (infra/change_epoch.h).
  const uint64_t epoch = infra::ChangeEpoch().load();
  const bool admissible_now = admissible != nullptr && admissible->load();
  // Paused (the connection is suspended or the session lost) or stopped: nothing to claim
  // ahead (the claim would wait for the connection, holding the items). The trigger decides
  // at the fire time.
  if (admissible != nullptr && !admissible_now) return nullptr;
  const std::optional<uint64_t> changes = RegistryChanges();
  std::shared_ptr<const Plan> plan = CurrentPlan(changes);
  if (plan == nullptr || plan->items.empty()) return nullptr;
  // A time-skew failure is reported by the trigger at the fire time.
  if (!config_.CheckMaxTimeDiffSecondsTolerable(plan->config->max_time_diff_seconds).ok()) {
    return nullptr;
  }
  {
    MutexLock lock(&mu_);
    // A run going on now: the trigger at the fire time decides (it may be over by then).
    if (stopped_ || normal_running_) return nullptr;
    if (std::any_of(plan->items.begin(), plan->items.end(),
                    [&](int i) ELASTICJOB_REQUIRES(mu_) { return running_items_.count(i) != 0; })) {
      return nullptr;  // a failover run of ours holds one of them
    }
    normal_running_ = true;
    normal_items_ = plan->items;
    running_items_.insert(plan->items.begin(), plan->items.end());
  }
  auto run = std::make_shared<Run>();
  run->config = plan->config;
  TakePlan(*run, plan);
  run->fire_time = fire_time;
  run->done = std::move(done);
  run->remaining = run->items.size();
  {
    MutexLock lock(&mu_);
    HoldLocked(run);
  }
  auto prepared = std::make_shared<Prepared>();
  prepared->executor = this;
  prepared->controlled = run->config->timeout_ms > 0 || run->config->max_retries > 0;
  if (pinning_ != nullptr) prepared->pin = pinning_->Pin();
  prepared->changes = plan->changes;
  prepared->contexts.reserve(run->items.size());
  prepared->reports.reserve(run->items.size());
  prepared->took.resize(run->items.size());
  for (int item : run->items) {
    prepared->contexts.push_back(ContextOf(*run, item));
    prepared->reports.push_back(ReportOf(*run, item));
  }
  if (tracing_ != nullptr) {
    if (run->trace == nullptr)
      run->trace = tracing_->RunInfoOf(run->config->job_name, run->task_id);
    prepared->starts.reserve(run->items.size());
    for (size_t i = 0; i < run->items.size(); ++i) {
      auto events = tracing_->MakeItemEvents(run->trace, run->items[i], SourceOf(*run));
      prepared->contexts[i].log_sink = std::move(events.log);
      prepared->starts.push_back(std::move(events.start));
      prepared->ends.push_back(std::move(events.end));
    }
    run->last_status = tracing_->StatusEvent(run->trace, TraceState::kTaskFinished, "");
    prepared->staging = tracing_->StatusEvent(run->trace, TraceState::kTaskStaging,
                                              tracing::StagingMessage(run->config->job_name));
    prepared->running = tracing_->StatusEvent(run->trace, TraceState::kTaskRunning, "");
  }
  prepared->run = std::move(run);
  prepared->admissible = admissible;
  prepared->change_counter = change_counter;
  prepared->epoch = admissible_now ? epoch : 0;
  prepared->skipped = std::move(skipped);
  prepared->self = prepared;
  return prepared;
}

std::vector<trigger::LaunchBoard::Unit> JobExecutor::LaunchUnits(
    const std::shared_ptr<Prepared>& prepared) {
  std::vector<trigger::LaunchBoard::Unit> units;
  units.reserve(prepared->contexts.size());
  // The closures hold a plain pointer (small enough to live inside the unit, no allocation
  // to chase at the fire time); the unit's `keep` holds the object.
  Prepared* p = prepared.get();
  for (size_t i = 0; i < prepared->contexts.size(); ++i) {
    units.push_back(trigger::LaunchBoard::Unit{
        [p](std::function<void()>& after, Clock::WallTime now) {
          return p->executor->Admit(*p, after, now);
        },
        [p, i] { p->executor->RunPrepared(*p, i); },
        prepared,
        // What admission and the start read besides the prepared run's first line (`keep`):
        // its second and third, the run's first (fire time, cancellation, count), the
        // cancellations, the lines of the item's context and report the start reads or
        // writes, its time taken, this executor's start-path line, the job's code (its
        // first 64 bytes, which may straddle two lines) and what admission writes in the
        // sharding service.
        {reinterpret_cast<const char*>(p) + 64, reinterpret_cast<const char*>(p) + 128,
         p->run.get(), p->run->cancel.get(),
         p->contexts[i].cancellation != p->run->cancel ? p->contexts[i].cancellation.get()
                                                       : nullptr,
         &p->contexts[i].job_parameter, &p->contexts[i].cancellation,
         &p->contexts[i].start_deadline, &p->reports[i].duration, &p->reports[i].started,
         &p->took[i], &job_, job_.get(), reinterpret_cast<const char*>(job_.get()) + 63,
         sharding_.run_admitted_address(),
         // With tracing, the events the start stamps and pushes.
         p->staging.get(), p->running.get(), i < p->starts.size() ? p->starts[i].get() : nullptr,
         i < p->ends.size() ? p->ends[i].get() : nullptr, p->run->last_status.get()}});
  }
  return units;
}

bool JobExecutor::Admit(Prepared& prepared, std::function<void()>& after, Clock::WallTime now) {
  (void)after;  // the marks are written already (claimed at the preparation)
  int state = prepared.state.load(std::memory_order_acquire);
  if (state != Prepared::kPending) return state == Prepared::kAdmitted;
  // Nothing moved in the process since the preparation (infra/change_epoch.h): admitted, and
  // the plan still holds, without this job's own reads.
  const bool unmoved = prepared.epoch != 0 && infra::ChangeEpoch().load() == prepared.epoch;
  // Quartz's "do nothing" misfire policy: a fire time that passes while paused is skipped.
  const bool admitted = unmoved || prepared.admissible == nullptr ||
                        prepared.admissible->load(std::memory_order_acquire);
  bool fresh = unmoved;
  if (!fresh) {
    const std::optional<uint64_t> changes =
        prepared.change_counter != nullptr
            ? std::optional<uint64_t>(prepared.change_counter->load(std::memory_order_acquire))
            : RegistryChanges();
    fresh = changes.has_value() && *changes == prepared.changes;
  }
  const bool claimed = prepared.claim.load(std::memory_order_acquire) == Prepared::kClaimedAll;
  const bool overdue = now - *prepared.run->fire_time > overdue_bound_;
  const bool go = admitted && fresh && claimed && !overdue;
  int reason = kAdmittedReason;
  if (!go) {
    reason = overdue ? kOverdue : !admitted ? kNotAdmissible : !fresh ? kChanged : kClaimPending;
  }
  const int decision = go ? Prepared::kAdmitted : Prepared::kLetGo;
  if (!prepared.state.compare_exchange_strong(state, decision, std::memory_order_acq_rel)) {
    return state == Prepared::kAdmitted;  // another item start (or Abandon) decided
  }
  if (go) {
    sharding_.NoteRunAdmitted(*prepared.run->fire_time);
    if (prepared.staging != nullptr) {
      // Built ahead: stamped (with the board's time for the start) and pushed, the start's
      // only tracing work.
      prepared.staging->time = now;
      prepared.running->time = now;
      tracing_->bus().Push(std::move(prepared.staging), std::move(prepared.running));
    }
    return true;
  }
  prepared.reason = reason;
  // The claim's end and this let-go meet: the second does the rest.
  if (prepared.meet.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The unit being started holds the object now; the task holds it from here on.
    control_.PostUrgent([this, p = prepared.self.lock()] { LetGo(p); });
  }
  return false;
}

bool JobExecutor::Abandon(const std::shared_ptr<Prepared>& prepared) {
  int state = Prepared::kPending;
  if (!prepared->state.compare_exchange_strong(state, Prepared::kLetGo,
                                               std::memory_order_acq_rel)) {
    return false;
  }
  prepared->reason = kAbandoned;
  if (prepared->meet.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return false;  // its claim is on its way: LetGo, at its end, releases it and skips
  }
  if (prepared->claimed.ok() && !prepared->claimed->empty() &&
      prepared->run->config->monitor_execution) {
    LetGo(prepared);  // its marks go first, then it is released and skipped
    return false;
  }
  Drop(prepared->run);
  return true;
}

void JobExecutor::LetGo(const std::shared_ptr<Prepared>& prepared) {
  // Both the claim and the let-go are in: what the claim wrote and why it was let go are
  // known. On the control executor or the claim's completion.
  const std::shared_ptr<Run>& run = prepared->run;
  int reason = prepared->reason;
  Result<std::vector<int>> claimed = std::move(prepared->claimed);
  if (reason == kClaimPending && Overdue(*run->fire_time)) reason = kOverdue;
  if (reason == kClaimPending) {
    // Admissible and current, but the marks were not confirmed by the fire time (or not all
    // of them): the items claimed start now, late by the claim's round trip.
    if (prepared->staging != nullptr) tracing_->PushNow(std::move(prepared->staging));
    return path_->Claimed(run, std::move(claimed));
  }
  if (reason == kOverdue) {
    if (metrics_ != nullptr) metrics_->skipped_overdue.Inc();
    log_("WARN", fmt::format("job={} instance={}: the fire time passed {} ms ago (was "
                             "the process paused?): skipped",
                             run->config->job_name, instance_id_,
                             std::chrono::duration_cast<std::chrono::milliseconds>(
                                 clock_.WallNow() - *run->fire_time)
                                 .count()));
  }
  auto after_marks = [this, prepared, run, reason] {
    if (reason == kChanged) return Reread(run);  // it reads everything again
    // Released and skipped, or re-run for a trigger that found it holding the lane.
    path_->LetGoEnded(prepared);
  };
  if (!claimed.ok() || claimed->empty() || !run->config->monitor_execution) return after_marks();
  // Its marks go before its items are released: a later run of ours may claim them then.
  execution_.RegisterJobCompletedAsync(*run->config, *claimed, control_,
                                       [after_marks](Status) { after_marks(); });
}

void JobExecutor::KeepClaimed(Run& run, const std::vector<int>& claimed) {
  std::vector<int> unclaimed = Minus(run.items, claimed);
  MutexLock lock(&mu_);
  for (int i : unclaimed) {
    running_items_.erase(i);
    fenced_items_.erase(i);
  }
  run.items = claimed;
  if (run.normal) normal_items_ = run.items;
}

void JobExecutor::StartItems(const std::shared_ptr<Run>& run) {
  run->remaining = run->items.size();
  if (tracing_ != nullptr) TraceStatus(*run, TraceState::kTaskRunning, "");
  RunItems(run);
}

bool JobExecutor::LeaseAllowsStart(Run& run, ShardingContext& ctx) {
  // The common case: two atomic loads and a clock read.
  if (lease_ != nullptr ? lease_->LeaseHeld() : execution_.LeaseHeld()) {
    ctx.start_deadline = lease_ != nullptr ? lease_->lease_expiry() : execution_.lease_expiry();
    return true;
  }
  // Not heard from the registry within the lease: the process was paused, or the
  // connection is gone. Wait for the registry's word: an answer in the session the items
  // were claimed in proves them still ours; the session's end (expired: others may run
  // them now) or no word within a session timeout means they may not be, and the item does
  // not start. The expiry's fencing (Fence) cancels the run as well.
  // A registry without sessions reports no timeout: a waiter there (a test's lapsed lease)
  // still gives up in time.
  std::chrono::milliseconds wait = execution_.session_timeout();
  if (wait <= std::chrono::milliseconds(0)) wait = std::chrono::seconds(10);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  const bool held = execution_.AwaitLease(deadline) && execution_.session_epoch() == run.session;
  if (held) {
    ctx.start_deadline = execution_.lease_expiry();
    return true;
  }
  run.cancel->Request(
      fmt::format("no word from the registry within the lease ({} ms) before the "
                  "item's start: its session may have expired",
                  execution_.lease_bound().count()));
  return false;
}

bool JobExecutor::Overdue(Clock::WallTime fire_time) {
  return clock_.WallNow() - fire_time > overdue_bound_;
}

void JobExecutor::Drop(const std::shared_ptr<Run>& run) {
  Queued queued;
  {
    MutexLock lock(&mu_);
    queued = ReleaseLocked(*run);
  }
  run->done = {};  // never called: what it holds goes now
  if (queued.done) {
    control_.Post([this, queued = std::move(queued)]() mutable {
      TriggerNow(std::move(queued.done), std::move(queued.parameter), queued.keep);
    });
  }
}

void JobExecutor::Reread(const std::shared_ptr<Run>& run) {
  // The lane stays ours; what the plan gave is worked out again.
  {
    MutexLock lock(&mu_);
    for (int i : run->items) {
      running_items_.erase(i);
      fenced_items_.erase(i);
    }
    normal_items_.clear();
    holding_runs_.erase(run.get());
    run->holding = false;
  }
  run->plan = nullptr;
  run->items.clear();
  run->params = nullptr;
  run->task_id.clear();
  run->trace = nullptr;  // the task id may change
  run->last_status = nullptr;
  const std::optional<uint64_t> changes = RegistryChanges();
  auto loaded = config_.LoadLastGood();
  if (!loaded.ok()) return End(run, loaded.status());
  run->config = std::make_shared<const JobConfiguration>(*std::move(loaded));
  if (Status s = config_.CheckMaxTimeDiffSecondsTolerable(run->config->max_time_diff_seconds);
      !s.ok()) {
    return End(run, s);
  }
  ReadItems(run, changes);
}

std::optional<uint64_t> JobExecutor::RegistryChanges() {
  return registry_changes_ ? registry_changes_() : std::nullopt;
}

void JobExecutor::TakePlan(Run& run, const std::shared_ptr<const Plan>& plan) {
  run.plan = plan;
  run.items = plan->items;
  run.params = plan->params;
  run.task_id = plan->task_id;
  run.trace = plan->trace;
}

std::shared_ptr<const JobExecutor::Plan> JobExecutor::CurrentPlan(std::optional<uint64_t> changes) {
  MutexLock lock(&mu_);
  if (plan_ == nullptr || !changes.has_value() || plan_->changes != *changes) return nullptr;
  return plan_;
}

void JobExecutor::KeepPlan(std::optional<uint64_t> changes, const Run& run) {
  if (!changes.has_value()) return;
  auto plan = std::make_shared<Plan>();
  plan->changes = *changes;
  plan->config = run.config;
  plan->items = run.items;
  plan->params = run.params;  // REQUIRES: Prepare(run) done
  plan->task_id = run.task_id;
  plan->trace = run.trace;
  // What RunPath::Completed reads after the run, read now: while the plan holds, it is the same.
  if (run.config->misfire) {
    auto misfired = execution_.GetMisfiredJobItems(run.items);
    auto need = sharding_.IsNeedSharding();
    if (!misfired.ok() || !need.ok()) return;
    plan->misfired = *misfired;
    plan->need_sharding = *need;
  }
  MutexLock lock(&mu_);
  plan_ = std::move(plan);
}

void JobExecutor::Proceed(const std::shared_ptr<Run>& run) {
  if (run->items.empty() && run->misfire) {
    // A misfire re-run (RunPath::Completed) left with nothing: the after-listeners of its run, then
    // the end.
    return After(run, [this, run] { End(run, Outcome::kRan); });
  }
  if (run->items.empty()) {
    // As ElasticJob, the listeners run even when this instance has nothing to run.
    if (Status s = Prepare(*run); !s.ok()) return End(run, s);
    if (tracing_ != nullptr) {
      TraceStatus(*run, TraceState::kTaskStaging, tracing::StagingMessage(run->config->job_name));
      TraceStatus(*run, TraceState::kTaskFinished,
                  tracing::EmptyItemsMessage(run->config->job_name));
    }
    return Before(run, [this, run] { After(run, [this, run] { End(run, Outcome::kNoItems); }); });
  }
  auto skip_as_misfire = [&] {
    if (tracing_ != nullptr) TraceMisfire(*run->config, run->items);
    run->items.clear();  // nothing of ours is running
    if (run->misfire) return After(run, [this, run] { End(run, Outcome::kRan); });
    End(run, Outcome::kMisfire);
  };
  bool held = false;
  {
    MutexLock lock(&mu_);
    // A failover run of ours still holds one of them (a resharding gave it to us meanwhile).
    held = std::any_of(run->items.begin(), run->items.end(), [&](int i) ELASTICJOB_REQUIRES(mu_) {
      return running_items_.count(i) != 0;
    });
    if (!held) normal_items_ = run->items;
  }
  if (held) return skip_as_misfire();
  // ElasticJob also reads each item's running mark here. Here the claim (RunPath::Claim) finds a
  // mark on one: a departed instance's or a cut-short run's is replaced, a live instance's leaves
  // that item to it, at no request per item and run while there is none.
  {
    MutexLock lock(&mu_);
    running_items_.insert(run->items.begin(), run->items.end());
    HoldLocked(run);
  }
  if (Status s = Prepare(*run); !s.ok()) return End(run, s);
  if (tracing_ != nullptr) {
    TraceStatus(*run, TraceState::kTaskStaging, tracing::StagingMessage(run->config->job_name));
  }
  if (run->misfire) return path_->Claim(run);  // its before-listeners ran before its first pass
  Before(run, [this, run] { path_->Claim(run); });
}

void JobExecutor::RunFailover(Done done) {
  auto config = config_.LoadLastGood();
  if (!config.ok()) return done(config.status());
  if (!config->failover) return done(Outcome::kNoItems);
  auto claimed = failover_.GetLocalFailoverItems();
  if (!claimed.ok()) return done(claimed.status());
  auto run = std::make_shared<Run>();
  run->config = std::make_shared<const JobConfiguration>(*std::move(config));
  run->normal = false;
  run->failover_items = true;
  {
    MutexLock lock(&mu_);
    if (stopped_) {
      lock.Unlock();
      return done(Status(StatusCode::kCancelled, "job stopped"));
    }
    for (int i : *claimed) {
      if (running_items_.insert(i).second) run->items.push_back(i);
    }
    HoldLocked(run);
  }
  run->done = std::move(done);
  if (run->items.empty()) return End(run, Outcome::kNoItems);
  if (run->config->monitor_execution) {
    // An item already running elsewhere was picked up by its new owner (a resharding gave it
    // away): nothing is left to take over.
    std::vector<int> moot;
    for (int i : run->items) {
      auto running = execution_.HasRunningItems({i});
      if (!running.ok()) return End(run, running.status());
      if (*running) moot.push_back(i);
    }
    if (!moot.empty()) {
      if (Status s = failover_.UpdateFailoverComplete(moot); !s.ok()) return End(run, s);
      {
        MutexLock lock(&mu_);
        for (int i : moot) running_items_.erase(i);
      }
      run->items = Minus(std::move(run->items), moot);
      if (run->items.empty()) return End(run, Outcome::kNoItems);
    }
  }
  if (Status s = Prepare(*run); !s.ok()) return End(run, s);
  if (tracing_ != nullptr) {
    TraceStatus(*run, TraceState::kTaskStaging, tracing::StagingMessage(run->config->job_name));
  }
  Before(run, [this, run] { path_->Claim(run); });
}

Status JobExecutor::Prepare(Run& run) {
  const JobConfiguration& config = *run.config;
  if (run.params == nullptr) {
    auto params =
        ParseShardingItemParameters(config.sharding_item_parameters, config.sharding_total_count);
    if (!params.ok()) return params.status();
    run.params = std::make_shared<const std::map<int, std::string>>(*std::move(params));
  }
  if (run.task_id.empty()) run.task_id = BuildTaskId(config.job_name, run.items, instance_id_);
  if (tracing_ != nullptr && run.trace == nullptr) {
    run.trace = tracing_->RunInfoOf(config.job_name, run.task_id);
  }
  return Status::Ok();
}

ShardingContexts JobExecutor::ContextsOf(const Run& run) {
  ShardingContexts c{run.task_id,
                     run.config->job_name,
                     run.config->sharding_total_count,
                     run.parameter.value_or(run.config->job_parameter),
                     {}};
  for (int item : run.items) {
    auto it = run.params->find(item);
    c.sharding_item_parameters[item] = it != run.params->end() ? it->second : "";
  }
  return c;
}

void JobExecutor::Before(const std::shared_ptr<Run>& run, std::function<void()> next) {
  if (listeners_ == nullptr || listeners_->empty()) return next();
  listeners_->Before(ContextsOf(*run), std::move(next));
}

void JobExecutor::After(const std::shared_ptr<Run>& run, std::function<void()> next) {
  if (listeners_ == nullptr || listeners_->empty()) return next();
  listeners_->After(ContextsOf(*run), std::move(next));
}

ShardingContext JobExecutor::ContextOf(Run& run, int item) {
  const JobConfiguration& config = *run.config;
  ShardingContext ctx{config.job_name,
                      run.task_id,
                      config.sharding_total_count,
                      run.parameter.value_or(config.job_parameter),
                      item,
                      std::nullopt};
  if (auto it = run.params->find(item); it != run.params->end())
    ctx.sharding_parameter = it->second;
  if (run.items.size() > 1) {
    auto own = std::make_shared<Cancellation>();
    MutexLock lock(&run.item_cancels_mu);
    run.item_cancels[item] = own;
    ctx.cancellation = std::move(own);
  } else {
    ctx.cancellation = run.cancel;
  }
  ctx.fencing = run.fencing_token;
  ctx.logger = log_.logger();
  return ctx;
}

void JobExecutor::RunItems(const std::shared_ptr<Run>& run) {
  for (int item : run->items) {
    item_pool_.Post(
        [this, run, ctx = ContextOf(*run, item)]() mutable { RunItem(run, std::move(ctx)); });
  }
}

ItemRun JobExecutor::ReportOf(const Run& run, int item) {
  return ItemRun{run.config->job_name,
                 item,
                 instance_id_,
                 true,
                 "",
                 {},
                 run.misfire,
                 run.failover_items,
                 Clock::WallTime{},
                 run.fire_time};
}

void JobExecutor::RunItem(const std::shared_ptr<Run>& run, ShardingContext ctx) {
  ItemRun report = ReportOf(*run, ctx.sharding_item);
  if (tracing_ == nullptr) return RunUserCode(run, ctx, report);
  auto events = tracing_->MakeItemEvents(run->trace, ctx.sharding_item, SourceOf(*run));
  ctx.log_sink = std::move(events.log);
  RunUserCode(run, ctx, report, std::move(events.start), std::move(events.end));
}

void JobExecutor::RunPrepared(Prepared& prepared, size_t i) {
  const std::shared_ptr<Run>& run = prepared.run;
  if (prepared.controlled) [[unlikely]] {
    return RunControlled(run, prepared.contexts[i], prepared.reports[i],
                         i < prepared.starts.size() ? std::move(prepared.starts[i]) : nullptr,
                         i < prepared.ends.size() ? std::move(prepared.ends[i]) : nullptr);
  }
  prepared.took[i] = RunCode(*run, prepared.contexts[i], prepared.reports[i],
                             i < prepared.starts.size() ? std::move(prepared.starts[i]) : nullptr,
                             prepared.pin.get());
  // The rest of the item's end waits until this drainer has started the units it can take:
  // it delays no other job's start (on a launch board's drainer; elsewhere it runs now).
  trigger::LaunchBoard::AfterStarts(&JobExecutor::EndPrepared, &prepared, i);
}

void JobExecutor::EndPrepared(void* object, size_t i) {
  Prepared& prepared = *static_cast<Prepared*>(object);
  prepared.executor->EndItem(prepared.run, prepared.contexts[i], prepared.reports[i],
                             prepared.took[i],
                             i < prepared.ends.size() ? std::move(prepared.ends[i]) : nullptr);
}

ExecutionSource JobExecutor::SourceOf(const Run& run) {
  if (run.failover_items) return ExecutionSource::kFailover;
  return run.misfire ? ExecutionSource::kMisfire : ExecutionSource::kNormalTrigger;
}

void JobExecutor::TraceMisfire(const JobConfiguration& config, const std::vector<int>& items) {
  auto info =
      tracing_->RunInfoOf(config.job_name, BuildTaskId(config.job_name, items, instance_id_));
  tracing_->PostStatus(info, TraceState::kTaskStaging, tracing::StagingMessage(config.job_name));
  tracing_->PostStatus(info, TraceState::kTaskFinished,
                       tracing::MisfireMessage(config.job_name, items));
}

void JobExecutor::TraceStatus(const Run& run, TraceState state, std::string message) {
  auto info =
      run.trace != nullptr ? run.trace : tracing_->RunInfoOf(run.config->job_name, run.task_id);
  tracing_->PostStatus(std::move(info), state, std::move(message));
}

void JobExecutor::RunUserCode(const std::shared_ptr<Run>& run, ShardingContext& ctx,
                              ItemRun& report, std::unique_ptr<tracing::Event> trace_start,
                              std::unique_ptr<tracing::Event> trace_end) {
  if (run->config->timeout_ms > 0 || run->config->max_retries > 0) [[unlikely]] {
    return RunControlled(run, ctx, report, std::move(trace_start), std::move(trace_end));
  }
  const std::chrono::nanoseconds took = RunCode(*run, ctx, report, std::move(trace_start));
  EndItem(run, ctx, report, took, std::move(trace_end));
}

std::chrono::nanoseconds JobExecutor::RunCode(Run& run, ShardingContext& ctx, ItemRun& report,
                                              std::unique_ptr<tracing::Event> trace_start,
                                              const void* pin) {
  report.started = clock_.WallNow();
  if (trace_start != nullptr) tracing_->PushStart(std::move(trace_start), report.started);
  auto start = std::chrono::steady_clock::now();
  if (metrics_ != nullptr) {
    metrics_->running_items.Add(1);
    if (report.fire_time.has_value()) {
      metrics_->trigger_lateness.Observe(report.started - *report.fire_time);
    }
  }
  try {
    // A run fenced before this item started (its session expired) does not start it, nor
    // does one whose instance has not heard from the registry lately (LeaseAllowsStart).
    if (CancelledOf(run, ctx) == nullptr && LeaseAllowsStart(run, ctx)) {
      // User code is fenced here.
      if (pinning_ != nullptr) {
        pinning_->ExecutePinned(ctx, pin);
      } else {
        job_->Execute(ctx);
      }
    }
  } catch (const std::exception& e) {
    report.success = false;
    report.error = e.what();
  } catch (...) {
    report.success = false;
    report.error = "unknown exception";
  }
  if (const Cancellation* cancelled = CancelledOf(run, ctx); cancelled != nullptr) {
    report.success = false;
    report.error = "cancelled: " + cancelled->reason() +
                   (report.error.empty() ? "" : " (" + report.error + ")");
  }
  const auto took = std::chrono::steady_clock::now() - start;
  report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(took);
  return took;
}

void JobExecutor::EndItem(const std::shared_ptr<Run>& run, const ShardingContext& ctx,
                          ItemRun& report, std::chrono::nanoseconds took,
                          std::unique_ptr<tracing::Event> trace_end) {
  CountItemEnd(report, took);
  if (trace_end != nullptr) {
    tracing_->PushEnd(std::move(trace_end), report.started, report.success, report.error);
    if (!report.success) {
      MutexLock lock(&run->errors_mu);
      run->errors.emplace_back(ctx.sharding_item, report.error);
    }
  }
  if (on_item_run_) on_item_run_(report);
  // The last one ends the pass; the registry work goes to the control executor, so that
  // item threads start the items still queued first (on a launch board's drainer, once its
  // batch's starts are all under way: LaunchBoard::PostAfterRun).
  EndPassIfLast(run);
}

void JobExecutor::CountItemEnd(const ItemRun& report, std::chrono::nanoseconds took) {
  if (metrics_ == nullptr) return;
  // Relaxed atomics only: the fire path takes no lock and allocates nothing here.
  metrics_->running_items.Add(-1);
  (report.success ? metrics_->runs_succeeded : metrics_->runs_failed).Inc();
  metrics_->item_duration.Observe(took);
  if (report.failover) metrics_->failovers_taken.Inc();
}

void JobExecutor::EndPassIfLast(const std::shared_ptr<Run>& run) {
  if (run->remaining.fetch_sub(1) == 1) {
    run->items_done = true;
    if (tracing_ != nullptr) {
      std::vector<std::pair<int, std::string>> errors;
      {
        MutexLock lock(&run->errors_mu);
        errors.swap(run->errors);
      }
      std::sort(errors.begin(), errors.end());
      if (run->last_status != nullptr) {
        // Built ahead: stamped and pushed (a misfire re-run's makes its own).
        if (!errors.empty()) {
          run->last_status->state = TraceState::kTaskError;
          run->last_status->text = tracing::ItemErrorsMessage(errors);
        }
        tracing_->PushNow(std::move(run->last_status));
      } else if (errors.empty()) {
        TraceStatus(*run, TraceState::kTaskFinished, "");
      } else {
        TraceStatus(*run, TraceState::kTaskError, tracing::ItemErrorsMessage(errors));
      }
    }
    trigger::LaunchBoard::PostAfterRun(control_, [this, run] { path_->Complete(run); });
  }
}

JobExecutor::Rerun JobExecutor::DecideRerun(const Run& run, bool resharding,
                                            const std::vector<int>& marked) {
  MutexLock lock(&mu_);
  Rerun rerun;
  rerun.ours = misfire_marked_;
  rerun.again = run.config->misfire && !resharding && !stopped_ && !run.session_lost &&
                (misfire_pending_ || (!rerun.ours && !marked.empty()));
  misfire_pending_ = false;
  if (!rerun.again) {
    // The lane stays taken while the after-listeners run; a trigger meanwhile is queued
    // and runs after them.
    normal_after_ = true;
    misfire_marked_ = false;  // cleared by the caller
  }
  return rerun;
}

void JobExecutor::ForgetMisfireMarks() {
  MutexLock lock(&mu_);
  misfire_marked_ = false;
}

Result<std::vector<int>> JobExecutor::ItemsNow(const JobConfiguration& config) {
  std::vector<int> out;
  if (config.failover) {
    auto claimed = failover_.GetLocalFailoverItems();
    if (!claimed.ok()) return claimed.status();
    out = *claimed;
  }
  if (out.empty()) {
    auto local = sharding_.GetLocalShardingItems(config.sharding_total_count);
    if (!local.ok()) return local.status();
    out = *local;
    if (config.failover) {
      auto taken = failover_.GetLocalTakeOffItems(out);
      if (!taken.ok()) return taken.status();
      out = Minus(std::move(out), *taken);
    }
    auto disabled = execution_.GetDisabledItems(out);
    if (!disabled.ok()) return disabled.status();
    out = Minus(std::move(out), *disabled);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void JobExecutor::End(const std::shared_ptr<Run>& run, Result<Outcome> result) {
  Queued queued;
  {
    MutexLock lock(&mu_);
    queued = ReleaseLocked(*run);
  }
  Deliver(run, std::move(result), std::move(queued));
}

void JobExecutor::HoldLocked(const std::shared_ptr<Run>& run) {
  run->holding = true;
  holding_runs_.emplace(run.get(), run);
}

JobExecutor::Queued JobExecutor::ReleaseLocked(const Run& run) {
  if (run.holding) {
    for (int i : run.items) {
      running_items_.erase(i);
      fenced_items_.erase(i);
    }
    holding_runs_.erase(&run);
  }
  if (!run.normal) return {};
  normal_running_ = false;
  normal_after_ = false;
  normal_items_.clear();
  misfire_pending_ = false;
  misfire_marked_ = false;  // any left are cleared by a later run, as someone else's
  if (!kept_.empty()) {
    Queued next = std::move(kept_.front());
    kept_.pop_front();
    return next;
  }
  return {std::move(queued_), std::exchange(queued_parameter_, std::nullopt)};
}

void JobExecutor::Deliver(const std::shared_ptr<Run>& run, Result<Outcome> result, Queued queued) {
  Done done = std::move(run->done);
  if (done) done(std::move(result));
  if (queued.done) {
    control_.Post([this, queued = std::move(queued)]() mutable {
      TriggerNow(std::move(queued.done), std::move(queued.parameter), queued.keep);
    });
  }
}

std::vector<int> JobExecutor::Fence(const std::string& reason) {
  std::vector<std::shared_ptr<Run>> runs;
  std::vector<int> items;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, run] : holding_runs_) {
      if (run->session_lost.exchange(true)) continue;  // fenced already
      runs.push_back(run);
      const bool done = run->items_done.load();
      for (int i : run->items) {
        fenced_items_.insert(i);
        if (!done) items.push_back(i);  // a pass whose items all returned cancels nothing
      }
    }
  }
  // Outside mu_: the requests run the items' callbacks (a SCRIPT item's group killed).
  for (const auto& run : runs) CancelRun(*run, reason, std::chrono::milliseconds(0));
  std::sort(items.begin(), items.end());
  return items;
}

std::vector<int> JobExecutor::CancelRunning(std::optional<int> item, const std::string& reason,
                                            std::optional<int64_t> before) {
  std::vector<std::shared_ptr<Run>> runs;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, run] : holding_runs_) {
      if (run->session_lost.load() || run->items_done.load()) continue;
      if (item && std::find(run->items.begin(), run->items.end(), *item) == run->items.end()) {
        continue;
      }
      runs.push_back(run);
    }
  }
  // Outside mu_, as in Fence.
  std::vector<int> items;
  for (const auto& run : runs) {
    if (before) {
      MutexLock lock(&run->claim_mu);
      if (!run->claim_answered) {
        // Its claim is out: it may be a later fire's run, which the stop leaves.
        run->stops_waiting.push_back({item, reason, *before});
        continue;
      }
      // Claimed after the stop was written: a later fire's run, which it does not stop. (A
      // run without running marks has no stamp: stopped whenever it is seen.)
      if (run->fencing_token != 0 && run->fencing_token > *before) continue;
    }
    std::vector<int> stopped = StopRun(*run, item, reason);
    items.insert(items.end(), stopped.begin(), stopped.end());
  }
  std::sort(items.begin(), items.end());
  return items;
}

void JobExecutor::ClaimAnswered(Run& run, int64_t fencing_token) {
  std::vector<Run::StopRequest> stops;
  {
    MutexLock lock(&run.claim_mu);
    run.fencing_token = fencing_token;
    run.claim_answered = true;
    stops.swap(run.stops_waiting);
  }
  for (const Run::StopRequest& stop : stops) {
    if (fencing_token != 0 && fencing_token > stop.before) continue;  // a later fire's run
    (void)StopRun(run, stop.item, stop.reason);
  }
}

std::vector<int> JobExecutor::StopRun(Run& run, std::optional<int> item,
                                      const std::string& reason) {
  std::shared_ptr<Cancellation> one;
  if (item) {
    MutexLock lock(&run.item_cancels_mu);
    if (auto it = run.item_cancels.find(*item); it != run.item_cancels.end()) one = it->second;
  }
  if (one != nullptr) {
    one->RequestGraceful(reason, kStopGrace);  // that item only
    return {*item};
  }
  CancelRun(run, reason, kStopGrace);
  return run.items;
}

void JobExecutor::CancelRun(Run& run, const std::string& reason, std::chrono::milliseconds grace) {
  auto request = [&](Cancellation& c) {
    if (grace.count() > 0) {
      c.RequestGraceful(reason, grace);
    } else {
      c.Request(reason);
    }
  };
  MutexLock lock(&run.item_cancels_mu);
  request(*run.cancel);
  for (auto& [i, c] : run.item_cancels) request(*c);
}

const Cancellation* JobExecutor::CancelledOf(const Run& run, const ShardingContext& ctx) {
  if (run.cancel->requested()) return run.cancel.get();
  if (ctx.cancellation != nullptr && ctx.cancellation->requested()) return ctx.cancellation.get();
  return nullptr;
}

std::vector<int> JobExecutor::running_items() {
  MutexLock lock(&mu_);
  std::vector<int> out;
  for (int i : running_items_) {
    if (fenced_items_.count(i) == 0) out.push_back(i);
  }
  return out;
}

void JobExecutor::Stop() {
  Done queued;
  std::deque<Queued> kept;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    queued = std::move(queued_);
    kept.swap(kept_);
  }
  if (queued) queued(Status(StatusCode::kCancelled, "job stopped"));
  for (Queued& k : kept) k.done(Status(StatusCode::kCancelled, "job stopped"));
}

// ---- Execution timeouts and retries (docs/scheduling.md) ----
// Kept apart from RunUserCode: a job without timeoutMs and maxRetries pays one branch.

void JobExecutor::EndRetryWaits() {
  std::map<uint64_t, RetryWait> waits;
  {
    MutexLock lock(&mu_);
    retry_waits_ended_ = true;
    waits.swap(retry_waits_);
  }
  for (auto& [key, wait] : waits) {
    if (wait.timer != 0 && timer_.cancel) timer_.cancel(wait.timer);
    wait.start();
  }
}

std::function<void()> JobExecutor::TakeRetryWait(uint64_t key) {
  MutexLock lock(&mu_);
  auto wait = retry_waits_.find(key);
  if (wait == retry_waits_.end()) return nullptr;
  std::function<void()> start = std::move(wait->second.start);
  retry_waits_.erase(wait);
  return start;
}

// How long a SCRIPT item's process group has between SIGTERM and SIGKILL at its timeout.
constexpr std::chrono::milliseconds kTimeoutGrace{3000};

// One item's attempts. Shared by the attempt's thread, its timeout's timer task and the
// retry's; `ended` decides which of the thread and the timeout ends an attempt.
struct JobExecutor::Attempts {
  std::shared_ptr<Run> run;
  ShardingContext ctx;
  ItemRun report;
  bool traced = false;
  std::unique_ptr<tracing::Event> start;  // the next attempt's events (tracing on)
  std::unique_ptr<tracing::Event> end;
  std::chrono::steady_clock::time_point first_start;
  // Its count of failed attempts is in the registry (`attempts/{i}`): recorded here while a
  // retry waits, or carried over from the instance a failover run took the item from.
  bool count_kept = false;
  // The item's cancellation (its own, or the run's): an attempt's is requested with it.
  std::shared_ptr<Cancellation> item_cancel;
  // The current attempt's.
  struct Attempt {
    std::shared_ptr<Cancellation> cancel = std::make_shared<Cancellation>();
    std::atomic<bool> ended{false};
    ShardingContext ctx;  // its own: a timed-out attempt's code may still read its copy
    Clock::WallTime started;
    uint64_t forward = 0;  // the item cancellation's callback that cancels this attempt too
    uint64_t timer = 0;    // its timeout's timer task
    std::unique_ptr<tracing::Event> end;
  };
  std::shared_ptr<Attempt> current;
};

void JobExecutor::RunControlled(const std::shared_ptr<Run>& run, ShardingContext& ctx,
                                ItemRun& report, std::unique_ptr<tracing::Event> start,
                                std::unique_ptr<tracing::Event> end) {
  auto a = std::make_shared<Attempts>();
  a->run = run;
  a->ctx = ctx;
  a->item_cancel = ctx.cancellation != nullptr ? ctx.cancellation : run->cancel;
  a->ctx.cancellation = a->item_cancel;
  a->report = report;
  a->traced = start != nullptr && end != nullptr;
  a->start = std::move(start);
  a->end = std::move(end);
  a->ctx.max_attempts = run->config->max_retries + 1;
  if (run->failover_items && run->config->failover && a->ctx.max_attempts > 1) {
    // The crashed instance's failed attempts count (docs/scheduling.md): continue after them.
    auto failed = failover_.FailedAttempts(a->ctx.sharding_item);
    if (failed.ok() && *failed > 0) {
      a->ctx.attempt = std::min(*failed + 1, a->ctx.max_attempts);
      a->count_kept = true;
    }
  }
  a->first_start = std::chrono::steady_clock::now();
  report.started = clock_.WallNow();
  a->report.started = report.started;
  if (metrics_ != nullptr) {
    metrics_->running_items.Add(1);
    if (report.fire_time.has_value()) {
      metrics_->trigger_lateness.Observe(report.started - *report.fire_time);
    }
  }
  StartAttempt(a);
}

void JobExecutor::StartAttempt(const std::shared_ptr<Attempts>& a) {
  const std::shared_ptr<Run>& run = a->run;
  auto at = std::make_shared<Attempts::Attempt>();
  a->current = at;
  at->started = clock_.WallNow();
  if (a->traced) {
    if (a->start == nullptr) {  // a retry: an execution row of its own
      auto events = tracing_->MakeItemEvents(run->trace, a->ctx.sharding_item, SourceOf(*run));
      a->start = std::move(events.start);
      a->end = std::move(events.end);
      a->ctx.log_sink = std::move(events.log);
    }
    at->end = std::move(a->end);
    tracing_->PushStart(std::move(a->start), at->started);
  }
  // The run's cancellation (a fence) cancels the attempt too; the attempt's own may come
  // from its timeout alone.
  at->forward = a->item_cancel->OnRequest([cancel = at->cancel, from = a->item_cancel.get()] {
    // grace() is one atomic load: allowed under `from`'s lock.
    const std::chrono::milliseconds grace = from->grace();
    if (grace.count() > 0) {
      cancel->RequestGraceful("the run was cancelled", grace);
    } else {
      cancel->Request("the run was cancelled");
    }
  });
  at->ctx = a->ctx;
  at->ctx.cancellation = at->cancel;
  const int64_t timeout_ms = run->config->timeout_ms;
  if (timeout_ms > 0 && timer_.at) {
    at->timer =
        timer_.at(at->started + std::chrono::milliseconds(timeout_ms), [this, a, at, timeout_ms] {
          if (at->ended.exchange(true)) return;  // it returned first
          const std::string cause = fmt::format("timeout after {} ms", timeout_ms);
          // SCRIPT groups get SIGTERM, then SIGKILL after the grace; in-process code sees
          // cancelled() and is reported failed now even if it runs on (its thread is not ours to
          // stop: docs/scheduling.md).
          at->cancel->RequestGraceful(cause, kTimeoutGrace);
          if (metrics_ != nullptr) metrics_->timeouts.Inc();
          // Off the timer's thread: the error handler and the run's end are no timer work.
          item_pool_.Post([this, a, cause] { AttemptEnded(a, false, cause, /*timed_out=*/true); });
        });
  }
  bool success = true;
  std::string error;
  try {
    if (CancelledOf(*run, a->ctx) == nullptr && LeaseAllowsStart(*run, at->ctx)) {
      job_->Execute(at->ctx);  // user code is fenced here
    }
  } catch (const std::exception& e) {
    success = false;
    error = e.what();
  } catch (...) {
    success = false;
    error = "unknown exception";
  }
  a->item_cancel->Unregister(at->forward);
  if (at->ended.exchange(true)) return;  // its timeout ended it: nothing more of ours
  if (at->timer != 0 && timer_.cancel) timer_.cancel(at->timer);
  if (const Cancellation* cancelled = CancelledOf(*run, a->ctx); cancelled != nullptr) {
    success = false;
    error = "cancelled: " + cancelled->reason() + (error.empty() ? "" : " (" + error + ")");
  } else if (at->cancel->requested()) {
    success = false;
    error = at->cancel->reason() + (error.empty() ? "" : " (" + error + ")");
  }
  AttemptEnded(a, success, std::move(error), /*timed_out=*/false);
}

void JobExecutor::AttemptEnded(const std::shared_ptr<Attempts>& a, bool success, std::string error,
                               bool timed_out) {
  const std::shared_ptr<Run>& run = a->run;
  std::shared_ptr<Attempts::Attempt> at = a->current;
  const int attempt = a->ctx.attempt;
  const int max_attempts = a->ctx.max_attempts;
  if (!success && max_attempts > 1)
    error += fmt::format(" (attempt {} of {})", attempt, max_attempts);
  if (a->traced && at->end != nullptr) {
    tracing_->PushEnd(std::move(at->end), at->started, success, error);
  }
  // A cancelled run (fenced, or stopped) is not retried: its items are not ours to run.
  const bool stopped = CancelledOf(*run, a->ctx) != nullptr ||
                       (at->cancel->requested() && !timed_out && at->cancel->grace().count() > 0);
  if (!success && attempt < max_attempts && !stopped) {
    log_("WARN", fmt::format("job '{}': item {} failed ({}); retrying", run->config->job_name,
                             a->ctx.sharding_item, error));
    a->ctx.attempt = attempt + 1;
    // The retry's time counts from the failure, not from the count's write below (a round
    // trip, during which a test's simulated clock may already have moved on).
    const Clock::WallTime retry_at =
        clock_.WallNow() + std::chrono::milliseconds(run->config->retry_interval_ms);
    if (run->config->failover) {
      // A crash before the retry hands the item over with its count (docs/scheduling.md).
      Status kept = failover_.RecordFailedAttempts(a->ctx.sharding_item, attempt);
      a->count_kept = a->count_kept || kept.ok();
    }
    auto again = [this, a] { item_pool_.Post([this, a] { StartAttempt(a); }); };
    const int64_t interval = run->config->retry_interval_ms;
    if (interval <= 0 || !timer_.at) return again();
    uint64_t key;
    {
      MutexLock lock(&mu_);
      if (retry_waits_ended_) {
        lock.Unlock();
        return again();
      }
      key = next_retry_wait_++;
      retry_waits_[key].start = std::move(again);
    }
    const uint64_t timer = timer_.at(retry_at, [this, key] {
      if (auto start = TakeRetryWait(key)) start();
    });
    MutexLock lock(&mu_);
    if (auto wait = retry_waits_.find(key); wait != retry_waits_.end()) wait->second.timer = timer;
    return;
  }
  if (a->count_kept) (void)failover_.ClearFailedAttempts(a->ctx.sharding_item);
  a->report.success = success;
  a->report.error = std::move(error);
  a->report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - a->first_start);
  if (!success && at->cancel->requested() && at->cancel->grace().count() > 0) {
    // A timeout or a stop: the job's code did not report it to the error handler.
    if (auto* typed = dynamic_cast<TypedJob*>(job_.get()); typed != nullptr) {
      typed->HandleFailure(at->ctx, a->report.error);
    }
  }
  ControlledItemEnded(run, a->report, a->traced);
}

void JobExecutor::ControlledItemEnded(const std::shared_ptr<Run>& run, ItemRun& report,
                                      bool traced) {
  CountItemEnd(report, report.duration);
  if (traced && !report.success) {
    MutexLock lock(&run->errors_mu);
    run->errors.emplace_back(report.item, report.error);
  }
  if (on_item_run_) on_item_run_(report);
  EndPassIfLast(run);  // as RunUserCode
}

}  // namespace elasticjob::executor
