// LaunchBoard: item starts worked out before their fire time, started at it by the item
// pool's workers, which take them off one shared list (an atomic index) instead of one post
// per item. A thousand jobs due on the same millisecond cost the timer one hand-off, and
// their items start as fast as the workers can call them: no lock, no thread wake-up and no
// allocation per item at the fire time (all of that is done when the units are added).
//
// Units due at the same wall time form a batch. At its time the timer hands one task to the
// workers' executor (ahead of its queued work), which has up to `drains` - 1 more workers
// join it when there is more than one unit; each takes units until none is left. A unit has
// two parts: `begin`, cheap and never blocking (admission; it may set work to follow, its
// `after`), then `run` (user code) when `begin` said so. Once every unit of the batch has
// begun, the `after` work goes to the control executor, in chunks: a job's registry work
// follows its items' starts and never delays another job's start.
//
// A drainer takes a run of units at once while many are left (up to kMaxRun; one unit at a
// time once fewer than `most` x 8 are left, as in any batch of that size or less), admits
// them all, then runs their user code. User code may be slow: the batch's watch (the timer,
// kEndHold after the due time and every kEndHold after while units are left) finds every
// drainer in user code with units left and has as many more workers join (up to `most`
// drainers, the executor's bound). So slow jobs hold up the rest of the batch by kEndHold
// at most beyond what they would hold up a pool of that size, plus, in a large batch, the
// other units of their run (at most kMaxRun - 1); fast ones never cost a worker's wake-up or
// a thread more than `drains`. A drainer releases what its units hold once every unit of
// the batch has been taken.
//
// A batch that has grown large (kStandbyAll) is handed to the workers `warm` before its due
// time, when the board has one (a real clock): each of its `drains` drainers fetches what
// the units of its own slice of the batch read (Unit::touch) into its CPU's caches, then
// waits on the CPU for the due time and starts its slice, then helps the others with
// theirs. A thousand starts read about a megabyte that a second in between has moved out
// of the cores' own caches; fetched unit by unit at the fire, it cost about a microsecond
// a start. The drainers keep to different CPUs (infra::CpuSpread). Every drainer stands by
// (awake, yielding) for the hand-off, so that none loses its fetching time to a wake-up.
//
// Units added for a time whose batch has been handed over already form a new batch, started
// at once. A unit's owner cancels it through its own state (the board has no Cancel): a
// unit whose `begin` finds it cancelled returns false.
//
// Thread safety: safe for concurrent use. The batches handed over hold the control executor,
// not the board: the board may go before the timer and the pools.
#ifndef ELASTICJOB_TRIGGER_LAUNCH_BOARD_H_
#define ELASTICJOB_TRIGGER_LAUNCH_BOARD_H_

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/executor.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "infra/cpu_spread.h"
#include "trigger/timer_scheduler.h"

namespace elasticjob::trigger {

class LaunchBoard {
 public:
  // The most addresses a unit names for prefetching.
  static constexpr size_t kTouches = 28;
  struct Unit {
    // Whether to run; may set `after`. Must not block. `now`: the wall time the drainer read
    // just before the begins of its run of units (one clock read per run, not per unit).
    std::function<bool(std::function<void()>& after, Clock::WallTime now)> begin;
    std::function<void()> run;         // user code
    std::shared_ptr<const void> keep;  // what the two point to, held for them
    // Memory the two read (null: none), fetched for a run of units before the first of them
    // begins: a second after they were added each is a cache miss, and asked for one by
    // one, as the code reaches them, they would be waited for one by one.
    std::array<const void*, kTouches> touch{};
  };

  // Posts `task` to `executor`. Called while a drainer runs units' user code (an item's end:
  // its run's registry work, say), the task waits for the end of the drainer's run, and, while
  // the batch has units left to take, for the last of them to be taken, or the batch's watch
  // (kEndHold after its due time, by the board's clock) at most: the control executor's work
  // then does not take a core from the
  // starts still to come (on two cores it took the one a second drainer needed). Anywhere
  // else: posted at once. The kept tasks go in one post per executor, in the order kept.
  static void PostAfterRun(Executor& executor, std::function<void()> task);

  using Deferred = std::pair<Executor*, std::function<void()>>;

