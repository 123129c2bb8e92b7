#include "trigger/prepare_lead.h"

#include <algorithm>

namespace elasticjob::trigger {

void PrepareLead::Observe(Clock::WallTime answered, Duration took) {
  took = std::max(took, Duration(0));
  const Duration ask = std::min(max_, took + took / 2 + kMargin);
  MutexLock lock(&mu_);
  // A window's end, or a wall clock set back by more than a window: a new window.
  if (!window_end_.has_value() || answered >= *window_end_ ||
      answered + 2 * kWindow < *window_end_) {
    if (window_end_.has_value()) {
      const Duration now = lead();
      const Duration target = std::max(base_, window_ask_);
      if (target < now) lead_.store((now - (now - target) / 2).count(), std::memory_order_relaxed);
    }
    window_end_ = answered + kWindow;
    window_ask_ = Duration(0);
  }
  window_ask_ = std::max(window_ask_, ask);
  if (ask > lead()) lead_.store(ask.count(), std::memory_order_relaxed);
}

}  // namespace elasticjob::trigger
