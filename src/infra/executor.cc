#include "elasticjob/executor.h"

#include <algorithm>
#include <cassert>
#include <chrono>

#include "elasticjob/simulated_clock.h"
#include "infra/thread_name.h"

namespace elasticjob {

ThreadPool::ThreadPool(int threads, std::chrono::milliseconds keep_alive)
    : ThreadPool(threads, keep_alive, Clock::System()) {}

ThreadPool::ThreadPool(int threads, std::chrono::milliseconds keep_alive, Clock& clock)
    : max_threads_(static_cast<size_t>(threads)), keep_alive_(keep_alive), clock_(clock) {
  assert(threads >= 1);
  // Simulated time does not wake a timed wait: the clock's Advance() retires the workers
  // idle for keep_alive_ itself (the oldest idle first), and they wake to leave.
  if (auto* sim = dynamic_cast<SimulatedClock*>(&clock_)) {
    clock_listener_ = sim->OnAdvance([this] {
      MutexLock lock(&mu_);
      const auto now = clock_.MonotonicNow();
      for (Idle* worker : std::vector<Idle*>(idle_)) {
        if (RetireIfExpiredLocked(*worker, now)) worker->cv.Signal();
      }
    });
  }
}

ThreadPool::~ThreadPool() {
  if (clock_listener_ != 0) static_cast<SimulatedClock&>(clock_).RemoveListener(clock_listener_);
  Stop();
  Join();
}

void ThreadPool::Post(std::function<void()> task) { Queue(std::move(task), /*urgent=*/false); }

void ThreadPool::PostUrgent(std::function<void()> task) { Queue(std::move(task), /*urgent=*/true); }

void ThreadPool::PostUrgentAll(std::vector<std::function<void()>> tasks) {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    for (auto& t : tasks) {
      urgent_.push_back(std::move(t));
      queued_.fetch_add(1, std::memory_order_relaxed);
      WakeLocked();
    }
  }
  ReapRetired();
}

void ThreadPool::Queue(std::function<void()> task, bool urgent) {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    (urgent ? urgent_ : tasks_).push_back(std::move(task));
    queued_.fetch_add(1, std::memory_order_relaxed);
    WakeLocked();
  }
  ReapRetired();
}

void ThreadPool::WakeLocked() {
  // Lingering workers (Run) take queued tasks without being woken, and so do workers that
  // KeepAwake has woken (they linger next). Else the worker that went idle last is woken
  // (the others stay idle, and retire once idle for keep_alive_), or one more is started.
  if (queued_.load(std::memory_order_relaxed) <= lingering_ + roused_) return;
  if (!idle_.empty()) {
    Idle* worker = idle_.back();
    idle_.pop_back();
    worker->woken = true;
    worker->cv.Signal();
  } else if (workers_.size() < max_threads_) {
    workers_.emplace_back([this] { Run(); });  // every worker is busy: one more
  }
  // Else every worker is busy and the pool is at its bound: the task waits its turn.
}

void ThreadPool::KeepAwake(int threads, std::chrono::steady_clock::time_point until) {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    const auto ticks = (until + kLinger).time_since_epoch().count();
    if (ticks > awake_until_.load(std::memory_order_relaxed)) {
      awake_until_.store(ticks, std::memory_order_relaxed);
    }
    // Workers not idle (lingering, or busy: they linger after their task) stay on; idle
    // ones are woken (the last to go idle first), and missing ones started.
    size_t awake = workers_.size() - idle_.size();
    const size_t want = std::min(static_cast<size_t>(std::max(threads, 0)), max_threads_);
    while (awake < want && !idle_.empty()) {
      Idle* worker = idle_.back();
      idle_.pop_back();
      worker->woken = true;
      worker->roused = true;
      ++roused_;
      ++awake;
      worker->cv.Signal();
    }
    while (awake < want && workers_.size() < max_threads_) {
      workers_.emplace_back([this] { Run(); });  // it lingers first, having no task
      ++awake;
    }
  }
  ReapRetired();
}

void ThreadPool::Stop() {
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    for (Idle* worker : idle_) worker->cv.Signal();
  }
}

void ThreadPool::Join() {
  std::vector<std::thread> workers;
  {
    MutexLock lock(&mu_);  // no worker starts once stopped
    workers.swap(workers_);
    for (auto& t : retired_) workers.push_back(std::move(t));
    retired_.clear();
  }
  for (auto& t : workers) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // joined from one of its own tasks: it ends on its own
    } else if (t.joinable()) {
      t.join();
    }
  }
}