  // Work an item's start leaves for later (its end's bookkeeping: reports, metrics, the
  // pass's end), so that it delays no other unit's start: `fn(object, index)`. Called from a
  // unit's `run` on a drainer, it runs once that drainer has no unit left to take, before
  // the drainer's units are released (or, when the drainer's user code keeps it longer, at
  // the batch's watch, on the control executor; the unit's `keep` is held for it).
  // Anywhere else it runs at once. No allocation: the calls are kept in place.
  using AfterStartsFn = void (*)(void* object, size_t index);
  static void AfterStarts(AfterStartsFn fn, void* object, size_t index);
  struct AfterStart {
    AfterStartsFn fn;
    void* object;
    size_t index;
    // The unit's `keep`, which holds `object` until its drainer releases its units (after
    // its own calls): copied into `held` only by the batch's watch as it takes the calls
    // from a drainer, so that a start on the drainer counts no hold.
    const std::shared_ptr<const void>* unit_keep;
    std::shared_ptr<const void> held;
  };
  // One drainer's AfterStarts calls, published after each of its runs; the batch's watch
  // takes them from a drainer whose run has gone on since its last look.
  struct Slot {
    Mutex mu;
    std::vector<AfterStart> calls ELASTICJOB_GUARDED_BY(mu);
    std::atomic<uint64_t> runs{0};  // runs of user code begun
    uint64_t watched = 0;           // `runs` at the watch's last look (only the watch)
  };

  class Batch : public std::enable_shared_from_this<Batch> {
   public:
    Batch(TimerScheduler& timer, Executor& workers, int drains, int most, Executor& control,
          Clock::WallTime due, std::chrono::microseconds warm)
        : timer_(timer),
          clock_(timer.clock()),
          workers_(workers),
          drains_(drains),
          most_(most),
          control_(control),
          due_(due),
          warm_(warm) {}

   private:
    friend class LaunchBoard;
    // Adds `units`; false once the batch has been handed over. Sets `*grown` when the batch
    // has just become large enough for every drainer to stand by (kStandbyAll).
    bool Add(std::vector<Unit>& units, bool* grown);
    // At the due time (or `warm` before it): seals the batch, cuts it into slices, has more
    // workers join, and drains.
    void Launch();
    // One worker's share of the batch: from the due time, units of `slice` (-1: none of its
    // own; a drainer Grow added), then of the others, until none is left. Before the due
    // time, it fetches what its slice reads and waits. A drainer other than the launching
    // one (slice 0) keeps off the CPUs of the others (infra::CpuSpread).
    void Drain(int slice);
    // Fetches what units [first, last) read and write (Unit::touch, their `keep`).
    void Fetch(size_t first, size_t last) const;
    // Handed over ahead: fetches what the units of `slice` read, then waits for due_.
    void WarmUntilDue(int slice);
    // Takes up to `size` units: of `slice` first, then of the slice with the most left.
    // Returns [first, last), empty once every unit has been taken.
    std::pair<size_t, size_t> Take(int slice, size_t size);
    // Units not yet taken (by any drainer).
    size_t Left() const {
      return units_.size() - std::min(units_.size(), taken_.load(std::memory_order_acquire));
    }
    // Has one more worker drain, when fewer than most_ have.
    void Grow();
    // Once every unit has begun: their `after` work to the control executor.
    void PostAfters();
    // A drainer's run's PostAfterRun tasks: kept while units are left (until the batch's
    // watch at the latest), else posted with those kept.
    void Defer(std::vector<Deferred>& tasks);
    // Posts the tasks kept and keeps none from now on: once every unit has been taken, or
    // at the batch's watch (a slow job must not hold back the ends of the items that ran
    // before it for longer).
    void Flush();
    // kEndHold after the due time, then every kEndHold while units are left (the timer, on
    // the control executor): Flush, and Grow when every drainer is in user code.
    void Watch();

    // Runs `calls` (AfterStarts) and posts the ends they leave (PostAfterRun) grouped.
    static void RunAfterStarts(std::vector<AfterStart>& calls);

