#include "elasticjob/api/cancellation.h"

#include <utility>

namespace elasticjob {

std::string Cancellation::reason() const {
  MutexLock lock(&mu_);
  return reason_;
}

void Cancellation::Request(std::string reason) {
  MutexLock lock(&mu_);
  if (requested_.load(std::memory_order_relaxed)) return;
  reason_ = std::move(reason);
  requested_.store(true, std::memory_order_release);
  for (auto& [id, callback] : callbacks_) callback();
  callbacks_.clear();
}

void Cancellation::RequestGraceful(std::string reason, std::chrono::milliseconds grace) {
  MutexLock lock(&mu_);
  if (requested_.load(std::memory_order_relaxed)) return;
  reason_ = std::move(reason);
  grace_ms_.store(grace.count(), std::memory_order_release);
  requested_.store(true, std::memory_order_release);
  for (auto& [id, callback] : callbacks_) callback();
  callbacks_.clear();
}

uint64_t Cancellation::OnRequest(std::function<void()> callback) {
  MutexLock lock(&mu_);
  if (requested_.load(std::memory_order_relaxed)) {
    callback();
    return 0;
  }
  const uint64_t id = next_id_++;
  callbacks_.emplace(id, std::move(callback));
  return id;
}

void Cancellation::Unregister(uint64_t id) {
  MutexLock lock(&mu_);
  callbacks_.erase(id);
}

}  // namespace elasticjob
