// RunPath: a run's way here from its start (a fire, an operator's trigger, a failover claim, a
// workflow node's run request) to its report, as one sequence of named steps owned by one
// object (docs/runtime.md "A trigger"):
//   Prepare   the lead before a cron fire (trigger/prepare_lead.h): the run worked out
//             ahead (the run plan, this instance's items, their contexts and reports;
//             JobExecutor::PrepareTrigger), which takes the job's normal lane, then its
//             Claim sent. Null when it cannot be (Fire at the fire time instead).
//   Fire      a fire time nothing was prepared for, or another start (Operator, Failover,
//             WorkflowNode): the owner's admission (AdmitFire: stopped, paused), then the
//             executor's trigger, which reads the run's items (the plan, or the registry)
//             and hands them to Claim.
//   Claim     the run's items claimed: their running marks, one multi-op, fenced by the
//             instance's session (a claim answered in a later session than it was sent in
//             is void: what it wrote is removed, nothing of it runs). Only the items
//             claimed run (a mark of a live instance leaves that item to it); a claim that
//             failed or claimed nothing starts nothing and ends the run (after its
//             listeners). A prepared run's claim is sent in the lead time and its
//             admission requires it confirmed (Launch); any other run's items start on
//             the item pool once it is answered (Claimed). No item starts before its
//             claim is confirmed.
//   Launch    the prepared run's item starts put on the launch board for the fire time,
//             each under the job's item limit (Owner::LimitedStart). At the fire time the
//             first start admits the run (paused? stopped? a registry change? the claim
//             confirmed? the fire overdue?): one not admitted starts nothing and is skipped
//             (Owner::Released) once its marks are removed, or read again from the
//             registry (JobExecutor::LetGo); one whose claim came late starts what it
//             claimed then (Claimed). A skipped run that a trigger found holding the lane
//             re-runs for it, as a completed run does (LetGoEnded).
//   Complete  after the pass's last item: its marks cleared (one multi-op; only those still
//             ours when the session ended meanwhile), failover items' nodes, then the run's
//             completion: a misfire re-run (a trigger found it going, or marks someone else
//             left), which claims again, or the after-listeners and the run's done.
//   Report    the run's done: the TriggerReport worked out from the outcome (ReportOf), a
//             failed run logged, a run that ran looks for failover items, the owner's
//             bookkeeping of the run's end (RunEnded), the report (Reported) and the
//             release of the run's count (Released), in that order.
// The owner (the job's runtime) is given at construction and is called only through the
// Owner interface; the executor (JobExecutor) reads what a run is, keeps the job's lane and
// runs the items on the pool, and hands each run to Claim and Complete here at their turn.
//
// What the path carries per run is explicit: a Ticket (the run's source, its fire time, when
// it began, and the step it has reached: run_ticket.h); the steps advance it through
// Advance, which checks the transition (kPrepared or kStarted, then kClaimed, kCompleted,
// kReported; an illegal one is logged as an ERROR and ignored). The ticket lives in the
// run's done (one allocation per run, made when the run is prepared or started: the fire
// allocates nothing).
//
// Thread safety: safe for concurrent use; the owner and the executor must outlive this
// object, and the owner's Hold keeps both alive until each run's report. One RunPath per
// executor: every run of the executor goes through it.
#ifndef ELASTICJOB_EXECUTOR_RUN_PATH_H_
#define ELASTICJOB_EXECUTOR_RUN_PATH_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/run_reports.h"
#include "executor/job_executor.h"
#include "executor/run_ticket.h"
#include "trigger/launch_board.h"

namespace elasticjob::executor {

class RunPath {
 public:
  using Source = TriggerReport::Source;
  using Outcome = JobExecutor::Outcome;

  using Step = RunStep;
  using Ticket = RunTicket;
  // Whether a run at `from` may go on to `to` (run_ticket.h).
  static constexpr bool CanAdvance(Step from, Step to) { return executor::CanAdvance(from, to); }
  // Moves `ticket` to `to`; false (the ticket unchanged) when that transition is not allowed.
  static bool Advance(Ticket& ticket, Step to) { return executor::Advance(ticket, to); }

  // What the path asks of its owner, at the step named.
  class Owner {
   public:
    // Fire: whether a fire may start now.
    enum class Admission { kRun, kPaused, kStopped };

    virtual ~Owner() = default;
    // Every step: keeps the owner (and so this path and its executor) alive until a run's
    // report; held by the run's done.
    virtual std::shared_ptr<Owner> Hold() = 0;
    // Launch: `run` started under the job's item limit (run here, or queued while the limit
    // is reached; `keep` held for the queued start). Called when the run is launched, not at
    // its fire time. Sets `*touch` to what the returned function reads when called besides
    // `run` (its own state, for the board's prefetch; null: nothing).
    virtual std::function<void()> LimitedStart(std::function<void()> run,
                                               std::shared_ptr<const void> keep,
                                               const void** touch) = 0;
    // Launch: memory an item start reads besides the executor's (for the board's prefetch).
    static constexpr size_t kStartTouches = 6;
    virtual std::array<const void*, kStartTouches> StartTouches() = 0;
    // Fire: stopped (the fire's count released: Released), paused (FireSkipped, then
    // Released), else run.
    virtual Admission AdmitFire() = 0;
    // Fire: a cron fire time passed while paused, not run.
    virtual void FireSkipped() = 0;
    // Claim, for a prepared run: its claim was answered at `answered`, `took` after its
    // preparation was due (the lead the owner gives preparations follows it: PrepareLead).
    virtual void ClaimedAhead(Clock::WallTime answered, std::chrono::nanoseconds took) = 0;
    // Report: a run that ran (not a failover run) ended: claim what crashed instances left.
    virtual void LookForFailover() = 0;
    // Report: the owner's bookkeeping of a run's end (fixed-delay parts, a caller waiting
    // for an operator's trigger).
    virtual void RunEnded(Source source, const Result<Outcome>& outcome) = 0;
    // Report: the trigger's report (BootstrapOptions::on_trigger).
    virtual void Reported(const TriggerReport& report) = 0;
    // Report (and a skipped or stopped run): the run's count is released.
    virtual void Released() = 0;
    // A line about the job to its logger.
    virtual void Log(std::string_view level, std::string_view message) const = 0;
  };

