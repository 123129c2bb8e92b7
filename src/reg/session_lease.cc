#include "reg/session_lease.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace elasticjob::reg {

SessionLease::SessionLease(RegistryClient& client, Options options)
    : client_(client), options_(std::move(options)), bound_ns_(options_.bound.count()) {}

int64_t SessionLease::Now() const {
  if (options_.now_ns) return options_.now_ns();
  return SteadyNs();
}

void SessionLease::Heard(int64_t sent_ns, uint64_t epoch) {
  {
    MutexLock lock(&mu_);
    // An answer in a session replaced since proves nothing of the current one.
    if (epoch != client_.session_epoch()) return;
    if (sent_ns <= heard_ns_.load(std::memory_order_relaxed)) return;
    heard_ns_.store(sent_ns, std::memory_order_release);
  }
  cv_.SignalAll();
}

void SessionLease::NewSession() {
  {
    MutexLock lock(&mu_);
    heard_ns_.store(0, std::memory_order_release);
    // A new session is the server's word: a lapse held by hand ends with the old one.
    lapsed_for_testing_.store(false, std::memory_order_release);
  }
  cv_.SignalAll();  // their session is over: Await answers false
}

void SessionLease::SetBound(std::chrono::nanoseconds bound) {
  bound_ns_.store(bound.count(), std::memory_order_relaxed);
}

void SessionLease::WakeWaiters() {
  { MutexLock lock(&mu_); }  // a waiter between its check and its wait
  cv_.SignalAll();
}

void SessionLease::Probe() {
  if (probe_in_flight_.exchange(true, std::memory_order_acq_rel)) return;
  if (options_.before_probe) options_.before_probe();
  const int64_t sent = Now();
  const uint64_t epoch = client_.session_epoch();
  // Answered exactly once: by the server, or by the client's word that no answer will come.
  // The next probe may go from here on: cleared before the answer wakes the waiters, so
  // that a check made after one has seen the lease renewed may probe again.
  client_.Exists(options_.probe_path, nullptr, [this, sent, epoch](ClientCode rc, const NodeStat&) {
    probe_in_flight_.store(false, std::memory_order_release);
    if (ServerAnswered(rc)) Heard(sent, epoch);
  });
}

bool SessionLease::Held() {
  if (lapsed_for_testing_.load(std::memory_order_acquire)) return false;
  const int64_t heard = heard_ns_.load(std::memory_order_acquire);
  const int64_t bound = bound_ns_.load(std::memory_order_relaxed);
  const int64_t age = heard == 0 ? std::numeric_limits<int64_t>::max() : Now() - heard;
  // Renewed ahead, so that a process whose items start now and then finds it held.
  if (age > bound / 2) Probe();
  return age < bound;
}

std::chrono::steady_clock::time_point SessionLease::expiry() const {
  const int64_t heard = heard_ns_.load(std::memory_order_acquire);
  if (heard == 0) return std::chrono::steady_clock::time_point::min();
  return std::chrono::steady_clock::time_point(
      std::chrono::nanoseconds(heard + 2 * bound_ns_.load(std::memory_order_relaxed)));
}

bool SessionLease::Await(std::chrono::steady_clock::time_point deadline) {
  const uint64_t epoch = client_.session_epoch();
  // A probe lost with the connection (or refused while there was no handle) goes again this
  // often until the deadline: the connection's return wakes the waiters too.
  constexpr auto kProbeAgain = std::chrono::milliseconds(100);
  MutexLock lock(&mu_);
  ++waiters_;
  cv_.SignalAll();  // WaitWaitersForTesting
  // Counted out on every return, with mu_ held: the guard is declared after `lock`, so it
  // goes first. Not analysed: the analysis cannot see which lock a destructor runs under.
  struct Leave {
    SessionLease* self;
    ~Leave() ELASTICJOB_NO_THREAD_SAFETY_ANALYSIS { --self->waiters_; }
  } leave{this};
  while (true) {
    if (client_.session_epoch() != epoch || (options_.closing && options_.closing())) {
      return false;
    }
    const int64_t heard = heard_ns_.load(std::memory_order_acquire);
    if (heard != 0 && Now() - heard < bound_ns_.load(std::memory_order_relaxed) &&
        !lapsed_for_testing_.load(std::memory_order_acquire)) {
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    lock.Unlock();
    Probe();
    lock.Lock();
    const auto wake = std::min(deadline, now + kProbeAgain);
    const bool lapsed = lapsed_for_testing_.load(std::memory_order_acquire);
    while (heard_ns_.load(std::memory_order_acquire) == heard && client_.session_epoch() == epoch &&
           lapsed_for_testing_.load(std::memory_order_acquire) == lapsed && cv_.WaitUntil(wake)) {
    }
  }
}

void SessionLease::SetLapsedForTesting(bool lapsed) {
  {
    MutexLock lock(&mu_);
    lapsed_for_testing_.store(lapsed, std::memory_order_release);
  }
  cv_.SignalAll();
}

bool SessionLease::WaitWaitersForTesting(int n, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (waiters_ < n && cv_.WaitUntil(deadline)) {
  }
  return waiters_ >= n;
}

}  // namespace elasticjob::reg
