#include "storage/change_notifier.h"

#include <map>
#include <vector>

namespace elasticjob::storage {

// The asynchronous waits, shared with the tasks that run their attempts.
struct ChangeNotifier::Async : std::enable_shared_from_this<Async> {
  Async(Executor& e, trigger::TimerScheduler& t, Clock& c) : executor(e), timer(t), clock(c) {}

  struct Wait {
    std::shared_ptr<std::function<Result<bool>()>> attempt;
    std::function<void(Status)> done;
    std::string what;
    trigger::TimerScheduler::TaskId timer = 0;
    bool busy = false;   // an attempt is running or queued
    bool again = false;  // a Notify arrived meanwhile: attempt once more
  };

  // Runs wait `id`'s attempt and, unless it finished, another one if a Notify came meanwhile.
  void Attempt(uint64_t id) {
    std::shared_ptr<std::function<Result<bool>()>> attempt;
    {
      MutexLock lock(&mu);
      auto it = waits.find(id);
      if (it == waits.end()) return;
      it->second.again = false;
      attempt = it->second.attempt;
    }
    Result<bool> r = (*attempt)();
    MutexLock lock(&mu);
    auto it = waits.find(id);
    if (it == waits.end()) return;  // timed out or cancelled meanwhile
    if (!r.ok() || *r) {
      Wait w = std::move(it->second);
      waits.erase(it);
      lock.Unlock();
      timer.Cancel(w.timer);
      w.done(r.ok() ? Status::Ok() : r.status());
      return;
    }
    if (it->second.again) {
      Post(id);  // stays busy
    } else {
      it->second.busy = false;
    }
  }

  void Post(uint64_t id) {
    executor.Post([self = shared_from_this(), id] { self->Attempt(id); });
  }

  // Ends wait `id` with `status` if it is still pending.
  void End(uint64_t id, Status status) {
    Wait w;
    {
      MutexLock lock(&mu);
      auto it = waits.find(id);
      if (it == waits.end()) return;
      w = std::move(it->second);
      waits.erase(it);
    }
    timer.Cancel(w.timer);
    w.done(std::move(status));
  }

  Executor& executor;
  trigger::TimerScheduler& timer;
  Clock& clock;
  Mutex mu;
  bool cancelled ELASTICJOB_GUARDED_BY(mu) = false;
  uint64_t next_id ELASTICJOB_GUARDED_BY(mu) = 1;
  std::map<uint64_t, Wait> waits ELASTICJOB_GUARDED_BY(mu);
};

ChangeNotifier::ChangeNotifier(Executor& executor, trigger::TimerScheduler& timer, Clock& clock)
    : async_(std::make_shared<Async>(executor, timer, clock)) {}

void ChangeNotifier::Notify() {
  {
    MutexLock lock(&mu_);
    ++epoch_;
  }
  cv_.SignalAll();
  if (async_ == nullptr) return;
  std::vector<uint64_t> post;
  {
    MutexLock lock(&async_->mu);
    for (auto& [id, w] : async_->waits) {
      if (w.busy) {
        w.again = true;
      } else {
        w.busy = true;
        post.push_back(id);
      }
    }
  }
  for (uint64_t id : post) async_->Post(id);
}

void ChangeNotifier::Cancel() {
  {
    MutexLock lock(&mu_);
    cancelled_ = true;
  }
  cv_.SignalAll();
  if (async_ == nullptr) return;
  std::vector<uint64_t> ids;
  {
    MutexLock lock(&async_->mu);
    async_->cancelled = true;
    for (const auto& [id, w] : async_->waits) ids.push_back(id);
  }
  for (uint64_t id : ids) async_->End(id, Status(StatusCode::kCancelled, "shutting down"));
}

Status ChangeNotifier::WaitUntil(const std::function<Result<bool>()>& condition,
                                 std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    uint64_t seen;
    {
      MutexLock lock(&mu_);
      if (cancelled_) return Status(StatusCode::kCancelled, "shutting down");
      seen = epoch_;
    }
    auto done = condition();
    if (!done.ok()) return done.status();
    if (*done) return Status::Ok();
    MutexLock lock(&mu_);
    while (epoch_ == seen && !cancelled_ && cv_.WaitUntil(deadline)) {
    }
    if (epoch_ == seen && !cancelled_) {
      return Status(StatusCode::kTimeout, "condition not met in time");
    }
  }
}

void ChangeNotifier::WhenTrue(std::function<Result<bool>()> attempt,
                              std::chrono::milliseconds timeout, std::string what,
                              std::function<void(Status)> done) {
  if (async_ == nullptr) {
    Status s = WaitUntil(attempt, timeout);
    if (s.code() == StatusCode::kTimeout) s = Status(StatusCode::kTimeout, what + ": timed out");
    return done(s);
  }
  uint64_t id;
  {
    MutexLock lock(&async_->mu);
    if (async_->cancelled) return done(Status(StatusCode::kCancelled, "shutting down"));
    id = async_->next_id++;
    Async::Wait& w = async_->waits[id];
    w.attempt = std::make_shared<std::function<Result<bool>()>>(std::move(attempt));
    w.done = std::move(done);
    w.what = std::move(what);
    w.busy = true;  // the first attempt runs here, now
  }
  async_->Attempt(id);  // most waits end here, with no timer armed
  MutexLock lock(&async_->mu);
  auto it = async_->waits.find(id);
  if (it == async_->waits.end()) return;
  it->second.timer = async_->timer.ScheduleAt(
      async_->clock.WallNow() + timeout,
      [a = async_, id, what = it->second.what] {
        a->End(id, Status(StatusCode::kTimeout, what + ": timed out"));
      },
      nullptr, trigger::TimerScheduler::kRelaxed);  // a timeout: nothing waits on the CPU
}

}  // namespace elasticjob::storage
