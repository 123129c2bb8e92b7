// SimulatedClock: a Clock that moves only when a test tells it to.
//
// Unit tests of anything time-based (cron triggers, timeouts, misfire, time-skew checks)
// inject one and advance it explicitly instead of sleeping. Advance() moves wall and
// monotonic time together; SetWall() jumps only the wall clock, as an NTP step would.
//
// Listeners registered with OnAdvance() run after every change, on the thread that made it,
// without the clock's lock held, so a simulated timer can wake its waiters.
//
// Thread safety: all methods may be called from any thread.
//
// clang-format off
//   elasticjob::SimulatedClock clock(std::chrono::sys_days{2026y / 11 / 22});
//   clock.Advance(std::chrono::seconds(5));
// clang-format on
#ifndef ELASTICJOB_SIMULATED_CLOCK_H_
#define ELASTICJOB_SIMULATED_CLOCK_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob {

class SimulatedClock final : public Clock {
 public:
  // Starts at `wall_start`; monotonic time starts at an arbitrary fixed epoch.
  explicit SimulatedClock(WallTime wall_start = WallTime{});

  WallTime WallNow() const override;
  MonotonicTime MonotonicNow() const override;

  // Moves both clocks forward by `d`. REQUIRES: d >= 0.
  void Advance(std::chrono::nanoseconds d);

  // Sets the wall clock to `t` (forward or back); monotonic time is unchanged.
  void SetWall(WallTime t);

  // Registers `fn` to run after every Advance()/SetWall(). Returns an id for RemoveListener.
  uint64_t OnAdvance(std::function<void()> fn);
  void RemoveListener(uint64_t id);

 private:
  void Notify();

  mutable Mutex mu_;
  WallTime wall_ ELASTICJOB_GUARDED_BY(mu_);
  MonotonicTime monotonic_ ELASTICJOB_GUARDED_BY(mu_);
  uint64_t next_listener_id_ ELASTICJOB_GUARDED_BY(mu_) = 1;
  std::vector<std::pair<uint64_t, std::function<void()>>> listeners_ ELASTICJOB_GUARDED_BY(mu_);
};

}  // namespace elasticjob

#endif  // ELASTICJOB_SIMULATED_CLOCK_H_
