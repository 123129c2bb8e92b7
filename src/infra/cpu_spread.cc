#include "infra/cpu_spread.h"

#ifdef __linux__
#include <sched.h>
#endif

namespace elasticjob::infra {

#ifdef __linux__
struct CpuSpread::Stay::Saved {
  cpu_set_t allowed;  // the thread's CPUs before it moved
};

namespace {
// The calling thread's CPU as a bit, or 0 when it is not one CpuSpread tracks.
uint64_t CpuBit() {
  const int cpu = sched_getcpu();
  return cpu >= 0 && cpu < 64 ? uint64_t{1} << cpu : 0;
}
}  // namespace

CpuSpread::Stay::~Stay() {
  // What the thread was allowed before; may fail only if its cpuset shrank meanwhile, and
  // then the kernel keeps it on what it allows.
  if (saved_ != nullptr) sched_setaffinity(0, sizeof(saved_->allowed), &saved_->allowed);
}

void CpuSpread::Take() { taken_.fetch_or(CpuBit(), std::memory_order_relaxed); }

CpuSpread::Stay CpuSpread::Join() {
  Stay stay;
  const uint64_t mine = CpuBit();
  const uint64_t before = taken_.fetch_or(mine, std::memory_order_relaxed);
  if (mine == 0 || (before & mine) == 0) return stay;  // a CPU of its own
  auto saved = std::make_unique<Stay::Saved>();
  if (sched_getaffinity(0, sizeof(saved->allowed), &saved->allowed) != 0) return stay;
  cpu_set_t free;
  CPU_ZERO(&free);
  const uint64_t taken = before | mine;
  bool any = false;
  for (int cpu = 0; cpu < 64; ++cpu) {
    if (CPU_ISSET(cpu, &saved->allowed) && (taken & (uint64_t{1} << cpu)) == 0) {
      CPU_SET(cpu, &free);
      any = true;
    }
  }
  if (!any || sched_setaffinity(0, sizeof(free), &free) != 0) return stay;  // nowhere to go
  Take();  // the CPU it runs on now (the kernel moved it before returning)
  stay.saved_ = std::move(saved);
  return stay;
}
#else
struct CpuSpread::Stay::Saved {};
CpuSpread::Stay::~Stay() = default;
void CpuSpread::Take() {}
CpuSpread::Stay CpuSpread::Join() { return Stay(); }
#endif

CpuSpread::Stay::Stay() = default;
CpuSpread::Stay::Stay(Stay&& other) noexcept : saved_(std::move(other.saved_)) {}

}  // namespace elasticjob::infra
