#include "console/event_hub.h"

#include <nlohmann/json.hpp>

namespace elasticjob::console {
namespace {

constexpr size_t kMaxQueued = 1000;

std::string SseText(const std::string& event, const std::string& data) {
  return "event: " + event + "\ndata: " + data + "\n\n";
}

}  // namespace

EventHub::EventHub(Options options, PollCallback poll)
    : options_(options), poll_(std::move(poll)), thread_([this] { Loop(); }) {}

EventHub::~EventHub() { Stop(); }

std::optional<std::string> EventHub::Stream::Next() {
  MutexLock lock(&hub_.mu_);
  const auto ping_at = std::chrono::steady_clock::now() + hub_.options_.ping_interval;
  while (!closed_ && queue_.empty() && hub_.cv_.WaitUntil(ping_at)) {
  }
  if (closed_) return std::nullopt;
  if (queue_.empty()) return std::string(": ping\n\n");
  std::string text;
  while (!queue_.empty()) {
    text += queue_.front();
    queue_.pop_front();
  }
  return text;
}

std::shared_ptr<EventHub::Stream> EventHub::Connect() {
  MutexLock lock(&mu_);
  if (stopping_ || streams_.size() >= static_cast<size_t>(options_.max_clients)) return nullptr;
  std::shared_ptr<Stream> stream(new Stream(*this));
  // The browser's EventSource reconnects after 2 s when the stream ends.
  stream->queue_.push_back("retry: 2000\n: connected\n\n");
  streams_.insert(stream);
  cv_.SignalAll();  // the poll starts with the first stream
  return stream;
}

void EventHub::Disconnect(const std::shared_ptr<Stream>& stream) {
  MutexLock lock(&mu_);
  stream->closed_ = true;
  streams_.erase(stream);
}

size_t EventHub::streams() {
  MutexLock lock(&mu_);
  return streams_.size();
}

void EventHub::JobChanged(int registry, const std::string& job) {
  MutexLock lock(&mu_);
  if (streams_.empty()) return;  // nobody to tell
  auto key = std::make_pair(registry, job);
  if (pending_.count(key) != 0) return;  // already due: one event covers both changes
  pending_.emplace(std::move(key), std::chrono::steady_clock::now() + options_.debounce);
  cv_.SignalAll();
}

void EventHub::Publish(const std::string& event, const std::string& json_data) {
  MutexLock lock(&mu_);
  BroadcastLocked(SseText(event, json_data));
}

void EventHub::BroadcastLocked(const std::string& text) {
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& s = **it;
    if (s.queue_.size() >= kMaxQueued) {  // not reading: closed, it reconnects and refetches
      s.closed_ = true;
      it = streams_.erase(it);
      continue;
    }
    s.queue_.push_back(text);
    ++it;
  }
  cv_.SignalAll();
}

void EventHub::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    for (const auto& s : streams_) s->closed_ = true;
    streams_.clear();
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void EventHub::Loop() {
  auto next_poll = std::chrono::steady_clock::now();
  MutexLock lock(&mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    // Due job events.
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      if (it->first.second.empty()) {
        BroadcastLocked(SseText("jobs", nlohmann::json({{"registry", it->first.first}}).dump()));
      } else {
        nlohmann::json data = {{"registry", it->first.first}, {"job", it->first.second}};
        BroadcastLocked(SseText("job", data.dump()));
      }
      it = pending_.erase(it);
    }
    // The tracing poll, only while someone listens.
    if (poll_ && !streams_.empty() && now >= next_poll) {
      next_poll = now + options_.poll_interval;
      lock.Unlock();
      poll_(*this);
      lock.Lock();
      continue;
    }
    auto wake = std::chrono::steady_clock::time_point::max();
    for (const auto& [key, due] : pending_) wake = std::min(wake, due);
    if (poll_ && !streams_.empty()) wake = std::min(wake, next_poll);
    if (wake == std::chrono::steady_clock::time_point::max()) {
      cv_.Wait();
    } else {
      cv_.WaitUntil(wake);
    }
  }
}

}  // namespace elasticjob::console
