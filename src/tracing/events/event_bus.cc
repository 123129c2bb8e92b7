#include "tracing/events/event_bus.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "infra/log.h"

namespace elasticjob::tracing {

namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};

Uuid IdOf(const std::string& id) {
  if (id.size() != std::tuple_size_v<Uuid>) return NewUuid();
  Uuid out;
  std::memcpy(out.data(), id.data(), out.size());
  return out;
}

}  // namespace

EventBus::EventBus(TracingConfiguration config, TracingUrl url, Opener opener)
    : config_(std::move(config)),
      url_(std::move(url)),
      opener_(std::move(opener)),
      writer_([this] { Run(); }) {}

EventBus::~EventBus() { (void)Shutdown(config_.shutdown_timeout); }

void EventBus::Push(std::unique_ptr<Event> event) {
  if (closed_.load(std::memory_order_acquire)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Event* e = event.release();
  PushChain(ShardOf(*e), e, e);
}

void EventBus::Push(std::unique_ptr<Event> older, std::unique_ptr<Event> newer) {
  if (closed_.load(std::memory_order_acquire)) {
    dropped_.fetch_add(2, std::memory_order_relaxed);
    return;
  }
  Event* oldest = older.release();
  Event* newest = newer.release();
  newest->next = oldest;
  PushChain(ShardOf(*newest), newest, oldest);
}

void EventBus::PushChain(size_t shard, Event* newest, Event* oldest) {
  std::atomic<Event*>& head = shards_[shard].head;
  Event* old = head.load(std::memory_order_relaxed);
  do {
    oldest->next = old;
  } while (!head.compare_exchange_weak(old, newest, std::memory_order_seq_cst,
                                       std::memory_order_relaxed));
  // The writer set the flag before it last looked at the shards: one of the two sees the
  // other.
  if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(false)) {
    MutexLock lock(&mu_);
    cv_.Signal();
  }
}

size_t EventBus::ShardOf(const Event& e) {
  if (e.kind == Event::Kind::kLogLine) {
    // One execution's lines in one stack: written in the order pushed.
    return (static_cast<unsigned char>(e.id[0]) + static_cast<unsigned char>(e.id[1])) % kShards;
  }
  static std::atomic<size_t> next{0};
  thread_local const size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return mine;
}

void EventBus::TakeAll(std::vector<Event*>& out, size_t* flush_markers) {
  for (Shard& shard : shards_) {
    Event* taken = shard.head.exchange(nullptr, std::memory_order_acquire);
    const size_t first = out.size();
    for (Event* e = taken; e != nullptr; e = e->next) {
      out.push_back(e);
      if (e->kind == Event::Kind::kFlush) ++*flush_markers;
    }
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());  // oldest first
  }
}

void EventBus::Post(JobExecutionEvent event) {
  auto e = std::make_unique<Event>();
  e->kind = event.complete_time ? Event::Kind::kExecutionEnd : Event::Kind::kExecutionStart;
  e->id = IdOf(event.id);
  e->run = MakeRunInfo(std::move(event.job_name), std::move(event.task_id),
                       std::move(event.hostname), std::move(event.ip));
  e->item = event.sharding_item;
  e->source = event.source;
  e->time = event.start_time;
  e->start = event.start_time;
  e->complete = event.complete_time.value_or(Clock::WallTime{});
  e->success = event.success;
  e->text = std::move(event.failure_cause);
  Push(std::move(e));
}

void EventBus::Post(JobStatusTraceEvent event) {
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kStatus;
  e->id = IdOf(event.id);
  auto info = std::make_shared<RunInfo>();
  info->job_name = std::move(event.job_name);
  info->task_id = std::move(event.task_id);
  info->slave_id = std::move(event.slave_id);
  info->execution_type = std::move(event.execution_type);
  info->items_text = std::move(event.sharding_items);
  e->run = std::move(info);
  e->state = event.state;
  e->text = std::move(event.message);
  e->time = event.creation_time;
  Push(std::move(e));
}

void EventBus::Post(JobLogLine line) {
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kLogLine;
  e->id = IdOf(line.execution_id);
  e->line_no = line.line_no;
  e->time = line.time;
  e->level = line.level;
  e->text = std::move(line.text);
  Push(std::move(e));
}

