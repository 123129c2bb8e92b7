#include "trigger/launch_board.h"

#include <algorithm>
#include <cassert>

namespace elasticjob::trigger {
namespace {

// The tasks PostAfterRun keeps for the drainer on this thread while it runs user code.
thread_local std::vector<LaunchBoard::Deferred>* t_deferring = nullptr;

// One post per executor (in order), not one per task.
void PostGrouped(std::vector<LaunchBoard::Deferred>& tasks) {
  while (!tasks.empty()) {
    Executor* executor = tasks.front().first;
    auto group = std::make_shared<std::vector<std::function<void()>>>();
    std::erase_if(tasks, [&](LaunchBoard::Deferred& t) {
      if (t.first != executor) return false;
      group->push_back(std::move(t.second));
      return true;
    });
    executor->Post([group] {
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

LaunchBoard::LaunchBoard(TimerScheduler& timer, Executor& workers, int drains, int most,
                         Executor& control)
    : timer_(timer), workers_(workers), drains_(drains), most_(most), control_(control) {
  assert(drains >= 1 && most >= drains);
}

void LaunchBoard::Add(Clock::WallTime due, std::vector<Unit> units) {
  if (units.empty()) return;
  MutexLock lock(&mu_);
  auto& batch = open_[due];
  if (batch != nullptr && batch->Add(units)) return;
  // No batch for that time yet, or it has been handed over: a new one (sealed batches are
  // forgotten as they are met; the map holds at most a few).
  batch = std::make_shared<Batch>(timer_, workers_, drains_, most_, control_);
  batch->Add(units);
  // One worker standing by: it takes the launch, and the helpers it posts (larger batches)
  // join as they wake; more standing by would spin for a one-unit batch (one job).
  timer_.ScheduleAt(
      due, [batch] { batch->Launch(); }, &workers_, /*standby=*/1);
  for (auto it = open_.begin(); it != open_.end() && it->first < due;) {
    bool sealed;
    {
      MutexLock batch_lock(&it->second->mu_);
      sealed = it->second->sealed_;
    }
    // Outside the batch's lock: erasing may destroy the batch (and its mutex).
    it = sealed ? open_.erase(it) : std::next(it);
  }
}

bool LaunchBoard::Batch::Add(std::vector<Unit>& units) {
  MutexLock lock(&mu_);
  if (sealed_) return false;
  units_.insert(units_.end(), std::make_move_iterator(units.begin()),
                std::make_move_iterator(units.end()));
  return true;
}

void LaunchBoard::Batch::Launch() {
  {
    MutexLock lock(&mu_);
    sealed_ = true;  // units_ is read-only from here on
  }
  afters_.resize(units_.size());
  const size_t helpers = std::min(units_.size(), static_cast<size_t>(drains_)) - 1;
  drainers_.store(static_cast<int>(helpers) + 1, std::memory_order_relaxed);
  taking_.store(static_cast<int>(helpers) + 1, std::memory_order_relaxed);
  if (helpers > 0) {
    std::vector<std::function<void()>> drains;
    for (size_t i = 0; i < helpers; ++i) {
      drains.push_back([self = shared_from_this()] { self->Drain(); });
    }
    workers_.PostUrgentAll(std::move(drains));
  }
  Drain();
}

void LaunchBoard::Batch::Drain() {
  const size_t n = units_.size();
  // The units this drainer took, released once it has no more to take (see the header).
  std::vector<std::pair<size_t, size_t>> taken;
  // The ends of this drainer's run (PostAfterRun), reused from run to run.
  std::vector<Deferred> deferred;
  while (true) {
    // A run of units at a time while many are left (one shared count per run, not per
    // unit: the count's cache line moves between cores at each update), single units near
    // the end, so that the drainers finish together.
    const size_t claimed = next_.load(std::memory_order_relaxed);
    if (claimed >= n) break;
    const size_t size =
        std::clamp<size_t>((n - claimed) / (static_cast<size_t>(most_) * 8), 1, kMaxRun);
    const size_t first = next_.fetch_add(size, std::memory_order_relaxed);
    if (first >= n) break;
    const size_t last = std::min(n, first + size);
    taken.emplace_back(first, last);
    // What the run's units read, fetched together (Unit::touch).
    for (size_t i = first; i < last; ++i) {
      if (const void* held = units_[i].keep.get()) __builtin_prefetch(held);
      for (const void* address : units_[i].touch) {
        if (address != nullptr) __builtin_prefetch(address);
      }
    }
    // Admission first, for the whole run (cheap, never blocking), then the user code.
    bool go[kMaxRun];
    bool any = false;
    for (size_t i = first; i < last; ++i) {
      go[i - first] = units_[i].begin(afters_[i]);
      any = any || go[i - first];
    }
    if (begun_.fetch_add(last - first, std::memory_order_acq_rel) + (last - first) == n) {
      PostAfters();
    }
    if (!any) continue;
    // Into user code, which may be slow: the last drainer still taking units, with units
    // left, has another one join first.
    if (taking_.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
        next_.load(std::memory_order_relaxed) < n) {
      Grow();
    }
    t_deferring = &deferred;
    for (size_t i = first; i < last; ++i) {
      if (go[i - first]) units_[i].run();
    }
    t_deferring = nullptr;
    taking_.fetch_add(1, std::memory_order_acq_rel);
    if (!deferred.empty()) Defer(deferred);
  }
  taking_.fetch_sub(1, std::memory_order_acq_rel);
  Flush();  // every unit has been taken
  // Every unit has been taken: what this drainer's units held (captures, a job's run) goes
  // now, on the control executor, off the way of the units other drainers still start, and
  // not with the batch (a unit of another drainer may be slow, and the owner of one of these
  // may wait to see its own released).
  if (taken.empty()) return;
  control_.Post([self = shared_from_this(), taken = std::move(taken)] {
    for (const auto& [first, last] : taken) {
      for (size_t i = first; i < last; ++i) self->units_[i] = Unit{};
    }
  });
}

void LaunchBoard::Batch::Grow() {
  int started = drainers_.load(std::memory_order_relaxed);
  do {
    if (started >= most_) return;  // as many as the workers' bound: the rest wait their turn
  } while (!drainers_.compare_exchange_weak(started, started + 1, std::memory_order_relaxed));
  taking_.fetch_add(1, std::memory_order_acq_rel);
  workers_.PostUrgent([self = shared_from_this()] { self->Drain(); });
}

void LaunchBoard::Batch::Defer(std::vector<Deferred>& tasks) {
  std::vector<Deferred> ready;
  {
    MutexLock lock(&defer_mu_);
    // Units left (and not flushed): kept. The count is read under the lock Flush sets
    // flushed_ under: a run's ends are either in the list a Flush takes or posted here.
    if (!flushed_ && next_.load(std::memory_order_acquire) < units_.size()) {
      for (auto& t : tasks) deferred_.push_back(std::move(t));
      tasks.clear();
      if (flush_armed_) return;
      flush_armed_ = true;
      lock.Unlock();
      // Once per batch. The batch may be gone by then (every unit taken: flushed already).
      std::weak_ptr<Batch> weak = weak_from_this();
      timer_.ScheduleAt(
          timer_.Now() + kEndHold,
          [weak] {
            if (auto self = weak.lock()) self->Flush();
          },
          &control_, /*standby=*/0);  // nobody waits on the CPU for it
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
