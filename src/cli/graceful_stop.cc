#include "cli/graceful_stop.h"

#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <thread>

#include "cli/observability.h"

namespace elasticjob::cli {

void StopGracefully(executor::ScriptProcesses& processes,
                    std::span<ScheduleJobBootstrap* const> boots, std::chrono::milliseconds grace,
                    const sigset_t& signals) {
  // No script starts from now on; those running get SIGTERM and the grace to end, while the
  // jobs stop triggering and wait for their runs; SIGKILL ends the scripts left.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  processes.StopStarting();
  if (int n = processes.Signal(SIGTERM); n > 0) {
    Say(fmt::format("SIGTERM sent to {} running script(s), grace {} ms", n, grace.count()));
  }
  std::thread stopping([boots] { ScheduleJobBootstrap::ShutdownAll(boots); });
  // A second SIGINT or SIGTERM cuts the grace short. The thread is woken by a signal of its
  // own when the shutdown is over.
  std::atomic<bool> over{false};
  std::thread impatient([&] {
    int again = 0;
    sigwait(&signals, &again);
    if (over.load()) return;
    Say("second signal, killing the running scripts now (SIGKILL)");
    processes.Signal(SIGKILL);
  });
  if (!processes.WaitIdle(deadline)) {
    int n = processes.Signal(SIGKILL);
    Say(fmt::format("grace of {} ms over, killing {} script(s) still running (SIGKILL)",
                    grace.count(), n));
    if (!processes.WaitIdle(std::chrono::steady_clock::now() + std::chrono::minutes(1))) {
      SayError("scripts still running a minute after SIGKILL");
    }
  }
  stopping.join();
  over.store(true);
  pthread_kill(impatient.native_handle(), SIGTERM);
  impatient.join();
}

}  // namespace elasticjob::cli
