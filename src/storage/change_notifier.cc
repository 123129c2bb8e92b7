#include "storage/change_notifier.h"

namespace elasticjob::storage {

void ChangeNotifier::Notify() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++epoch_;
  }
  cv_.notify_all();
}

void ChangeNotifier::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

Status ChangeNotifier::WaitUntil(const std::function<Result<bool>()>& condition,
                                 std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    uint64_t seen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_) return Status(StatusCode::kCancelled, "shutting down");
      seen = epoch_;
    }
    auto done = condition();
    if (!done.ok()) return done.status();
    if (*done) return Status::Ok();
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_until(lock, deadline, [&] { return epoch_ != seen || cancelled_; })) {
      return Status(StatusCode::kTimeout, "condition not met in time");
    }
  }
}

}  // namespace elasticjob::storage
