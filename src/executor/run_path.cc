#include "executor/run_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace elasticjob::executor {

// Prepare: the run and its claim, worked out ahead; a prepared run let go at its fire time
// (not admissible) releases its count without a report.
std::shared_ptr<JobExecutor::Prepared> RunPath::Prepare(
    Clock::WallTime fire_time, const std::atomic<bool>* admissible,
    const std::atomic<uint64_t>* change_counter) {
  Ticket ticket{Source::kCron, fire_time, std::max(fire_time, clock_.WallNow()), Step::kPrepared};
  return executor_.PrepareTrigger(fire_time, DoneOf(ticket), admissible, change_counter,
                                  [owner = owner_.Hold()] { owner->Released(); });
}

// Launch: the prepared starts on the board, under the item limit. The wrapping is made now,
// ahead of the fire: a start allocates nothing.
void RunPath::Launch(const std::shared_ptr<JobExecutor::Prepared>& prepared,
                     Clock::WallTime fire_time, trigger::LaunchBoard& board) {
  std::vector<trigger::LaunchBoard::Unit> units = executor_.LaunchUnits(prepared);
  const std::array<const void*, 5> ours = owner_.StartTouches();
  for (auto& unit : units) {
    // A queued start outlives the board's hold on the prepared run: it holds it too.
    unit.run = owner_.LimitedStart(std::move(unit.run), unit.keep);
    size_t next = 0;  // into the slots LaunchUnits left empty
    for (const void*& slot : unit.touch) {
      if (slot == nullptr && next < ours.size()) slot = ours[next++];
    }
  }
  board.Add(fire_time, std::move(units));
}

// Fire: the owner's admission, then the executor's trigger (it reads, claims, launches and
// completes the run, then calls its done: Report).
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
  done = [done = std::move(done), report = std::move(report)](Result<Outcome> r) {
    const bool ran = r.ok() && (*r == Outcome::kRan || *r == Outcome::kNoItems);
    report(ran, !r.ok() ? r.status().ToString()
                : ran   ? std::string()
                        : "the run did not start here");
    done(std::move(r));
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
  return [owner = owner_.Hold(), path = this, ticket](Result<Outcome> outcome) mutable {
    path->Report(ticket, outcome);
  };
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
