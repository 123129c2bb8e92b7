#include "cli/graceful_stop.h"

#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <iostream>
#include <thread>

namespace elasticjob::cli {

void StopGracefully(executor::ScriptProcesses& processes,
                    std::span<ScheduleJobBootstrap* const> boots, std::chrono::milliseconds grace,
                    const sigset_t& signals) {
  // No script starts from now on; those running get SIGTERM and the grace to end, while the
  // jobs stop triggering and wait for their runs; SIGKILL ends the scripts left.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  processes.StopStarting();
  if (int n = processes.Signal(SIGTERM); n > 0) {
    std::cout << fmt::format("elasticjob: SIGTERM sent to {} running script(s), grace {} ms\n", n,
                             grace.count())
              << std::flush;
  }
  std::thread stopping([boots] { ScheduleJobBootstrap::ShutdownAll(boots); });
  // A second SIGINT or SIGTERM cuts the grace short. The thread is woken by a signal of its
  // own when the shutdown is over.
  std::atomic<bool> over{false};
  std::thread impatient([&] {
    int again = 0;
    sigwait(&signals, &again);
    if (over.load()) return;
    std::cout << "elasticjob: second signal, killing the running scripts now (SIGKILL)\n"
              << std::flush;
    processes.Signal(SIGKILL);
  });
  if (!processes.WaitIdle(deadline)) {
    int n = processes.Signal(SIGKILL);
    std::cout
        << fmt::format(
               "elasticjob: grace of {} ms over, killing {} script(s) still running (SIGKILL)\n",
               grace.count(), n)
        << std::flush;
    if (!processes.WaitIdle(std::chrono::steady_clock::now() + std::chrono::minutes(1))) {
      std::cerr << "elasticjob: scripts still running a minute after SIGKILL\n";
    }
  }
  stopping.join();
  over.store(true);
  pthread_kill(impatient.native_handle(), SIGTERM);
  impatient.join();
}

}  // namespace elasticjob::cli