Status EventBus::Flush(std::chrono::milliseconds timeout) {
  if (closed_.load()) return Status::Ok();
  auto waiter = std::make_shared<FlushWaiter>();
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kFlush;
  e->flush = waiter;
  Push(std::move(e));
  {
    MutexLock lock(&mu_);
    flush_requested_ = true;  // cuts the writer's batch_delay short
  }
  cv_.SignalAll();
  {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(&waiter->mu);
    while (!waiter->done && waiter->cv.WaitUntil(deadline)) {
    }
    if (waiter->done) return Status::Ok();
  }
  TracerStats s = stats();
  return Status(StatusCode::kTimeout,
                fmt::format("tracing ({}): {} events not written after {} ms{}", url_.redacted,
                            s.pending, timeout.count(),
                            s.last_error.empty() ? "" : " (last error: " + s.last_error + ")"));
}

Status EventBus::Shutdown(std::chrono::milliseconds timeout) {
  MutexLock once(&shutdown_mu_);
  if (shut_down_) return Status::Ok();
  shut_down_ = true;
  Status flushed = Flush(timeout);
  closed_.store(true, std::memory_order_release);
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (writer_.joinable()) writer_.join();
  // A post that passed the closed_ check as it was set: dropped here, not leaked.
  std::vector<Event*> late;
  size_t markers = 0;
  TakeAll(late, &markers);
  for (Event* e : late) {
    if (e->kind != Event::Kind::kFlush) dropped_.fetch_add(1, std::memory_order_relaxed);
    Delete(e);
  }
  return flushed;
}

TracerStats EventBus::stats() {
  TracerStats s;
  s.written = written_.load();
  s.dropped = dropped_.load();
  s.pending = pending_.load();
  s.retries = retries_.load();
  MutexLock lock(&mu_);
  s.last_error = last_error_;
  return s;
}

void EventBus::Delete(Event* e) {
  if (e->flush != nullptr) {
    MutexLock lock(&e->flush->mu);
    e->flush->done = true;
    e->flush->cv.SignalAll();
  }
  delete e;
}

void EventBus::Drain() {
  std::vector<Event*> taken;
  size_t markers = 0;
  TakeAll(taken, &markers);
  if (taken.empty()) return;
  if (markers > 0) {
    // A flush marker completes once everything posted before it is written. An event of
    // another shard posted before the Flush may have missed the pass that found the marker;
    // the next pass sees it (the marker's push came after it). A marker found by that pass
    // has the same need, so passes go on until one finds no new marker (each Flush waits for
    // its marker, so there are at most as many as flushing threads): the markers go last.
    for (size_t seen = 0; seen != markers;) {
      seen = markers;
      TakeAll(taken, &markers);
    }
    auto is_marker = [](const Event* e) { return e->kind == Event::Kind::kFlush; };
    std::stable_partition(taken.begin(), taken.end(), [&](Event* e) { return !is_marker(e); });
  }
  flush_markers_ += markers;
  queue_.insert(queue_.end(), taken.begin(), taken.end());
  Trim();
  pending_.store(Events(), std::memory_order_relaxed);
}

void EventBus::PopFront() {
  Event* e = queue_.front();
  queue_.pop_front();
  if (e->kind == Event::Kind::kFlush) --flush_markers_;
  Delete(e);
}

void EventBus::Trim() {
  while (Events() > config_.queue_capacity) {
    Event* e = queue_.front();
    if (e->kind != Event::Kind::kFlush) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      ++episode_dropped_;
      if (!dropping_) {
        dropping_ = true;
        infra::LogLine(config_.logger.get(), "WARN", {},
                       fmt::format("tracing ({}): the queue is full ({} events): the "
                                   "oldest events are dropped until the database "
                                   "catches up",
                                   url_.redacted, config_.queue_capacity));
      }
    }
    PopFront();
  }
}

void EventBus::CompleteFlushes() {
  while (!queue_.empty() && queue_.front()->kind == Event::Kind::kFlush) PopFront();
  pending_.store(Events(), std::memory_order_relaxed);
}

void EventBus::Sleep(std::chrono::steady_clock::time_point deadline, bool wake_on_push) {
  if (wake_on_push) {
    sleeping_.store(true, std::memory_order_seq_cst);
    for (const Shard& shard : shards_) {
      if (shard.head.load(std::memory_order_seq_cst) != nullptr) {
        sleeping_.store(false);
        return;
      }
    }
  }
  MutexLock lock(&mu_);
  while (!stop_ && !flush_requested_ &&
         !(wake_on_push && !sleeping_.load(std::memory_order_seq_cst)) && cv_.WaitUntil(deadline)) {
  }
  sleeping_.store(false);
}

