// TimerScheduler: one timer thread for every job of the process (ElasticJob has one Quartz
// scheduler with its own threads per job). Tasks are kept in a min-heap by wall-clock due
// time; the thread sleeps on a condition variable until the earliest one is due, then hands
// it to an executor (ahead of the executor's queued work: Executor::PostUrgent), so a slow
// job never delays another job's trigger. A task may name its own executor (the item
// starts of a LaunchBoard go straight to the item pool).
//
// Time comes from the injected Clock; with a SimulatedClock the thread wakes on every
// Advance(), so tests move time instead of sleeping. With the real clock the thread wakes
// 200 µs before a due time it slept for and waits the rest on the CPU, and has `standby`
// threads of the executor of the task due then do the same, so the first trigger starts within
// microseconds of its time instead of after two wake-ups (about 0.2 ms). A task without a
// deadline of its own (kRelaxed: work done ahead of a fire time, a periodic look) gets none
// of that: the thread sleeps until its time and nobody waits on the CPU for it.
//
// Thread safety: safe for concurrent use. Stop() then destroy.
#ifndef ELASTICJOB_TRIGGER_TIMER_SCHEDULER_H_
#define ELASTICJOB_TRIGGER_TIMER_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <thread>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/simulated_clock.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::trigger {

class TimerScheduler {
 public:
  using TaskId = uint64_t;
  // With the real clock, a sleep ends this long before the due time, and the rest is
  // waited on the CPU: a sleeping thread wakes tens of microseconds late (timer slack, the
  // scheduler), and so does a pool worker woken by a post. See Run.
  static constexpr std::chrono::microseconds kEarly{200};

  // REQUIRES: `clock` and `executor` outlive this object. `standby`: how many threads of
  // the executor of the task due next to have awake at a fire time the timer slept before;
  // `early`: how long before it the timer wakes (see Run).
  TimerScheduler(Clock& clock, Executor& executor, int standby = 0,
                 std::chrono::microseconds early = kEarly);
  ~TimerScheduler();
  TimerScheduler(const TimerScheduler&) = delete;
  TimerScheduler& operator=(const TimerScheduler&) = delete;

  // Runs `task` on the executor (or on `on`, which must outlive this object, when given)
  // once the wall clock reaches `due`. `standby`: the threads to have awake for it, when
  // not the scheduler's (a task that starts all its work itself needs one). Returns an id
  // for Cancel.
  // kRelaxed: no thread is kept awake for the task, and the timer itself sleeps until its
  // time rather than waiting the last kEarly on the CPU; it may start a wake-up's latency
  // (tens of microseconds) late. For tasks that nothing waits on: each of them would
  // otherwise cost the timer's kEarly of CPU, and the standby threads' as much.
  static constexpr int kDefaultStandby = -1;
  static constexpr int kRelaxed = -2;
  TaskId ScheduleAt(Clock::WallTime due, std::function<void()> task, Executor* on = nullptr,
                    int standby = kDefaultStandby);
  // Changes the standby of a task not handed over yet (a batch that has grown since it was
  // scheduled wants more threads awake for it). Takes effect unless the timer has already
  // begun waiting on the CPU for it. Returns whether the task was still pending.
  bool SetStandby(TaskId id, int standby);
  // The scheduler's clock's wall time.
  Clock::WallTime Now() { return clock_.WallNow(); }
  // The scheduler's clock (it outlives the scheduler).
  Clock& clock() { return clock_; }
  // Forgets a task that has not been handed to the executor yet. Returns whether it was.
  bool Cancel(TaskId id);
  // Stops the thread; pending tasks are dropped.
  void Stop();
  size_t pending();

 private:
  void Run();

  struct Entry {
    Clock::WallTime due;
    TaskId id;
    bool operator>(const Entry& o) const { return due != o.due ? due > o.due : id > o.id; }
  };

  // Tasks due together are handed over this many at a time (collecting a thousand takes
  // the timer about 0.2 ms).
  static constexpr size_t kHandOff = 32;

  Clock& clock_;
  Executor& executor_;
  const int standby_;
  const std::chrono::microseconds early_;
  Mutex mu_;
  CondVar cv_{&mu_};
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_ ELASTICJOB_GUARDED_BY(mu_);
  struct Task {
    std::function<void()> fn;
    Executor* on;  // never null
    int standby;   // resolved: never kDefaultStandby
  };
  std::map<TaskId, Task> tasks_ ELASTICJOB_GUARDED_BY(mu_);
  TaskId next_id_ ELASTICJOB_GUARDED_BY(mu_) = 1;
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  uint64_t listener_ = 0;  // SimulatedClock listener, when the clock is simulated
  std::thread thread_;
};

}  // namespace elasticjob::trigger

#endif  // ELASTICJOB_TRIGGER_TIMER_SCHEDULER_H_