  // REQUIRES: `executor` and `owner` outlive this object (the owner's Hold keeps them);
  // before the executor's first run, and the only RunPath over it (its runs' Claim and
  // Complete are this one's).
  RunPath(JobExecutor& executor, Owner& owner, Clock& clock, std::string job_name,
          std::string instance_id)
      : executor_(executor),
        owner_(owner),
        clock_(clock),
        job_name_(std::move(job_name)),
        instance_id_(std::move(instance_id)) {
    executor_.path_ = this;
  }
  RunPath(const RunPath&) = delete;
  RunPath& operator=(const RunPath&) = delete;

  // Prepare, then its Claim: the cron fire at `fire_time` worked out ahead; null when it
  // cannot be (Fire then, at the fire time). See JobExecutor::PrepareTrigger for
  // `admissible` and `change_counter`. `due`: when the preparation was due (the claim's
  // answer is timed from it for Owner::ClaimedAhead); nullopt: now.
  std::shared_ptr<JobExecutor::Prepared> Prepare(Clock::WallTime fire_time,
                                                 const std::atomic<bool>* admissible,
                                                 const std::atomic<uint64_t>* change_counter,
                                                 std::optional<Clock::WallTime> due = std::nullopt);
  // Launch: the item starts of `prepared` on `board` for `fire_time`, each under the item
  // limit. REQUIRES: `board` alive through the call.
  void Launch(const std::shared_ptr<JobExecutor::Prepared>& prepared, Clock::WallTime fire_time,
              trigger::LaunchBoard& board);
  // Fire: a cron fire time nothing was prepared for.
  void Fire(Clock::WallTime fire_time);
  // Fire, for the other starts: an operator's trigger asked for at `asked` (with its
  // one-time parameter, if any), the failover items claimed here, a workflow node's run request
  // (`report` told whether it ran, before the run's own report).
  void Operator(Clock::WallTime asked, std::optional<std::string> parameter);
  void Failover();
  void WorkflowNode(std::string parameter, std::function<void(bool, std::string)> report);

  // Report: what a run's outcome reports.
  static TriggerReport ReportOf(const std::string& job_name, const Ticket& ticket,
                                const Result<Outcome>& outcome);

 private:
  // The executor hands its runs to Claim and Complete.
  friend class JobExecutor;
  using Run = JobExecutor::Run;
  using Prepared = JobExecutor::Prepared;

  // Claim: the run's items (known, held in the lane) claimed; once answered, Claimed.
  void Claim(const std::shared_ptr<Run>& run);
  // Claim, for a prepared run: sent in the lead time; its answer is published to the
  // prepared run's admission (and to JobExecutor::LetGo, if it was let go meanwhile).
  void Claim(const std::shared_ptr<Prepared>& prepared, Clock::WallTime due);
  // Claim's answer: the run goes on with the items `claimed` holds (the rest run elsewhere)
  // and starts them; an error or nothing claimed ends the run after its listeners.
  void Claimed(const std::shared_ptr<Run>& run, Result<std::vector<int>> claimed);
  // Complete: after the pass's last item, its marks cleared, then Completed.
  void Complete(const std::shared_ptr<Run>& run);
  // Complete: the run's failover nodes, then a misfire re-run (Claim again) or the end.
  void Completed(const std::shared_ptr<Run>& run);
  // Launch, for a prepared run let go at its fire time once its marks are removed
  // (JobExecutor::LetGo): a misfire re-run when a trigger found it holding the lane (as
  // Completed decides), else the lane released and the run skipped (`skipped`, no report).
  void LetGoEnded(const std::shared_ptr<Prepared>& prepared);
  // Completed's and LetGoEnded's re-run, decided (`rerun.again`): the run claims again,
  // this instance's items now (read again when they changed). `marked`: the misfire marks
  // found, cleared first when someone else's.
  void RunAgain(const std::shared_ptr<Run>& run, JobExecutor::Rerun rerun,
                const std::vector<int>& marked);
  // Moves `ticket` to `to`, or logs the illegal transition (the run goes on as it would).
  void Reach(Ticket& ticket, Step to);

  // The run's done: Report, once its executor is through with it.
  JobExecutor::Done DoneOf(Ticket ticket);
  void Report(Ticket& ticket, const Result<Outcome>& outcome);

  JobExecutor& executor_;
  Owner& owner_;
  Clock& clock_;
  const std::string job_name_;
  const std::string instance_id_;
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_RUN_PATH_H_
