// Clock: the one source of time for everything elasticjob schedules.
//
// Wall time (system_clock) answers "what time is it": cron fire times, time zones, the
// registry's time-skew check. It can jump when an operator or NTP sets the clock.
// Monotonic time (steady_clock) answers "how long has it been": timeouts, intervals, backoff.
// The two are kept apart so a wall-clock jump never stretches a timeout.
//
// Production code takes a `Clock&` by constructor injection; `Clock::System()` is the real
// clock; tests inject a SimulatedClock (elasticjob/simulated_clock.h).
//
// Thread safety: implementations are safe to call from any thread.
#ifndef ELASTICJOB_CLOCK_H_
#define ELASTICJOB_CLOCK_H_

#include <chrono>

namespace elasticjob {

class Clock {
 public:
  using WallTime = std::chrono::system_clock::time_point;
  using MonotonicTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;

  // The current wall-clock time (UTC instant).
  virtual WallTime WallNow() const = 0;

  // The current monotonic time; never decreases.
  virtual MonotonicTime MonotonicNow() const = 0;

  // The process-wide real clock. Stateless, so sharing it holds no per-job state.
  static Clock& System();
};

}  // namespace elasticjob

#endif  // ELASTICJOB_CLOCK_H_