void ThreadPool::ReapRetired() {
  if (!has_retired_.load(std::memory_order_relaxed)) return;
  std::vector<std::thread> retired;
  {
    MutexLock lock(&mu_);
    retired.swap(retired_);
    has_retired_.store(false, std::memory_order_relaxed);
  }
  for (auto& t : retired) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // posted from the retiring worker's own last steps: it ends on its own
    } else if (t.joinable()) {
      t.join();  // it has left Run: at most its last unlock to wait for
    }
  }
}

size_t ThreadPool::threads() {
  MutexLock lock(&mu_);
  return workers_.size();
}

size_t ThreadPool::idle_threads() {
  MutexLock lock(&mu_);
  return idle_.size();
}

bool ThreadPool::RetireIfExpiredLocked(Idle& worker, Clock::MonotonicTime now) {
  if (worker.woken || worker.retired || stopped_ || workers_.size() <= 1 || now < worker.leave_at) {
    return false;
  }
  auto it = std::find_if(workers_.begin(), workers_.end(),
                         [&](const std::thread& t) { return t.get_id() == worker.thread; });
  if (it == workers_.end()) return false;
  // Its thread object goes to the retired ones, joined by the next post (or Join).
  retired_.push_back(std::move(*it));
  workers_.erase(it);
  has_retired_.store(true, std::memory_order_relaxed);
  worker.retired = true;
  std::erase(idle_, &worker);
  return true;
}

void ThreadPool::Run() {
  if (!thread_name_.empty()) infra::NameThisThread(thread_name_);
  MutexLock lock(&mu_);
  while (true) {
    if (!urgent_.empty() || !tasks_.empty()) {
      auto& queue = !urgent_.empty() ? urgent_ : tasks_;
      std::function<void()> task = std::move(queue.front());
      queue.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
      lock.Unlock();
      task();
      lock.Lock();
      continue;
    }
    if (stopped_) return;  // stopped and drained
    // Before sleeping, yield the CPU for a short while, watching for a task: in a burst (a
    // thousand triggers in one millisecond, and their items) the next task comes within
    // microseconds, and a sleeping worker costs its poster a futex wake and itself a
    // scheduler round trip. Bounded (kLinger); then it waits on its condition variable.
    ++lingering_;
    lock.Unlock();
    const auto until = std::max(
        std::chrono::steady_clock::now() + kLinger,
        std::chrono::steady_clock::time_point(
            std::chrono::steady_clock::duration(awake_until_.load(std::memory_order_relaxed))));
    while (queued_.load(std::memory_order_relaxed) == 0 &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    lock.Lock();
    --lingering_;
    if (!urgent_.empty() || !tasks_.empty() || stopped_) continue;
    // Idle: on the stack of idle workers, the last to come the first woken (WakeLocked). A
    // worker idle for keep_alive_ while others are started leaves the pool: a burst's extra
    // threads go once the burst is over, and steady work keeps using the same few.
    Idle me(&mu_, clock_.MonotonicNow() + keep_alive_);
    idle_.push_back(&me);
    while (!me.woken && !me.retired && !stopped_) {
      if (workers_.size() > 1 && clock_listener_ == 0) {
        // Idle for keep_alive_, and not the last: it retires.
        if (!me.cv.WaitUntil(me.leave_at)) RetireIfExpiredLocked(me, clock_.MonotonicNow());
      } else {
        me.cv.Wait();  // the last worker; or simulated time, whose Advance() retires it
      }
    }
    // Retired: nothing of the pool is touched after this hold of mu_ ends.
    if (me.retired) return;
    if (me.roused) --roused_;  // woken to stand by (KeepAwake): linger again
    if (!me.woken) std::erase(idle_, &me);
  }
}

SerialExecutor::~SerialExecutor() {
  MutexLock lock(&mu_);
  while (scheduled_) idle_cv_.Wait();
}

void SerialExecutor::Post(std::function<void()> task) {
  bool schedule = false;
  {
    MutexLock lock(&mu_);
    tasks_.push_back(std::move(task));
    if (!scheduled_) {
      scheduled_ = true;
      schedule = true;
    }
  }
  if (schedule) target_.Post([this] { Drain(); });
}

void SerialExecutor::Drain() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      if (tasks_.empty()) {
        scheduled_ = false;
        idle_cv_.SignalAll();
        return;
      }
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace elasticjob
