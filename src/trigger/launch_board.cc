#include "trigger/launch_board.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <thread>
#include <unordered_map>

namespace elasticjob::trigger {
namespace {

// A spin-wait's pause: it tells the CPU that this is a wait loop.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The tasks PostAfterRun keeps for the drainer on this thread while it runs user code.
thread_local std::vector<LaunchBoard::Deferred>* t_deferring = nullptr;
// The AfterStarts calls of the drainer on this thread, and the `keep` of its unit running.
thread_local std::vector<LaunchBoard::AfterStart>* t_after_starts = nullptr;
thread_local const std::shared_ptr<const void>* t_unit_keep = nullptr;

// One post per executor (in order), not one per task. Linear: a batch's ends name up to one
// executor per job.
void PostGrouped(std::vector<LaunchBoard::Deferred>& tasks) {
  if (tasks.empty()) return;
  std::vector<std::pair<Executor*, std::shared_ptr<std::vector<std::function<void()>>>>> groups;
  std::unordered_map<Executor*, size_t> group_of;
  for (auto& [executor, task] : tasks) {
    auto [it, added] = group_of.try_emplace(executor, groups.size());
    if (added) {
      groups.emplace_back(executor, std::make_shared<std::vector<std::function<void()>>>());
    }
    groups[it->second].second->push_back(std::move(task));
  }
  tasks.clear();
  for (auto& [executor, group] : groups) {
    executor->Post([group = std::move(group)] {
      for (auto& task : *group) task();
    });
  }
}

}  // namespace

void LaunchBoard::PostAfterRun(Executor& executor, std::function<void()> task) {
  if (t_deferring != nullptr) {
    t_deferring->emplace_back(&executor, std::move(task));
    return;
  }
  executor.Post(std::move(task));
}

void LaunchBoard::AfterStarts(AfterStartsFn fn, void* object, size_t index) {
  if (t_after_starts != nullptr) {
    t_after_starts->push_back(AfterStart{fn, object, index, t_unit_keep, nullptr});
    return;
  }
  fn(object, index);
}

void LaunchBoard::Batch::RunAfterStarts(std::vector<AfterStart>& calls) {
  if (calls.empty()) return;
  std::vector<Deferred> ends;
  std::vector<Deferred>* const outer = t_deferring;
  t_deferring = &ends;
  for (AfterStart& call : calls) call.fn(call.object, call.index);
  t_deferring = outer;
  calls.clear();  // the keeps go
  PostGrouped(ends);
}

LaunchBoard::LaunchBoard(TimerScheduler& timer, Executor& workers, int drains, int most,
                         Executor& control, std::chrono::microseconds warm)
    : timer_(timer),
      workers_(workers),
      drains_(drains),
      most_(most),
      control_(control),
      warm_(warm) {
  assert(drains >= 1 && most >= drains);
}

TimerScheduler::TaskId LaunchBoard::ScheduleLaunch(const std::shared_ptr<Batch>& batch,
                                                   Clock::WallTime due, bool large) {
  if (large && warm_.count() > 0) {
    // Every drainer standing by for the hand-off (the timer's, then the launcher's to its
    // helpers): woken one after the other instead, the second began its fetching 0.1-0.3 ms
    // late, often after the due time, on this 2-core VM. They wait for the due time on the
    // CPU themselves (Drain).
    return timer_.ScheduleAt(
        due - warm_, [batch] { batch->Launch(); }, &workers_, /*standby=*/drains_);
  }
  // One worker standing by for a small batch: it takes the launch, and the helpers it posts
  // join as they wake; more standing by would spin for a one-unit batch (one job). A large
  // one has every drainer awake at its time (kStandbyAll).
  return timer_.ScheduleAt(
      due, [batch] { batch->Launch(); }, &workers_, /*standby=*/large ? drains_ : 1);
}

void LaunchBoard::Add(Clock::WallTime due, std::vector<Unit> units) {
  if (units.empty()) return;
  MutexLock lock(&mu_);
  Open& open = open_[due];
  bool grown = false;
  if (open.batch != nullptr && open.batch->Add(units, &grown)) {
    // Grown past a one-drainer batch: handed over warm_ ahead (a launch not handed over yet
    // is moved), or every drainer stands by at its time.
    if (grown && warm_.count() > 0) {
      if (timer_.Cancel(open.launch)) open.launch = ScheduleLaunch(open.batch, due, true);
    } else if (grown) {
      timer_.SetStandby(open.launch, drains_);
    }
    return;
  }
  // No batch for that time yet, or it has been handed over: a new one (sealed batches are
  // forgotten as they are met; the map holds at most a few).
  auto batch = std::make_shared<Batch>(timer_, workers_, drains_, most_, control_, due, warm_);
  batch->Add(units, &grown);
  open.batch = batch;
  open.launch = ScheduleLaunch(batch, due, grown);
  // The batch's watch, armed now (in the lead time) so that nothing on the fire path has to
  // arm a timer (and wake the timer's thread). It holds the batch weakly: a batch whose
  // units have all been taken is gone by then, and the watch does nothing.
  std::weak_ptr<Batch> weak = batch;
  timer_.ScheduleAt(
      due + kEndHold,
      [weak] {
        if (auto self = weak.lock()) self->Watch();
      },
      &control_, TimerScheduler::kRelaxed);  // nobody waits on the CPU for it
  for (auto it = open_.begin(); it != open_.end() && it->first < due;) {
    bool sealed;
    {
      MutexLock batch_lock(&it->second.batch->mu_);
      sealed = it->second.batch->sealed_;
    }
    // Outside the batch's lock: erasing may destroy the batch (and its mutex).
    it = sealed ? open_.erase(it) : std::next(it);
  }
}

bool LaunchBoard::Batch::Add(std::vector<Unit>& units, bool* grown) {
  MutexLock lock(&mu_);
  if (sealed_) return false;
  const size_t before = units_.size();
  for (const Unit& unit : units) held_.push_back(unit.keep.get());
  units_.insert(units_.end(), std::make_move_iterator(units.begin()),
                std::make_move_iterator(units.end()));
  *grown = before <= kStandbyAll && units_.size() > kStandbyAll;
  return true;
}

void LaunchBoard::Batch::Launch() {
  {
    MutexLock lock(&mu_);
    sealed_ = true;  // units_ is read-only from here on
  }
  const size_t n = units_.size();
  afters_.resize(n);
  const size_t helpers = std::min(n, static_cast<size_t>(drains_)) - 1;
  // One slice per drainer, before any drainer starts (the posts below publish them).
  const size_t count = helpers + 1;
  slice_count_ = static_cast<int>(count);
  slices_ = std::make_unique<Slice[]>(count);
  for (size_t k = 0; k < count; ++k) {
    slices_[k].next.store(n * k / count, std::memory_order_relaxed);
    slices_[k].end = n * (k + 1) / count;
  }
  drainers_.store(static_cast<int>(helpers) + 1, std::memory_order_relaxed);
  taking_.store(static_cast<int>(helpers) + 1, std::memory_order_relaxed);
  if (helpers > 0) {
    std::vector<std::function<void()>> drains;
    for (size_t i = 0; i < helpers; ++i) {
      drains.push_back(
          [self = shared_from_this(), slice = static_cast<int>(i) + 1] { self->Drain(slice); });
    }
    // This worker's CPU is the batch's first: a helper the kernel puts on it moves (Drain).
    spread_.Take();
    workers_.PostUrgentAll(std::move(drains));
  }
  Drain(0);
}

void LaunchBoard::Batch::Fetch(size_t first, size_t last) const {
  // For writing: the preparation wrote most of it on another core, and a write to a line
  // fetched only for reading would fetch it again.
  for (size_t i = first; i < last; ++i) {
    if (const void* held = held_[i]) __builtin_prefetch(held, 1);
    for (const void* address : units_[i].touch) {
      if (address != nullptr) __builtin_prefetch(address, 1);
    }
  }
}

void LaunchBoard::Batch::WarmUntilDue(int slice) {
  // What this slice's units read and write, into this CPU's caches.
  const size_t begin = slices_[slice].next.load(std::memory_order_relaxed);
  const size_t end = std::min(slices_[slice].end, begin + kWarmUnits);
  // In runs, with a look at the clock between them: a late launch stops fetching at due_.
  for (size_t i = begin; i < end && clock_.WallNow() < due_; i += kMaxRun) {
    Fetch(i, std::min(end, i + kMaxRun));
  }
  arrived_.fetch_add(1, std::memory_order_acq_rel);
  // The due time, waited for on the CPU: yielding while a drainer of the batch has yet to
  // arrive (it may be queued on this CPU, and moves off once it runs), then not (a yield
  // hands the CPU to any runnable thread, background work included, for up to the
  // scheduler's slice: milliseconds). A due time further away than warm_ (the wall clock
  // was set back meanwhile) is slept for first.
  while (true) {
    const auto left = due_ - clock_.WallNow();
    if (left <= Clock::WallTime::duration::zero()) return;
    if (left > 2 * warm_) {
      std::this_thread::sleep_for(left - warm_);
    } else if (arrived_.load(std::memory_order_acquire) < slice_count_) {
      std::this_thread::yield();
    } else {
      for (int spin = 0; spin < 16; ++spin) CpuRelax();
    }
  }
}

std::pair<size_t, size_t> LaunchBoard::Batch::Take(int slice, size_t size) {
  auto take_from = [&](int k) -> std::pair<size_t, size_t> {
    Slice& s = slices_[k];
    if (s.next.load(std::memory_order_relaxed) >= s.end) return {0, 0};
    const size_t first = s.next.fetch_add(size, std::memory_order_relaxed);
    if (first >= s.end) return {0, 0};
    return {first, std::min(s.end, first + size)};
  };
  if (slice >= 0) {
    if (auto run = take_from(slice); run.first < run.second) return run;
  }
  while (true) {
    int best = -1;
    size_t most_left = 0;
    for (int k = 0; k < slice_count_; ++k) {
      const size_t next = slices_[k].next.load(std::memory_order_relaxed);
      const size_t left = next < slices_[k].end ? slices_[k].end - next : 0;
      if (left > most_left) {
        most_left = left;
        best = k;
      }
    }
    if (best < 0) return {0, 0};
    if (auto run = take_from(best); run.first < run.second) return run;
  }
}

void LaunchBoard::Batch::Drain(int slice) {
  const size_t n = units_.size();
  // A helper on a CPU another drainer has moves to one none has, while it takes units.
  std::optional<infra::CpuSpread::Stay> stay;
  if (slice != 0) stay.emplace(spread_.Join());
  if (slice >= 0 && clock_.WallNow() < due_) WarmUntilDue(slice);
  // The units this drainer took, released once it has no more to take (see the header).
  std::vector<std::pair<size_t, size_t>> taken;
  // The ends of this drainer's run (PostAfterRun), reused from run to run.
  std::vector<Deferred> deferred;
  // Its AfterStarts calls: those of the run going on, then published in its slot.
  std::vector<AfterStart> after_starts;
  size_t fetched = 0;  // units from the last run's end to this are fetched (Unit::touch)
  size_t last_end = 0;
  auto slot = std::make_shared<Slot>();
  {
    MutexLock lock(&mu_);
    slots_.push_back(slot);
  }
  while (true) {
    // A run of units at a time while many are left (one shared count per run, not per
    // unit: the count's cache line moves between cores at each update), single units near
    // the end, so that the drainers finish together.
    const size_t left = Left();
    if (left == 0) break;
    const size_t size = std::clamp<size_t>(left / (static_cast<size_t>(most_) * 8), 1, kMaxRun);
    const auto [first, last] = Take(slice, size);
    if (first == last) break;
    taken_.fetch_add(last - first, std::memory_order_acq_rel);
    taken.emplace_back(first, last);
    // What the run's units read, fetched together (Unit::touch), and what the next run's
    // will read (most likely this drainer's next units): fetched one run ahead, it has
    // arrived when that run begins. Units another drainer takes meanwhile cost nothing.
    if (first != last_end) fetched = first;  // another slice's units: none fetched yet
    last_end = last;
    Fetch(std::max(first, fetched), std::min(n, last + size));
    fetched = std::min(n, last + size);
    // Admission first, for the whole run (cheap, never blocking), then the user code.
    bool go[kMaxRun];
    bool any = false;
    const Clock::WallTime now = clock_.WallNow();
    for (size_t i = first; i < last; ++i) {
      go[i - first] = units_[i].begin(afters_[i], now);
      any = any || go[i - first];
    }
    if (begun_.fetch_add(last - first, std::memory_order_acq_rel) + (last - first) == n) {
      PostAfters();
    }
    if (!any) continue;
    // Into user code, which may be slow: the batch's watch has another drainer join when
    // the units left stop being taken (Watch).
    taking_.fetch_sub(1, std::memory_order_acq_rel);
    slot->runs.fetch_add(1, std::memory_order_relaxed);
    t_deferring = &deferred;
    t_after_starts = &after_starts;
    for (size_t i = first; i < last; ++i) {
      if (!go[i - first]) continue;
      t_unit_keep = &units_[i].keep;
      units_[i].run();
    }
    t_after_starts = nullptr;
    t_unit_keep = nullptr;
    t_deferring = nullptr;
    taking_.fetch_add(1, std::memory_order_acq_rel);
    if (!deferred.empty()) Defer(deferred);
    if (!after_starts.empty()) {
      MutexLock lock(&slot->mu);
      for (AfterStart& call : after_starts) slot->calls.push_back(std::move(call));
      after_starts.clear();
    }
  }
  taking_.fetch_sub(1, std::memory_order_acq_rel);
  stay.reset();  // back to every CPU the worker may use
  // No unit left to take: the ends of this drainer's items now.
  {
    MutexLock lock(&slot->mu);
    after_starts.swap(slot->calls);
  }
  // What those ends post (PostAfterRun: the pass's registry work) is collected, and posted
  // with the release below: one post, one worker woken, per executor.
  t_deferring = &deferred;
  RunAfterStarts(after_starts);
  t_deferring = nullptr;
  // Every unit has been taken: what this drainer's units held (captures, a job's run) goes
  // now, on the control executor, off the way of the units other drainers still start, and
  // not with the batch (a unit of another drainer may be slow, and the owner of one of these
  // may wait to see its own released).
  if (!taken.empty()) {
    deferred.emplace_back(&control_, [self = shared_from_this(), taken = std::move(taken)] {
      for (const auto& [first, last] : taken) {
        for (size_t i = first; i < last; ++i) {
          // Not `touch`, nor the unit whole: another drainer's look-ahead (Fetch) may be
          // reading this unit's addresses now.
          Unit& unit = self->units_[i];
          unit.begin = nullptr;
          unit.run = nullptr;
          unit.keep.reset();
        }
      }
    });
  }
  // Every unit has been taken: the ends kept, then these (as Flush, with these added).
  Defer(deferred);
}

void LaunchBoard::Batch::Grow() {
  int started = drainers_.load(std::memory_order_relaxed);
  do {
    if (started >= most_) return;  // as many as the workers' bound: the rest wait their turn
  } while (!drainers_.compare_exchange_weak(started, started + 1, std::memory_order_relaxed));
  taking_.fetch_add(1, std::memory_order_acq_rel);
  workers_.PostUrgent([self = shared_from_this()] { self->Drain(/*slice=*/-1); });
}

void LaunchBoard::Batch::Defer(std::vector<Deferred>& tasks) {
  std::vector<Deferred> ready;
  {
    MutexLock lock(&defer_mu_);
    // Units left (and not flushed): kept. The count is read under the lock Flush sets
    // flushed_ under: a run's ends are either in the list a Flush takes or posted here.
    if (!flushed_ && Left() > 0) {
      // The batch's watch posts them kEndHold after the due time at the latest.
      for (auto& t : tasks) deferred_.push_back(std::move(t));
      tasks.clear();
      return;
    }
    // Every unit taken: those kept first, in the order their runs ended.
    ready.swap(deferred_);
    flushed_ = true;
  }
  for (auto& t : tasks) ready.push_back(std::move(t));
  tasks.clear();
  PostGrouped(ready);
}

void LaunchBoard::Batch::Watch() {
  // kEndHold after the due time, then every kEndHold while units are left: the ends kept go
  // (a slow unit must not hold back the ends of the items that ran before it), and when
  // every drainer is in user code with units left, that code is slow: as many more drainers
  // join as there are (up to `most`). (While units are left no drainer has stopped.)
  // The item ends a drainer kept while its user code has gone on since the last look.
  bool kept = false;
  std::vector<std::shared_ptr<Slot>> slots;
  {
    MutexLock lock(&mu_);
    slots = slots_;
  }
  for (const auto& slot : slots) {
    const uint64_t runs = slot->runs.load(std::memory_order_relaxed);
    std::vector<AfterStart> calls;
    {
      MutexLock lock(&slot->mu);
      if (runs == slot->watched) calls.swap(slot->calls);
      // The units are not released yet: their drainer does that only after taking what is
      // left here, under this lock.
      for (AfterStart& call : calls) call.held = *call.unit_keep;
      kept = kept || !slot->calls.empty();
    }
    slot->watched = runs;
    RunAfterStarts(calls);
  }
  Flush();
  if (Left() == 0 && !kept) return;
  if (taking_.load(std::memory_order_acquire) == 0 && Left() > 0) {
    const int in_user_code = drainers_.load(std::memory_order_relaxed);
    for (int i = 0; i < in_user_code; ++i) Grow();
  }
  std::weak_ptr<Batch> weak = weak_from_this();
  timer_.ScheduleAt(
      timer_.Now() + kEndHold,
      [weak] {
        if (auto self = weak.lock()) self->Watch();
      },
      &control_, TimerScheduler::kRelaxed);
}

void LaunchBoard::Batch::Flush() {
  std::vector<Deferred> kept;
  {
    MutexLock lock(&defer_mu_);
    kept.swap(deferred_);
    flushed_ = true;
  }
  PostGrouped(kept);
}

void LaunchBoard::Batch::PostAfters() {
  // Every unit has begun (the acq_rel count orders their `after` writes before this).
  std::vector<std::function<void()>> afters;
  for (auto& after : afters_) {
    if (after) afters.push_back(std::move(after));
  }
  afters_.clear();
  for (size_t first = 0; first < afters.size(); first += kAftersPerTask) {
    const size_t last = std::min(afters.size(), first + kAftersPerTask);
    auto chunk = std::make_shared<std::vector<std::function<void()>>>(
        std::make_move_iterator(afters.begin() + static_cast<std::ptrdiff_t>(first)),
        std::make_move_iterator(afters.begin() + static_cast<std::ptrdiff_t>(last)));
    control_.Post([chunk] {
      for (auto& after : *chunk) after();
    });
  }
}

}  // namespace elasticjob::trigger
