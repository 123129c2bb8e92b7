#include "elasticjob/clock.h"

#include <cassert>

#include "elasticjob/simulated_clock.h"

namespace elasticjob {
namespace {

class SystemClock final : public Clock {
 public:
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  MonotonicTime MonotonicNow() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

Clock& Clock::System() {
  static SystemClock* const kClock = new SystemClock();  // never destroyed: safe at exit
  return *kClock;
}

SimulatedClock::SimulatedClock(WallTime wall_start)
    : wall_(wall_start), monotonic_(MonotonicTime{} + std::chrono::hours(1)) {}

Clock::WallTime SimulatedClock::WallNow() const {
  MutexLock lock(&mu_);
  return wall_;
}

Clock::MonotonicTime SimulatedClock::MonotonicNow() const {
  MutexLock lock(&mu_);
  return monotonic_;
}

void SimulatedClock::Advance(std::chrono::nanoseconds d) {
  assert(d.count() >= 0);
  {
    MutexLock lock(&mu_);
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
    monotonic_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
  }
  Notify();
}

void SimulatedClock::SetWall(WallTime t) {
  {
    MutexLock lock(&mu_);
    wall_ = t;
  }
  Notify();
}

uint64_t SimulatedClock::OnAdvance(std::function<void()> fn) {
  MutexLock lock(&mu_);
  uint64_t id = next_listener_id_++;
  listeners_.emplace_back(id, std::move(fn));
  return id;
}

void SimulatedClock::RemoveListener(uint64_t id) {
  MutexLock lock(&mu_);
  std::erase_if(listeners_, [id](const auto& l) { return l.first == id; });
}

void SimulatedClock::Notify() {
  std::vector<std::function<void()>> copy;
  {
    MutexLock lock(&mu_);
    for (const auto& l : listeners_) copy.push_back(l.second);
  }
  for (const auto& fn : copy) fn();
}

}  // namespace elasticjob
