#include "error_handler/notification_sender.h"

#include <fmt/format.h>

#include "infra/log.h"
#include "infra/thread_name.h"

namespace elasticjob::error_handler {

NotificationSender::NotificationSender(size_t capacity) : capacity_(capacity) {}

NotificationSender::~NotificationSender() {
  Stop();
  std::thread thread;
  {
    MutexLock lock(&mu_);
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

NotificationSender& NotificationSender::Shared() {
  // Never destroyed: a job's last message may be queued while the process exits.
  static auto* sender = new NotificationSender();
  return *sender;
}

bool NotificationSender::Post(std::string what, Send send, std::shared_ptr<Logger> logger) {
  {
    MutexLock lock(&mu_);
    if (!stopped_ && queue_.size() < capacity_) {
      queue_.push_back(Message{std::move(what), std::move(send), std::move(logger)});
      if (!thread_.joinable()) {
        thread_ = std::thread([this] {
          infra::NameThisThread("ej-notify");
          Loop();
        });
      }
      cv_.SignalAll();
      return true;
    }
    ++failed_;
  }
  infra::LogLine(logger.get(), "WARN", {},
                 fmt::format("error handler {}: not sent: the notification queue is "
                             "full ({} messages) or stopped",
                             what, capacity_));
  return false;
}

void NotificationSender::Stop() {
  MutexLock lock(&mu_);
  stopped_ = true;
  failed_ += queue_.size();
  queue_.clear();
  cv_.SignalAll();
}

void NotificationSender::WaitIdle() {
  MutexLock lock(&mu_);
  while (!queue_.empty() || busy_) cv_.Wait();
}

size_t NotificationSender::sent() {
  MutexLock lock(&mu_);
  return sent_;
}

size_t NotificationSender::failed() {
  MutexLock lock(&mu_);
  return failed_;
}

void NotificationSender::Loop() {
  MutexLock lock(&mu_);
  for (;;) {
    while (!stopped_ && queue_.empty()) cv_.Wait();
    if (stopped_) return;
    Message m = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.Unlock();
    Status s;
    try {
      s = m.send();
    } catch (const std::exception& e) {
      s = Internal(fmt::format("threw: {}", e.what()));
    } catch (...) {
      s = Internal("threw an unknown exception");
    }
    if (!s.ok()) {
      infra::LogLine(m.logger.get(), "WARN", {},
                     fmt::format("error handler {}: send failed: {}", m.what, s.message()));
    }
    lock.Lock();
    busy_ = false;
    ++(s.ok() ? sent_ : failed_);
    cv_.SignalAll();
  }
}

}  // namespace elasticjob::error_handler