    TimerScheduler& timer_;
    // What the drainers read the time from: the clock outlives the timer, which an owner may
    // stop while a drainer still takes the batch's units (SharedRuntime's pools go last).
    Clock& clock_;
    Executor& workers_;
    const int drains_;
    const int most_;
    Executor& control_;
    Mutex mu_;
    bool sealed_ ELASTICJOB_GUARDED_BY(mu_) = false;
    std::vector<std::shared_ptr<Slot>> slots_ ELASTICJOB_GUARDED_BY(mu_);  // one per drainer
    // Written under mu_ until sealed_, then sized once and each element written by the
    // drainer that took its unit (no lock): read by PostAfters after every unit has begun.
    std::vector<Unit> units_;
    // Each unit's `keep`, as an address for Fetch, written with units_ until sealed_: a
    // drainer's look-ahead fetches units that another drainer may have taken, run and
    // released meanwhile, so Fetch reads only what no release writes (this and `touch`).
    std::vector<const void*> held_;
    std::vector<std::function<void()>> afters_;
    const Clock::WallTime due_;
    const std::chrono::microseconds warm_;  // the board's
    // The batch cut into one slice per drainer at its launch: units [next, end) of each are
    // left, a drainer's own first (what it fetched before the due time).
    struct alignas(64) Slice {
      std::atomic<size_t> next{0};
      size_t end = 0;
    };
    std::unique_ptr<Slice[]> slices_;  // set at Launch, before any drainer starts
    int slice_count_ = 0;
    std::atomic<size_t> taken_{0};  // units taken, all slices together
    std::atomic<int> arrived_{0};   // drainers waiting for the due time or past it
    infra::CpuSpread spread_;       // the drainers' CPUs
    std::atomic<size_t> begun_{0};  // units whose `begin` has returned
    std::atomic<int> drainers_{0};  // drainers started (posted) so far
    std::atomic<int> taking_{0};    // of those, the ones not in user code
    Mutex defer_mu_;
    std::vector<Deferred> deferred_ ELASTICJOB_GUARDED_BY(defer_mu_);
    bool flushed_ ELASTICJOB_GUARDED_BY(defer_mu_) = false;
  };

  // The most units a drainer takes at once.
  static constexpr size_t kMaxRun = 8;
  // A batch of more units than this has all `drains` workers awake at its due time, not
  // one: a second drainer that must be woken by the first joins about 0.1 ms late, while a
  // thousand units take about 1 ms. A smaller batch has one (more would spin for nothing).
  static constexpr size_t kStandbyAll = 2 * kMaxRun;
  // The longest an item's end is kept while units of its batch are left (PostAfterRun).
  static constexpr std::chrono::milliseconds kEndHold{5};
  // `after` work is posted to `control` this many to a task.
  static constexpr size_t kAftersPerTask = 64;
  // A warm drainer fetches at most this many units of its slice ahead: what a thousand
  // units' starts touch (about 13 lines each) fills a core's 1 MB L2; more would push out
  // the first of them before they start (the rest are fetched a run ahead, as they go).
  static constexpr size_t kWarmUnits = 1024;

  // REQUIRES: `timer`, `workers` and `control` outlive this object and the batches it hands
  // over. `drains`: how many of the workers start a batch's units (at least 1); `most`: how
  // many may, when user code is slow (at least `drains`; the workers' bound). `warm`: how
  // long before its due time a large batch is handed over (0: at it; for a simulated clock,
  // whose time a waiting drainer would never see move, 0).
  LaunchBoard(TimerScheduler& timer, Executor& workers, int drains, int most, Executor& control,
              std::chrono::microseconds warm = std::chrono::microseconds(0));
  LaunchBoard(const LaunchBoard&) = delete;
  LaunchBoard& operator=(const LaunchBoard&) = delete;

  // Starts `units` once the wall clock reaches `due` (at once if their batch has gone).
  void Add(Clock::WallTime due, std::vector<Unit> units);

 private:
  // Hands `batch` over at its time: `warm` before `due` when large and the board warms,
  // else at `due` with `standby` workers awake for it.
  TimerScheduler::TaskId ScheduleLaunch(const std::shared_ptr<Batch>& batch, Clock::WallTime due,
                                        bool large);

  TimerScheduler& timer_;
  Executor& workers_;
  const int drains_;
  const int most_;
  Executor& control_;
  const std::chrono::microseconds warm_;
  Mutex mu_;
  // Batches not handed over yet, by due time (and those handed over, until the next Add),
  // with their launch's timer task.
  struct Open {
    std::shared_ptr<Batch> batch;
    TimerScheduler::TaskId launch = 0;
  };
  std::map<Clock::WallTime, Open> open_ ELASTICJOB_GUARDED_BY(mu_);
};

}  // namespace elasticjob::trigger

#endif  // ELASTICJOB_TRIGGER_LAUNCH_BOARD_H_
