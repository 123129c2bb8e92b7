// PrepareLead: how long before its fire time a cron trigger is worked out (its run prepared
// and its items claimed: docs/runtime.md, "Prepared triggers"), shared by the jobs of a
// process. The lead is `base` while every claim is answered well ahead of its fire time, and
// grows when one is not: ten thousand jobs firing in the same second send ten thousand claims
// in the lead, and when the process and the registry server share two cores the last of them
// is answered 250-300 ms after its preparation was due, after a 200 ms lead (its items then
// start that much late: the p99 of 10,000 every-second jobs was 80-130 ms).
//
// Each prepared claim's answer is observed as the time from when its preparation was due
// (fire time - lead) to the answer. A claim that took `t` asks for a lead of
// t + t / 2 + kMargin; the lead rises to the largest such ask at once (at most `max`). Once a
// window of kWindow has passed, the lead falls halfway to the largest ask of that window
// (never below `base`), so a burst's lead lasts a few windows and a lead no claim needs
// any more is let go within a minute.
//
// Thread safety: safe for concurrent use; lead() is one atomic load.
#ifndef ELASTICJOB_TRIGGER_PREPARE_LEAD_H_
#define ELASTICJOB_TRIGGER_PREPARE_LEAD_H_

#include <atomic>
#include <chrono>
#include <optional>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"

namespace elasticjob::trigger {

class PrepareLead {
 public:
  using Duration = std::chrono::nanoseconds;
  static constexpr Duration kMargin = std::chrono::milliseconds(50);
  static constexpr Duration kWindow = std::chrono::seconds(10);

  // REQUIRES: 0 < base <= max.
  explicit PrepareLead(Duration base = std::chrono::milliseconds(200),
                       Duration max = std::chrono::seconds(1))
      : base_(base), max_(max), lead_(base.count()) {}
  PrepareLead(const PrepareLead&) = delete;
  PrepareLead& operator=(const PrepareLead&) = delete;

  // The lead now: at least base, at most max.
  Duration lead() const { return Duration(lead_.load(std::memory_order_relaxed)); }
  Duration base() const { return base_; }

  // A prepared run's claim was answered at `answered`, `took` after its preparation was due.
  void Observe(Clock::WallTime answered, Duration took);

 private:
  const Duration base_;
  const Duration max_;
  std::atomic<Duration::rep> lead_;
  Mutex mu_;
  std::optional<Clock::WallTime> window_end_ ELASTICJOB_GUARDED_BY(mu_);  // none before the first
  Duration window_ask_ ELASTICJOB_GUARDED_BY(mu_){0};  // the window's largest ask
};

}  // namespace elasticjob::trigger

#endif  // ELASTICJOB_TRIGGER_PREPARE_LEAD_H_
