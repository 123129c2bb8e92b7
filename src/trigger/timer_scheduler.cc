#include "trigger/timer_scheduler.h"

#include <algorithm>

#include "infra/thread_name.h"

namespace elasticjob::trigger {

TimerScheduler::TimerScheduler(Clock& clock, Executor& executor, int standby,
                               std::chrono::microseconds early)
    : clock_(clock), executor_(executor), standby_(standby), early_(early) {
  if (auto* sim = dynamic_cast<SimulatedClock*>(&clock_)) {
    listener_ = sim->OnAdvance([this] {
      MutexLock lock(&mu_);
      cv_.SignalAll();
    });
  }
  thread_ = std::thread([this] {
    infra::NameThisThread("ej-timer");
    Run();
  });
}

TimerScheduler::~TimerScheduler() {
  Stop();
  if (auto* sim = dynamic_cast<SimulatedClock*>(&clock_); sim != nullptr && listener_ != 0) {
    sim->RemoveListener(listener_);
  }
}

TimerScheduler::TaskId TimerScheduler::ScheduleAt(Clock::WallTime due, std::function<void()> task,
                                                  Executor* on, int standby) {
  MutexLock lock(&mu_);
  TaskId id = next_id_++;
  tasks_.emplace(id, Task{std::move(task), on != nullptr ? on : &executor_,
                          standby == kDefaultStandby ? standby_ : standby});
  // The thread sleeps until the earliest task: wake it only when this one comes first (a
  // thousand jobs re-arming after a fire would otherwise wake it a thousand times).
  const bool earliest = heap_.empty() || due < heap_.top().due;
  heap_.push(Entry{due, id});
  if (earliest) cv_.SignalAll();
  return id;
}

bool TimerScheduler::SetStandby(TaskId id, int standby) {
  MutexLock lock(&mu_);
  auto task = tasks_.find(id);
  if (task == tasks_.end()) return false;
  task->second.standby = standby == kDefaultStandby ? standby_ : standby;
  return true;
}

bool TimerScheduler::Cancel(TaskId id) {
  MutexLock lock(&mu_);
  return tasks_.erase(id) > 0;  // its heap entry is skipped when it surfaces
}

void TimerScheduler::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    tasks_.clear();
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

size_t TimerScheduler::pending() {
  MutexLock lock(&mu_);
  return tasks_.size();
}

void TimerScheduler::Run() {
  MutexLock lock(&mu_);
  bool slept = false;  // the last wait was a sleep ending early_ before the earliest task
  while (!stopped_) {
    while (!heap_.empty() && tasks_.count(heap_.top().id) == 0) heap_.pop();  // cancelled
    if (heap_.empty()) {
      cv_.Wait();
      continue;
    }
    Entry next = heap_.top();
    auto now = clock_.WallNow();
    if (next.due <= now) {
      // Every task due now, handed over together (a thousand jobs firing in the same
      // second), ahead of the executor's queued work: a due trigger must not wait behind
      // the completions of the runs it follows. (Posting never blocks.)
      // In hand-offs of kHandOff: the first triggers start while the rest are collected.
      // Each executor gets its own (tasks for other executors are rare: a LaunchBoard has
      // one task per fire time).
      std::vector<std::pair<Executor*, std::vector<std::function<void()>>>> due;
      while (!heap_.empty() && heap_.top().due <= now) {
        auto it = tasks_.find(heap_.top().id);
        heap_.pop();
        if (it == tasks_.end()) continue;  // cancelled
        Executor* on = it->second.on;
        auto group = std::find_if(due.begin(), due.end(), [&](auto& g) { return g.first == on; });
        if (group == due.end())
          group = due.emplace(due.end(), on, std::vector<std::function<void()>>{});
        group->second.push_back(std::move(it->second.fn));
        tasks_.erase(it);
        if (group->second.size() == kHandOff) {
          on->PostUrgentAll(std::move(group->second));
          group->second.clear();
        }
      }
      for (auto& [on, tasks] : due) {
        if (!tasks.empty()) on->PostUrgentAll(std::move(tasks));
      }
      slept = false;
      continue;
    }
    // Simulated clock: sleep until due, woken by every Advance() too.
    if (listener_ != 0) {
      cv_.WaitFor(next.due - now);
      continue;
    }
    // A relaxed task: sleep until due (an earlier task arriving wakes the thread).
    if (auto task = tasks_.find(next.id);
        task != tasks_.end() && task->second.standby == kRelaxed) {
      cv_.WaitFor(next.due - now);
      continue;
    }
    // Real clock: sleep until `early_` before due (or an earlier task arrives), then wait the
    // rest on the CPU, with the task's `standby` executor threads awake and waiting too (urgent
    // tasks: ahead of queued work, behind triggers already due). Only after a sleep: tasks due one
    // after another with no gap to sleep in get no spinning.
    if (next.due - now > early_) {
      cv_.WaitFor(next.due - now - early_);
      slept = true;
      continue;
    }
    if (!slept) {
      cv_.WaitFor(next.due - now);
      continue;
    }
    slept = false;
    const Clock::WallTime due = next.due;
    auto task = tasks_.find(next.id);
    Executor& on = task != tasks_.end() ? *task->second.on : executor_;
    const int standby = task != tasks_.end() ? task->second.standby : standby_;
    lock.Unlock();
    if (standby > 0) {
      on.KeepAwake(standby, std::chrono::steady_clock::now() +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    due - clock_.WallNow()));
    }
    while (clock_.WallNow() < due) std::this_thread::yield();
    lock.Lock();
  }
}

}  // namespace elasticjob::trigger
