// RunTicket: what the run path (run_path.h) carries for one run, and the steps it may take.
// A run begins at kPrepared (a cron run worked out ahead) or kStarted (any other start),
// reaches kClaimed once its claim is answered with the items it may run (again for a
// misfire re-run, or for a prepared run read again after a change), kCompleted once its
// items' end is written and no re-run follows, and kReported last. A run may be reported
// from any step before kReported (a skip, an error, nothing claimed), exactly once.
//
// Thread safety: a value type; a run's ticket is advanced by one step at a time, each step
// after the one before it (the steps hand the run on, they do not share it).
#ifndef ELASTICJOB_EXECUTOR_RUN_TICKET_H_
#define ELASTICJOB_EXECUTOR_RUN_TICKET_H_

#include <cstdint>

#include "elasticjob/clock.h"
#include "elasticjob/run_reports.h"

namespace elasticjob::executor {

// The step a run has reached, in order.
enum class RunStep : uint8_t { kPrepared, kStarted, kClaimed, kCompleted, kReported };

// Whether a run at `from` may go on to `to`.
constexpr bool CanAdvance(RunStep from, RunStep to) {
  switch (to) {
    case RunStep::kClaimed:
      return from == RunStep::kPrepared || from == RunStep::kStarted || from == RunStep::kClaimed;
    case RunStep::kCompleted:
      return from == RunStep::kClaimed;
    case RunStep::kReported:
      return from != RunStep::kReported;
    case RunStep::kPrepared:
    case RunStep::kStarted:
      return false;  // where a run begins, never a step it goes on to
  }
  return false;
}

struct RunTicket {
  TriggerReport::Source source = TriggerReport::Source::kCron;
  Clock::WallTime scheduled{};  // the fire time (or when an operator asked)
  Clock::WallTime started{};    // when its handling began
  RunStep step = RunStep::kStarted;
};

// Moves `ticket` to `to`; false (the ticket unchanged) when that transition is not allowed.
constexpr bool Advance(RunTicket& ticket, RunStep to) {
  if (!CanAdvance(ticket.step, to)) return false;
  ticket.step = to;
  return true;
}

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_RUN_TICKET_H_
