#include "executor/run_path.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "executor/job_run.h"

namespace elasticjob::executor {

// Prepare: the run worked out ahead, then its claim; a prepared run let go at its fire time
// (not admissible) releases its count without a report.
std::shared_ptr<JobExecutor::Prepared> RunPath::Prepare(Clock::WallTime fire_time,
                                                        const std::atomic<bool>* admissible,
                                                        const std::atomic<uint64_t>* change_counter,
                                                        std::optional<Clock::WallTime> due) {
  const Clock::WallTime now = clock_.WallNow();
  Ticket ticket{Source::kCron, fire_time, std::max(fire_time, now), Step::kPrepared};
  std::shared_ptr<Prepared> prepared =
      executor_.PrepareTrigger(fire_time, DoneOf(ticket), admissible, change_counter,
                               [owner = owner_.Hold()] { owner->Released(); });
  if (prepared != nullptr) Claim(prepared, due.value_or(now));
  return prepared;
}

// Claim, in the lead time: the marks now, so the start at the fire time waits for nothing
// (no item starts unclaimed: issue 24, items that started before their marks ran beside
// another instance's run of the same items).
void RunPath::Claim(const std::shared_ptr<Prepared>& prepared, Clock::WallTime due) {
  const std::shared_ptr<Run>& run = prepared->run;
  execution::ExecutionService& execution = executor_.execution_;
  run->session = execution.session_epoch();
  execution.ClaimAsync(
      *run->config, run->items, executor_.control_,
      [this, prepared, due](Result<std::vector<int>> claimed, int64_t fencing_token) {
        if (claimed.ok()) {
          const Clock::WallTime answered = clock_.WallNow();
          owner_.ClaimedAhead(answered, answered - due);
        }
        Run& r = *prepared->run;
        const bool all = claimed.ok() && claimed->size() == r.items.size();
        if (claimed.ok()) Reach(r.done.ticket, Step::kClaimed);
        // Before the claim's state is published below: an item start that sees it
        // claimed sees its token too.
        executor_.ClaimAnswered(r, fencing_token);
        for (ShardingContext& ctx : prepared->contexts) ctx.fencing = fencing_token;
        prepared->claimed = std::move(claimed);
        prepared->claim.store(all ? Prepared::kClaimedAll : Prepared::kClaimedPart,
                              std::memory_order_release);
        if (prepared->meet.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          executor_.LetGo(prepared);
        }
      });
}

// Claim: the items are claimed (their running marks created) before any starts, and only
// those claimed start: an item running on another instance is left to it (ElasticJob writes
// the marks first too, but overwrites a mark it finds).
void RunPath::Claim(const std::shared_ptr<Run>& run) {
  run->session = executor_.execution_.session_epoch();
  run->items_done = false;
  {
    MutexLock lock(&run->claim_mu);  // a misfire re-run's pass claims anew
    run->claim_answered = false;
  }
  if (run->normal && !run->misfire && run->fire_time.has_value()) {
    executor_.sharding_.NoteRunAdmitted(*run->fire_time);  // its items were read for this fire
  }
  executor_.execution_.ClaimAsync(
      *run->config, run->items, executor_.control_,
      [this, run](Result<std::vector<int>> claimed, int64_t fencing_token) {
        executor_.ClaimAnswered(*run, fencing_token);
        if (claimed.ok()) Reach(run->done.ticket, Step::kClaimed);
        Claimed(run, std::move(claimed));
      });
}

void RunPath::Claimed(const std::shared_ptr<Run>& run, Result<std::vector<int>> claimed) {
  if (!claimed.ok()) {
    if (claimed.status().code() != StatusCode::kCancelled) {  // not the registry closing
      executor_.log_("WARN", fmt::format("job={} instance={} items={}: running marks not "
                                         "written, the items do not run: {}",
                                         run->config->job_name, instance_id_,
                                         fmt::join(run->items, ","), claimed.status().ToString()));
    }
    return executor_.After(run, [this, run, s = claimed.status()] { executor_.End(run, s); });
  }
  // Some run elsewhere (logged by the claim): this run leaves them.
  if (claimed->size() != run->items.size()) executor_.KeepClaimed(*run, *claimed);
  if (run->items.empty()) {
    return executor_.After(run, [this, run] { executor_.End(run, Outcome::kMisfire); });
  }
  executor_.StartItems(run);
}

// Complete: the pass's marks cleared, then the run's completion.
void RunPath::Complete(const std::shared_ptr<Run>& run) {
  execution::ExecutionService& execution = executor_.execution_;
  if (run->session_lost.load() ||
      (run->config->monitor_execution && execution.session_epoch() != run->session)) {
    // The session its items were claimed in ended during the run (or Fence cut it short):
    // others may hold them now, under marks of their own, which a blind delete would remove
    // (and a second run of the item would start beside theirs). Only marks still ours go; no
    // misfire re-run follows.
    run->session_lost = true;
    if (run->config->monitor_execution) {
      if (Status s = execution.ClearOwnRunningInfo(run->items); !s.ok()) {
        return executor_.End(run, s);
      }
    }
    return Completed(run);
  }
  execution.RegisterJobCompletedAsync(*run->config, run->items, executor_.control_,
                                      [this, run](Status s) {
                                        if (!s.ok()) return executor_.End(run, s);
                                        Completed(run);
                                      });
}

void RunPath::Completed(const std::shared_ptr<Run>& run) {
  JobExecutor& ex = executor_;
  const JobConfiguration& config = *run->config;
  // A failover run whose session ended leaves the failover nodes: the items were queued for
  // failover again when that session expired, and the nodes may be their new claimer's.
  if (run->failover_items && !run->session_lost.load()) {
    if (Status s = ex.failover_.UpdateFailoverComplete(run->items); !s.ok()) {
      return ex.End(run, s);
    }
  }
  if (!run->normal) {
    Reach(run->done.ticket, Step::kCompleted);
    return ex.After(run, [&ex, run] { ex.End(run, Outcome::kRan); });
  }
  // Re-run once for every burst of triggers that found this run going: those noted here
  // while it ran, and misfire marks in the registry. The decision and the release of the
  // lane happen under one lock, so a trigger arriving now either is seen or runs itself.
  std::vector<int> marked;
  bool resharding = false;
  if (config.misfire && run->plan != nullptr && !run->misfire &&
      ex.CurrentPlan(ex.RegistryChanges()) == run->plan) {
    // Nothing has changed since the plan read them.
    marked = run->plan->misfired;
    resharding = run->plan->need_sharding;
  } else if (config.misfire) {
    auto m = ex.execution_.GetMisfiredJobItems(run->items);
    if (!m.ok()) return ex.End(run, m.status());
    marked = *m;
    auto need = ex.sharding_.IsNeedSharding();
    if (!need.ok()) return ex.End(run, need.status());
    resharding = *need;  // a resharding is pending: the next trigger handles it
  }
  const JobExecutor::Rerun rerun = ex.DecideRerun(*run, resharding, marked);
  if (!rerun.again) {
    // Our marks go once no re-run follows (ElasticJob clears them as each re-run starts;
    // kept, a job that keeps falling behind does not write them again at every trigger).
    if (rerun.ours) ex.execution_.ClearMisfireAsync(run->items, ex.control_);
    Reach(run->done.ticket, Step::kCompleted);
    return ex.After(run, [&ex, run] { ex.End(run, Outcome::kRan); });
  }
  RunAgain(run, rerun, marked);
}

// Launch, for a prepared run let go at its fire time (not admitted, or abandoned), its marks
// removed: it ran nothing, but a trigger that found it holding the lane meanwhile is a
// misfire all the same, which it re-runs as a run's completion does (Completed decides
// under the lane's lock with that trigger's mark: re-run here, or the trigger runs itself).
// Only those triggers count: misfire marks someone else left wait for a run that ran.
void RunPath::LetGoEnded(const std::shared_ptr<Prepared>& prepared) {
  JobExecutor& ex = executor_;
  const std::shared_ptr<Run>& run = prepared->run;
  bool resharding = false;
  if (run->config->misfire) {
    // Read before the decision, as Completed reads it (a trigger may note a misfire until
    // then). A resharding pending, or a flag not read (the registry closing at a stop):
    // no re-run, the next trigger handles it.
    auto need = ex.sharding_.IsNeedSharding();
    resharding = !need.ok() || *need;
  }
  const JobExecutor::Rerun rerun = ex.DecideRerun(*run, resharding, /*marked=*/{});
  if (rerun.again) return RunAgain(run, rerun, /*marked=*/{});
  if (rerun.ours) ex.execution_.ClearMisfireAsync(run->items, ex.control_);
  ex.Drop(run);
  if (prepared->skipped) prepared->skipped();
}

void RunPath::RunAgain(const std::shared_ptr<Run>& run, JobExecutor::Rerun rerun,
                       const std::vector<int>& marked) {
  JobExecutor& ex = executor_;
  const JobConfiguration& config = *run->config;
  // Marks someone else left (another instance, a run cut short) are cleared before the
  // re-run, sent before its running marks, so applied before them and before its end reads
  // the marks again. Our own stay until the last re-run ends.
  if (!rerun.ours && !marked.empty()) ex.execution_.ClearMisfireAsync(marked, ex.control_);
  run->misfire = true;
  run->fire_time.reset();
  if (run->cancel->requested()) {
    // Stopped by an operator (a fenced run re-runs nothing): the re-run is a later fire's,
    // which the stop does not cancel.
    MutexLock lock(&run->item_cancels_mu);
    run->cancel = std::make_shared<Cancellation>();
    run->item_cancels.clear();
  }
  // The re-run stands for the triggers this run made skip: it runs what they would have run,
  // this instance's items now, not only this run's (chaos proxy_partition: an item whose
  // failover run elsewhere ended during this run missed its fire). Mostly they are the same.
  if (run->plan != nullptr && ex.CurrentPlan(ex.RegistryChanges()) == run->plan) {
    return Claim(run);
  }
  auto now = ex.ItemsNow(config);
  if (!now.ok()) return ex.End(run, now.status());
  std::vector<int> had = run->items;
  std::sort(had.begin(), had.end());
  if (*now == had) return Claim(run);
  // Our misfire marks go first: they name this run's items, and a trigger during the re-run
  // marks its own.
  if (rerun.ours) {
    ex.execution_.ClearMisfireAsync(run->items, ex.control_);
    ex.ForgetMisfireMarks();
  }
  ex.Reread(run);
}

void RunPath::Reach(Ticket& ticket, Step to) {
  if (Advance(ticket, to)) return;
  owner_.Log("ERROR", fmt::format("job={}: a run's step {} after step {} (ignored)", job_name_,
                                  static_cast<int>(to), static_cast<int>(ticket.step)));
}

// Launch: the prepared starts on the board, under the item limit. The wrapping is made now,
// ahead of the fire: a start allocates nothing.
void RunPath::Launch(const std::shared_ptr<JobExecutor::Prepared>& prepared,
                     Clock::WallTime fire_time, trigger::LaunchBoard& board) {
  std::vector<trigger::LaunchBoard::Unit> units = executor_.LaunchUnits(prepared);
  const std::array<const void*, Owner::kStartTouches> ours = owner_.StartTouches();
  for (auto& unit : units) {
    // A queued start outlives the board's hold on the prepared run: it holds it too.
    const void* limited = nullptr;
    unit.run = owner_.LimitedStart(std::move(unit.run), unit.keep, &limited);
    size_t next = 0;  // into the slots LaunchUnits left empty
    for (const void*& slot : unit.touch) {
      if (slot != nullptr) continue;
      if (next < ours.size()) {
        slot = ours[next++];
      } else if (limited != nullptr) {
        slot = std::exchange(limited, nullptr);
      }
    }
  }
  board.Add(fire_time, std::move(units));
}

// Fire: the owner's admission, then the executor's trigger (it reads the run's items and
// hands them to Claim; Complete and Report follow).
void RunPath::Fire(Clock::WallTime fire_time) {
  switch (owner_.AdmitFire()) {
    case Owner::Admission::kStopped:
      owner_.Released();
      return;
    case Owner::Admission::kPaused:
      // Quartz's "do nothing" misfire policy: a fire time that passes while paused is skipped.
      owner_.FireSkipped();
      owner_.Released();
      return;
    case Owner::Admission::kRun:
      break;
  }
  executor_.Trigger(DoneOf({Source::kCron, fire_time, clock_.WallNow(), Step::kStarted}),
                    fire_time);
}

void RunPath::Operator(Clock::WallTime asked, std::optional<std::string> parameter) {
  executor_.TriggerNow(DoneOf({Source::kOperator, asked, asked, Step::kStarted}),
                       std::move(parameter));
}

void RunPath::Failover() {
  const auto now = clock_.WallNow();
  executor_.RunFailover(DoneOf({Source::kFailover, now, now, Step::kStarted}));
}

void RunPath::WorkflowNode(std::string parameter, std::function<void(bool, std::string)> report) {
  const auto now = clock_.WallNow();
  JobExecutor::Done done = DoneOf({Source::kOperator, now, now, Step::kStarted});
  done.report = [inner = std::move(done.report), report = std::move(report)](Ticket& ticket,
                                                                             Result<Outcome> r) {
    const bool ran = r.ok() && (*r == Outcome::kRan || *r == Outcome::kNoItems);
    report(ran, !r.ok() ? r.status().ToString()
                : ran   ? std::string()
                        : "the run did not start here");
    inner(ticket, std::move(r));
  };
  // A workflow node's run waits behind a run going here, in order, and neither replaces nor
  // is replaced by an operator trigger.
  executor_.TriggerNow(std::move(done), std::move(parameter), /*keep=*/true);
}

TriggerReport RunPath::ReportOf(const std::string& job_name, const Ticket& ticket,
                                const Result<Outcome>& outcome) {
  TriggerReport report{job_name, ticket.scheduled, ticket.started, TriggerReport::Outcome::kRan,
                       "",       ticket.source};
  if (!outcome.ok()) {
    report.outcome = TriggerReport::Outcome::kFailed;
    report.error = outcome.status().ToString();
  } else if (*outcome == Outcome::kNoItems || *outcome == Outcome::kQueued) {
    report.outcome = TriggerReport::Outcome::kNoItems;
  } else if (*outcome == Outcome::kMisfire) {
    report.outcome = TriggerReport::Outcome::kMisfire;
  }
  return report;
}

JobExecutor::Done RunPath::DoneOf(Ticket ticket) {
  // The owner's hold keeps this path alive until the report.
  return {ticket, [owner = owner_.Hold(), path = this](Ticket& t, Result<Outcome> outcome) {
            path->Report(t, outcome);
          }};
}

void RunPath::Report(Ticket& ticket, const Result<Outcome>& outcome) {
  if (!Advance(ticket, Step::kReported)) {
    owner_.Log("ERROR", fmt::format("job={}: a run reported twice (ignored)", job_name_));
    return;
  }
  const TriggerReport report = ReportOf(job_name_, ticket, outcome);
  if (!outcome.ok() && outcome.status().code() != StatusCode::kCancelled) {
    owner_.Log("WARN", fmt::format("job={} instance={} trigger failed: {}", job_name_, instance_id_,
                                   report.error));
  }
  // As ElasticJob ends every execution: claim what crashed instances left, if anything.
  if (outcome.ok() && *outcome == Outcome::kRan && ticket.source != Source::kFailover) {
    owner_.LookForFailover();
  }
  owner_.RunEnded(ticket.source, outcome);
  // Reported last: the trigger's work is done when it is reported.
  owner_.Reported(report);
  owner_.Released();
}

}  // namespace elasticjob::executor