void EventBus::Run() {
  // Below the trigger and item threads: at a fire time the jobs' starts come first, the
  // writing after (Linux's nice is per thread). In a process run at a real-time priority
  // (chrt), the writer leaves it: it would not yield to the job threads it inherited it from.
  int policy = 0;
  sched_param param{};
  if (pthread_getschedparam(pthread_self(), &policy, &param) == 0 &&
      (policy == SCHED_FIFO || policy == SCHED_RR)) {
    param.sched_priority = 0;
    (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
  }
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  std::chrono::milliseconds backoff = kFirstBackoff;
  std::vector<Event*> batch;
  auto failed = [&](const Status& s) {
    retries_.fetch_add(1, std::memory_order_relaxed);
    {
      MutexLock lock(&mu_);
      last_error_ = s.message();
    }
    if (!failing_) {
      failing_ = true;
      infra::LogLine(config_.logger.get(), "WARN", {},
                     fmt::format("tracing ({}): {}; retrying (events wait in the queue, "
                                 "up to {})",
                                 url_.redacted, s.message(), config_.queue_capacity));
    }
  };
  while (true) {
    bool stopping = false;
    {
      MutexLock lock(&mu_);
      stopping = stop_;
      flush_requested_ = false;  // a marker pushed before it is drained now
    }
    Drain();
    CompleteFlushes();
    if (queue_.empty()) {
      if (stopping) break;
      Sleep(std::chrono::steady_clock::now() + std::chrono::hours(24), /*wake_on_push=*/true);
      // Woken by a post: the rest of its burst first (a flush or a stop cuts it short).
      if (config_.batch_delay.count() > 0) {
        Sleep(std::chrono::steady_clock::now() + config_.batch_delay, /*wake_on_push=*/false);
      }
      continue;
    }
    if (storage_ == nullptr) {
      auto opened = opener_();
      if (!opened.ok()) {
        failed(opened.status());
        if (stopping) break;
        // Not woken by posts (a wake per post would cost the posters a system call each):
        // what they post meanwhile is drained, and the bound applied, after the wait.
        Sleep(std::chrono::steady_clock::now() + backoff, /*wake_on_push=*/false);
        backoff = std::min(backoff * 2, config_.max_backoff);
        continue;
      }
      storage_ = std::move(opened).value();
    }
    batch.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(
                                                      std::min(queue_.size(), config_.batch_size)));
    EventSink::WriteResult r = storage_->Write(batch);
    if (r.status.ok()) {
      // Counted before the batch's flush markers complete: a Flush that returns sees its
      // events in stats().
      uint64_t events = 0;
      for (const Event* e : batch) events += e->kind != Event::Kind::kFlush ? 1 : 0;
      written_.fetch_add(events, std::memory_order_relaxed);
      pending_.store(Events() - events, std::memory_order_relaxed);
      for (size_t i = 0; i < batch.size(); ++i) PopFront();
      backoff = kFirstBackoff;
      if (failing_) {
        failing_ = false;
        infra::LogLine(config_.logger.get(), "INFO", {},
                       fmt::format("tracing ({}): writing again", url_.redacted));
      }
      if (dropping_ && Events() <= config_.queue_capacity / 2) {
        dropping_ = false;
        infra::LogLine(config_.logger.get(), "WARN", {},
                       fmt::format("tracing ({}): {} events were dropped (queue full); "
                                   "{} in all",
                                   url_.redacted, episode_dropped_, dropped_.load()));
        episode_dropped_ = 0;
      }
      continue;
    }
    if (r.refused.has_value()) {
      // The database refuses this one event (not the connection): it goes, the rest stays.
      Event* e = batch[*r.refused];
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(*r.refused));
      dropped_.fetch_add(1, std::memory_order_relaxed);
      infra::LogLine(config_.logger.get(), "WARN", {},
                     fmt::format("tracing ({}): an event was refused and dropped: {}",
                                 url_.redacted, r.status.message()));
      Delete(e);
      continue;
    }
    failed(r.status);
    storage_.reset();  // a new connection next time
    if (stopping) break;
    Sleep(std::chrono::steady_clock::now() + backoff, /*wake_on_push=*/false);
    backoff = std::min(backoff * 2, config_.max_backoff);
  }
  // Stopped: what is left (the database unreachable at shutdown, or late posts) is lost.
  Drain();
  uint64_t lost = 0;
  while (!queue_.empty()) {
    if (queue_.front()->kind != Event::Kind::kFlush) ++lost;
    PopFront();
  }
  pending_.store(0);
  if (lost > 0) {
    dropped_.fetch_add(lost);
    infra::LogLine(
        config_.logger.get(), "WARN", {},
        fmt::format("tracing ({}): {} events not written at shutdown", url_.redacted, lost));
  }
}

}  // namespace elasticjob::tracing
