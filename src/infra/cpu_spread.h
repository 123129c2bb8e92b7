// CpuSpread: keeps the threads that share one burst of work on different CPUs.
//
// A pool worker woken by another is often placed by the kernel on its waker's CPU, even with
// another CPU idle, and may preempt the waker there: on two cores, the two workers meant to
// start a thousand items together then take turns on one CPU while the other idles until
// the load balancer moves one (1-3 ms later; measured on this project's 2-vCPU machines:
// a launch board's second drainer joined after the first had started every unit in about
// 4 fires in 10). A thread that joins a burst and finds its CPU taken by an earlier thread
// of the same burst moves itself, for the burst, to an allowed CPU that has none
// (sched_setaffinity), and moves back when the burst is over.
//
// Only CPUs 0-63 are tracked; elsewhere (or off Linux) nothing moves.
//
// Thread safety: Take and Join may be called concurrently from the burst's threads.
#ifndef ELASTICJOB_INFRA_CPU_SPREAD_H_
#define ELASTICJOB_INFRA_CPU_SPREAD_H_

#include <atomic>
#include <cstdint>
#include <memory>

namespace elasticjob::infra {

class CpuSpread {
 public:
  // While it lives, its thread runs on the CPUs it moved to; its end restores the CPUs the
  // thread was allowed before (a thread that did not move: nothing).
  class Stay {
   public:
    Stay();
    Stay(Stay&& other) noexcept;
    Stay& operator=(Stay&&) = delete;
    ~Stay();
    bool moved() const { return saved_ != nullptr; }

   private:
    friend class CpuSpread;
    struct Saved;
    std::unique_ptr<Saved> saved_;
  };

  // Notes the calling thread's CPU as taken by the burst (the thread that starts it, before
  // it wakes the others).
  void Take();
  // Notes the calling thread's CPU; if an earlier thread of the burst took it and the thread
  // may run on a CPU the burst has not taken, moves there (for the Stay's life).
  Stay Join();
  // The CPUs taken so far (bit i: CPU i).
  uint64_t taken() const { return taken_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> taken_{0};
};

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_CPU_SPREAD_H_
