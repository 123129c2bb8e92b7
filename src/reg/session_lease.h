// SessionLease: the client-side lease on a registry session (docs/runtime.md, "The session
// lease"), over the client seam (reg/client/registry_client.h). The server expires a session
// only after its timeout without a word from the client, so an answer to a request sent at T
// proves the session alive at T: the lease is held while the newest such T of the current
// session is within `bound` (a third of the granted timeout) of now. A check that finds it
// past half its bound asks the server ahead (one exists of `probe_path`, at most one on its
// way), so that a process whose items start now and then finds it held.
//
// The registry feeds it: Heard with every answer's send time and session epoch (an answer
// from a replaced session renews nothing), NewSession when a session replaces another,
// SetBound at each connection (the granted timeout), WakeWaiters when a connection returns
// or the registry closes.
//
// Thread safety: safe for concurrent use. Held and expiry read two atomics and the clock
// (every item start asks). One lock (`mu_`) for the waiters; never held while calling the
// client.
#ifndef ELASTICJOB_REG_SESSION_LEASE_H_
#define ELASTICJOB_REG_SESSION_LEASE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"

namespace elasticjob::reg {

class SessionLease {
 public:
  struct Options {
    std::string probe_path;              // what a probe asks about (the namespace root)
    std::chrono::nanoseconds bound{0};   // until the first SetBound
    std::function<bool()> closing;       // Await gives up once it is true; optional
    std::function<void()> before_probe;  // a test seam, run before a probe is sent
    std::function<int64_t()> now_ns;     // the steady clock in ns; a test's own clock
  };

  // `client` must outlive the lease and answer its probe before it goes (Close does).
  SessionLease(RegistryClient& client, Options options);

  // The server answered a request sent at `sent_ns` (steady ns) in session `epoch`.
  void Heard(int64_t sent_ns, uint64_t epoch);
  // A new session replaced the old one: nothing heard in it yet (waiters answer false).
  void NewSession();
  // A third of the session timeout the server granted.
  void SetBound(std::chrono::nanoseconds bound);
  std::chrono::nanoseconds bound() const {
    return std::chrono::nanoseconds(bound_ns_.load(std::memory_order_relaxed));
  }
  // Wakes Await's waiters to look again (a connection back: a probe lost with it goes again;
  // the registry closing).
  void WakeWaiters();

  // Whether the lease is held now; probes ahead when it is past half its bound.
  bool Held();
  // Until when a start decided now may still begin: two bounds after the newest answer's send
  // time (well inside the session timeout the server counts from the same answer);
  // time_point::min() before any.
  std::chrono::steady_clock::time_point expiry() const;
  // Waits until the lease is held (true), the session is replaced or the registry closes
  // (false), or `deadline` passes (false), probing meanwhile (again every 100 ms while no
  // answer comes: a probe lost with the connection).
  bool Await(std::chrono::steady_clock::time_point deadline);

  // Test seam: with `lapsed`, Held answers false and Await waits, as when the process has
  // not heard from the server lately, until the seam is lifted (then as usual), the session
  // is replaced (which lifts it: a new session is the server's word; the waiters answer
  // false), the registry closes or the deadline passes.
  void SetLapsedForTesting(bool lapsed);
  // Test seam: waits until at least `n` Await calls wait, or `timeout` passes; returns
  // whether they did.
  bool WaitWaitersForTesting(int n, std::chrono::milliseconds timeout);

 private:
  void Probe();
  int64_t Now() const;

  RegistryClient& client_;
  const Options options_;
  Mutex mu_;
  CondVar cv_{&mu_};
  // The send time (steady ns) of the newest request the server answered in the current
  // session; 0 before the first. Written under mu_, read anywhere.
  std::atomic<int64_t> heard_ns_{0};
  std::atomic<int64_t> bound_ns_;
  std::atomic<bool> probe_in_flight_{false};     // at most one probe on its way
  int waiters_ ELASTICJOB_GUARDED_BY(mu_) = 0;   // in Await (WaitWaitersForTesting)
  std::atomic<bool> lapsed_for_testing_{false};  // atomic: Held reads it without the lock
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_SESSION_LEASE_H_
