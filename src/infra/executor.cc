#include "elasticjob/executor.h"

#include <cassert>
#include <chrono>

namespace elasticjob {

ThreadPool::ThreadPool(int threads) : max_threads_(static_cast<size_t>(threads)) {
  assert(threads >= 1);
}

ThreadPool::~ThreadPool() {
  Stop();
  Join();
}

void ThreadPool::Post(std::function<void()> task) { Queue(std::move(task), /*urgent=*/false); }

void ThreadPool::PostUrgent(std::function<void()> task) { Queue(std::move(task), /*urgent=*/true); }

void ThreadPool::PostUrgentAll(std::vector<std::function<void()>> tasks) {
  MutexLock lock(&mu_);
  if (stopped_) return;
  for (auto& t : tasks) {
    urgent_.push_back(std::move(t));
    queued_.fetch_add(1, std::memory_order_relaxed);
    WakeLocked();
  }
}

void ThreadPool::Queue(std::function<void()> task, bool urgent) {
  MutexLock lock(&mu_);
  if (stopped_) return;
  (urgent ? urgent_ : tasks_).push_back(std::move(task));
  queued_.fetch_add(1, std::memory_order_relaxed);
  WakeLocked();
}

void ThreadPool::WakeLocked() {
  // Lingering workers (Run) take queued tasks without being woken, and so do workers that
  // KeepAwake has woken (they linger next). A waiting worker is notified at most once, for a
  // task or to stand by: it uses up one count when it wakes, so the counts never exceed
  // the workers waiting (a count left behind would stand for a sleeping worker "on its
  // way", and a task posted to it at the pool's bound would wait for good).
  if (queued_.load(std::memory_order_relaxed) <= lingering_ + roused_) return;
  if (waiting_ > wakeups_ + roused_) {
    ++wakeups_;  // this waiting worker is spoken for
    cv_.Signal();
  } else if (workers_.size() < max_threads_) {
    workers_.emplace_back([this] { Run(); });  // every worker is busy: one more
  }
  // Else every worker is busy and the pool is at its bound: the task waits its turn.
}

void ThreadPool::KeepAwake(int threads, std::chrono::steady_clock::time_point until) {
  MutexLock lock(&mu_);
  if (stopped_) return;
  const auto ticks = (until + kLinger).time_since_epoch().count();
  if (ticks > awake_until_.load(std::memory_order_relaxed)) {
    awake_until_.store(ticks, std::memory_order_relaxed);
  }
  // Workers not asleep (lingering, or busy: they linger after their task) stay on; sleeping
  // ones are woken, and missing ones started.
  size_t awake = workers_.size() - waiting_ + roused_;
  const size_t want = std::min(static_cast<size_t>(std::max(threads, 0)), max_threads_);
  while (awake < want && waiting_ > wakeups_ + roused_) {
    ++roused_;
    ++awake;
    cv_.Signal();
  }
  while (awake < want && workers_.size() < max_threads_) {
    workers_.emplace_back([this] { Run(); });  // it lingers first, having no task
    ++awake;
  }
}

void ThreadPool::Stop() {
  {
    MutexLock lock(&mu_);
    stopped_ = true;
  }
  cv_.SignalAll();
}

void ThreadPool::Join() {
  std::vector<std::thread> workers;
  {
    MutexLock lock(&mu_);  // no worker starts once stopped
    workers.swap(workers_);
  }
  for (auto& t : workers) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // joined from one of its own tasks: it ends on its own
    } else if (t.joinable()) {
      t.join();
    }
  }
}

size_t ThreadPool::threads() {
  MutexLock lock(&mu_);
  return workers_.size();
}

void ThreadPool::Run() {
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
    // scheduler round trip. Bounded (kLinger); then it waits on the condition variable.
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
    // Every wake-up uses up one notification, also when another worker took the task
    // first: a worker woken for nothing is idle again, not still "spoken for" (counted as
    // on its way, it would never be woken again, and once every sleeping worker was so
    // counted a task posted then would wait for good).
    ++waiting_;
    bool roused = false;
    do {
      cv_.Wait();
      if (roused_ > 0) {
        --roused_;  // woken to stand by (KeepAwake): linger again
        roused = true;
      } else if (wakeups_ > 0) {
        --wakeups_;
      }
    } while (!roused && !stopped_ && tasks_.empty() && urgent_.empty());
    --waiting_;
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
