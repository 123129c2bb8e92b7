// How `elasticjob run` and `elasticjob agent` stop their jobs at SIGINT or SIGTERM: no script
// starts from then on, the running scripts get SIGTERM and `grace` to end while the jobs stop
// triggering and wait for their runs, then SIGKILL ends the scripts left (at once on a second
// signal). Progress lines go to stdout.
//
// Thread safety: call once, from the thread that took the first signal.
#ifndef ELASTICJOB_CLI_GRACEFUL_STOP_H_
#define ELASTICJOB_CLI_GRACEFUL_STOP_H_

#include <signal.h>

#include <chrono>
#include <span>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "executor/script/script_processes.h"

namespace elasticjob::cli {

// The jobs' shutdown_timeout under a grace: the grace, and a second for the scripts killed at
// its end to end and their runs to be reported. Leaving the registry waits no longer,
// whatever the registry does (docs/runtime.md, `elasticjob run`).
inline std::chrono::milliseconds JoinTimeoutFor(std::chrono::milliseconds grace) {
  return grace + std::chrono::seconds(1);
}

// REQUIRES: `signals` (SIGINT, SIGTERM) are blocked in every thread of the process, so a
// second one is taken by sigwait here.
void StopGracefully(executor::ScriptProcesses& processes,
                    std::span<ScheduleJobBootstrap* const> boots, std::chrono::milliseconds grace,
                    const sigset_t& signals);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_GRACEFUL_STOP_H_
