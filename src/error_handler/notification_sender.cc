#include "error_handler/notification_sender.h"

#include <fmt/format.h>

#include "infra/log.h"

namespace elasticjob::error_handler {

NotificationSender::NotificationSender(size_t capacity)
    : capacity_(capacity), thread_([this] { Loop(); }) {}

NotificationSender::~NotificationSender() {
  Stop();
  thread_.join();
}

NotificationSender& NotificationSender::Shared() {
  // Never destroyed: a job's last message may be queued while the process exits.
  static auto* sender = new NotificationSender();
  return *sender;
}

bool NotificationSender::Post(std::string what, Send send) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_ && queue_.size() < capacity_) {
      queue_.push_back(Message{std::move(what), std::move(send)});
      cv_.notify_all();
      return true;
    }
    ++failed_;
  }
  infra::LogLine("WARN", fmt::format("error handler {}: not sent: the notification queue is "
                                     "full ({} messages) or stopped",
                                     what, capacity_));
  return false;
}

void NotificationSender::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  failed_ += queue_.size();
  queue_.clear();
  cv_.notify_all();
}

void NotificationSender::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

size_t NotificationSender::sent() {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

size_t NotificationSender::failed() {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

void NotificationSender::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
    if (stopped_) return;
    Message m = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Status s;
    try {
      s = m.send();
    } catch (const std::exception& e) {
      s = Internal(fmt::format("threw: {}", e.what()));
    } catch (...) {
      s = Internal("threw an unknown exception");
    }
    if (!s.ok()) {
      infra::LogLine("WARN", fmt::format("error handler {}: send failed: {}", m.what, s.message()));
    }
    lock.lock();
    busy_ = false;
    ++(s.ok() ? sent_ : failed_);
    cv_.notify_all();
  }
}

}  // namespace elasticjob::error_handler
