// EventBus: the Tracer behind Tracer::Open. Posters push events onto lock-free stacks
// (one compare-and-swap; the writer takes each stack whole and restores its order), so a
// post never waits for a lock, a database or the writer. The stacks are sharded: a thread
// pushes onto a shard of its own (threads share one only past kShards), so the threads that
// launch jobs at the same fire time do not pass one cache line back and forth; an
// execution's log lines all go to the shard of its id, so they are written in the order
// they were pushed. Events of different shards may be written in either order (every
// statement is idempotent and order-free: a start leaves an end's row, docs/tracing.md). One writer
// thread, at nice 10 (below the jobs' threads), drains it into its queue (bounded: beyond
// queue_capacity the oldest are dropped) and writes batches of up to batch_size events, one
// transaction each. Woken from idle by a post, it waits batch_delay first, so that a burst of
// triggers is written after the burst, together. While the database is unreachable it retries with
// doubling backoff (100 ms up to max_backoff); the posts of a wait are drained and the bound
// applied after it (so the queue may pass its bound by one wait's posts). Drops are counted
// and logged once per episode (when it starts, and its count when it ends). A post wakes the
// writer only when it sleeps idle (one flag read otherwise); a Flush cuts batch_delay short.
//
// Thread safety: thread-safe. The destructor shuts down (flush bounded by
// shutdown_timeout).
#ifndef ELASTICJOB_TRACING_EVENTS_EVENT_BUS_H_
#define ELASTICJOB_TRACING_EVENTS_EVENT_BUS_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "elasticjob/tracing/tracer.h"
#include "tracing/events/event.h"
#include "tracing/events/event_sink.h"
#include "tracing/events/tracing_url.h"

namespace elasticjob::tracing {

class EventBus final : public Tracer {
 public:
  // Opens the sink the writer writes to, again after a failed write: Tracer::Open gives the
  // database of `url` (tracing/tracing_storage.h); a test may give its own (a database that
  // fails on command). REQUIRES: `opener` is not empty.
  using Opener = std::function<Result<std::unique_ptr<EventSink>>()>;
  EventBus(TracingConfiguration config, TracingUrl url, Opener opener);
  ~EventBus() override;
  EventBus(const EventBus&) = delete;
  EventBus& operator=(const EventBus&) = delete;

  // Pushes `event` (owned by the bus from now on). Never blocks.
  void Push(std::unique_ptr<Event> event);
  // Pushes `older`, then `newer`, at the cost of one push. REQUIRES: neither is a log line.
  void Push(std::unique_ptr<Event> older, std::unique_ptr<Event> newer);

  void Post(JobExecutionEvent event) override;
  void Post(JobStatusTraceEvent event) override;
  void Post(JobLogLine line) override;
  Status Flush(std::chrono::milliseconds timeout) override;
  Status Shutdown(std::chrono::milliseconds timeout) override;
  TracerStats stats() override;
  uint64_t dropped() override { return dropped_.load(std::memory_order_relaxed); }
  std::string redacted_url() const override { return url_.redacted; }

  const TracingConfiguration& config() const { return config_; }

 private:
  void Run();
  // Takes what was pushed, in push order, onto queue_; trims it to the capacity.
  void Drain();
  void Trim();
  // Sleeps until a push (when `wake_on_push`), a stop, or `deadline`.
  void Sleep(std::chrono::steady_clock::time_point deadline, bool wake_on_push);
  // Completes the flush markers at the queue's head.
  void CompleteFlushes();
  void Delete(Event* e);
  // Removes and deletes the queue's first event.
  void PopFront();
  size_t Events() const { return queue_.size() - flush_markers_; }

  const TracingConfiguration config_;
  const TracingUrl url_;
  const Opener opener_;

  Mutex mu_;  // the writer's sleep, and stats
  CondVar cv_{&mu_};
  bool stop_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool flush_requested_ ELASTICJOB_GUARDED_BY(mu_) = false;  // a Flush waits
  std::string last_error_ ELASTICJOB_GUARDED_BY(mu_);
  Mutex shutdown_mu_;  // one Shutdown at a time
  bool shut_down_ ELASTICJOB_GUARDED_BY(shutdown_mu_) = false;

  // The posters' stacks (newest first), each on its own cache line; taken whole by the
  // writer.
  static constexpr size_t kShards = 8;
  struct alignas(64) Shard {
    std::atomic<Event*> head{nullptr};
  };
  Shard shards_[kShards];
  // The shard `e` goes to.
  static size_t ShardOf(const Event& e);
  // Pushes the events from `newest` down its links to `oldest` onto shard `shard`.
  void PushChain(size_t shard, Event* newest, Event* oldest);
  // Takes every shard's stack (the writer; Shutdown); appends each, oldest first, to `out`.
  void TakeAll(std::vector<Event*>& out, size_t* flush_markers);
  // The writer sleeps (waiting for a post): the next post wakes it.
  std::atomic<bool> sleeping_{false};
  // Posts refused from now on (after Shutdown).
  std::atomic<bool> closed_{false};
  // Counters (read by stats() from any thread).
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> pending_{0};
  std::atomic<uint64_t> retries_{0};

  // The writer's own.
  std::deque<Event*> queue_;
  size_t flush_markers_ = 0;  // kFlush events in queue_ (they count for nothing)
  std::unique_ptr<EventSink> storage_;
  bool dropping_ = false;         // a drop episode is going on
  uint64_t episode_dropped_ = 0;  // in it
  bool failing_ = false;          // the database is failing (logged once)

  std::thread writer_;  // last: starts once the rest is built
};

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_EVENTS_EVENT_BUS_H_
