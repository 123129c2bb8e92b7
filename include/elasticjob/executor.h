// Executors: where callbacks run. Registry watch events and connection-state changes are
// posted to an Executor the caller chooses, never run on the registry client's own thread.
//
//   ThreadPool    up to N worker threads, started as work needs them (a task posted
//                 while every worker is busy gets a new one, up to N); tasks run
//                 concurrently, urgent ones (PostUrgent) before the others. An idle
//                 worker yields for 20 µs before it sleeps (bursts of short tasks), or
//                 until a time KeepAwake names (tasks known to come then). The worker
//                 that went idle last is woken first, and one idle for 5 s (keep_alive)
//                 leaves the pool (all but one): a burst's extra threads do not stay.
//                 The keep-alive is measured on an injectable Clock: with a
//                 SimulatedClock, idle workers leave when a test advances it.
//   SerialExecutor  runs tasks one at a time, in post order, on a borrowed executor (a
//                   "strand"): many serial executors can share one small pool, so a
//                   thousand jobs need no thousand threads.
//
// Thread safety: Post() may be called from any thread, including from a running task.
// Shutdown is Stop() then Join() (pending tasks still run; Post() after Stop() is dropped).
#ifndef ELASTICJOB_EXECUTOR_H_
#define ELASTICJOB_EXECUTOR_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob {

class Executor {
 public:
  virtual ~Executor() = default;
  // Queues `task`. Tasks must not throw.
  virtual void Post(std::function<void()> task) = 0;
  // Queues `task` ahead of every task queued with Post that has not started yet (urgent
  // tasks keep their own order). An executor without priorities queues it as Post does.
  virtual void PostUrgent(std::function<void()> task) { Post(std::move(task)); }
  // PostUrgent of each of `tasks`, in order, as one hand-off (a pool takes its lock once).
  virtual void PostUrgentAll(std::vector<std::function<void()>> tasks) {
    for (auto& t : tasks) PostUrgent(std::move(t));
  }
  // A hint that tasks will be posted at `until`: up to `threads` threads are kept (or
  // woken) awake, waiting on the CPU, until shortly after it, so that those tasks start at
  // once rather than after a thread wakes up (tens of microseconds). Default: nothing.
  virtual void KeepAwake(int threads, std::chrono::steady_clock::time_point until) {
    (void)threads;
    (void)until;
  }
};

class ThreadPool final : public Executor {
 public:
  static constexpr std::chrono::milliseconds kDefaultKeepAlive{5000};
  // REQUIRES: threads >= 1 (the bound; none is started before the first task). A worker
  // idle for `keep_alive` leaves the pool, unless it is the last one.
  explicit ThreadPool(int threads, std::chrono::milliseconds keep_alive = kDefaultKeepAlive);
  // As above, the keep-alive measured on `clock`'s monotonic time. With a SimulatedClock, the
  // workers idle for `keep_alive` leave during the Advance() that reaches it (all but one),
  // before it returns. REQUIRES: `clock` outlives the pool.
  ThreadPool(int threads, std::chrono::milliseconds keep_alive, Clock& clock);
  ~ThreadPool() override;  // Stop() and Join()
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Post(std::function<void()> task) override;
  void PostUrgent(std::function<void()> task) override;
  void PostUrgentAll(std::vector<std::function<void()>> tasks) override;
  void KeepAwake(int threads, std::chrono::steady_clock::time_point until) override;
  // Names the workers started after it (`name`, as /proc/PID/task/*/comm shows it: Linux
  // keeps 15 characters). REQUIRES: called before the first task is posted.
  void set_thread_name(std::string name) { thread_name_ = std::move(name); }
  void Stop();            // no new tasks; queued tasks still run
  void Join();            // waits for the workers to finish
  size_t threads();       // workers now (started and not retired)
  size_t idle_threads();  // workers waiting for a task (neither running one nor about to)

 private:
  void Run();

  // An idle worker, waiting on its own condition variable (Run).
  struct Idle {
    Idle(Mutex* mu, Clock::MonotonicTime leave)
        : cv(mu), thread(std::this_thread::get_id()), leave_at(leave) {}
    CondVar cv;
    const std::thread::id thread;
    const Clock::MonotonicTime leave_at;  // idle since keep_alive_ before this: it leaves
    bool woken = false;                   // taken off idle_ by a post (WakeLocked) or KeepAwake
    bool roused = false;                  // ... by KeepAwake: to stand by
    bool retired = false;                 // ... by RetireIfExpiredLocked: its thread is in retired_
  };

  Mutex mu_;
  void Queue(std::function<void()> task, bool urgent);
  // Wakes the idle worker that went idle last for a task just queued, or starts one.
  void WakeLocked() ELASTICJOB_REQUIRES(mu_);
  // Joins the workers that retired (idle for keep_alive_); called without mu_.
  void ReapRetired() ELASTICJOB_EXCLUDES(mu_);
  // Takes `worker` out of the pool (its thread to retired_) when it has been idle for
  // keep_alive_ at `now` and is not the last worker; true if it did.
  bool RetireIfExpiredLocked(Idle& worker, Clock::MonotonicTime now) ELASTICJOB_REQUIRES(mu_);

  std::deque<std::function<void()>> tasks_ ELASTICJOB_GUARDED_BY(mu_);
  std::deque<std::function<void()>> urgent_ ELASTICJOB_GUARDED_BY(mu_);
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  static constexpr std::chrono::microseconds kLinger{20};  // see Run
  std::atomic<size_t> queued_{0};  // tasks in both queues (read without mu_ while lingering)
  const size_t max_threads_;
  const std::chrono::milliseconds keep_alive_;
  std::string thread_name_;  // set before any worker starts (set_thread_name), then read only
  Clock& clock_;             // the keep-alive's time
  // A SimulatedClock's listener (it retires idle workers), else 0; set before any worker starts.
  uint64_t clock_listener_ = 0;
  std::vector<Idle*> idle_ ELASTICJOB_GUARDED_BY(mu_);  // waiting workers, the last idle last
  size_t lingering_ ELASTICJOB_GUARDED_BY(mu_) = 0;     // workers yielding before they wait
  size_t roused_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // idle workers KeepAwake has woken, on their way
  // Lingering lasts until this (KeepAwake), or kLinger, whichever ends later.
  std::atomic<std::chrono::steady_clock::rep> awake_until_{0};
  std::vector<std::thread> workers_ ELASTICJOB_GUARDED_BY(mu_);
  std::vector<std::thread> retired_ ELASTICJOB_GUARDED_BY(mu_);  // left Run, to be joined
  std::atomic<bool> has_retired_{false};                         // retired_ is not empty
};

class SerialExecutor final : public Executor {
 public:
  // REQUIRES: `target` outlives this executor and keeps running tasks until it is destroyed.
  explicit SerialExecutor(Executor& target) : target_(target) {}
  ~SerialExecutor() override;  // waits until no task of this executor is running or queued
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  void Post(std::function<void()> task) override;

 private:
  void Drain();

  Executor& target_;
  Mutex mu_;
  CondVar idle_cv_{&mu_};
  std::deque<std::function<void()>> tasks_ ELASTICJOB_GUARDED_BY(mu_);
  bool scheduled_ ELASTICJOB_GUARDED_BY(mu_) = false;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_EXECUTOR_H_
