// JobTracing: what the executor posts for one job (ElasticJob's JobFacade
// postJobExecutionEvent / postJobStatusTraceEvent), and ExecutionLog, the per-execution log
// behind ShardingContext::log() when tracing is on. Events are built ahead where the run is
// worked out ahead (prepared triggers), so that an item start only stamps and pushes them.
//
// Thread safety: thread-safe (immutable after construction; ExecutionLog locks its own).
#ifndef ELASTICJOB_TRACING_EVENTS_JOB_TRACING_H_
#define ELASTICJOB_TRACING_EVENTS_JOB_TRACING_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/job_log.h"
#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "tracing/events/event.h"
#include "tracing/events/event_bus.h"

namespace elasticjob::tracing {

// One execution's log lines: numbered, bounded (lines and bytes; a marker line when cut),
// each pushed to the bus as it comes.
class ExecutionLog final : public JobLogSink {
 public:
  ExecutionLog(std::shared_ptr<EventBus> bus, const Uuid& execution_id, Clock& clock)
      : bus_(std::move(bus)), id_(execution_id), clock_(clock) {}
  void Append(LogLevel level, std::string_view line) override;
  // Lines taken so far (the marker included).
  int64_t lines();

 private:
  const std::shared_ptr<EventBus> bus_;
  const Uuid id_;
  Clock& clock_;
  Mutex mu_;
  int64_t lines_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  size_t bytes_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  bool cut_ ELASTICJOB_GUARDED_BY(mu_) = false;
};

class JobTracing {
 public:
  // REQUIRES: `clock` outlives this object.
  JobTracing(std::shared_ptr<EventBus> bus, std::string hostname, std::string ip, Clock& clock)
      : bus_(std::move(bus)), hostname_(std::move(hostname)), ip_(std::move(ip)), clock_(clock) {}

  // What the events of a pass with task id `task_id` share.
  std::shared_ptr<const RunInfo> RunInfoOf(const std::string& job_name,
                                           const std::string& task_id) const;

  // A status event (TASK_STAGING, ...) to push later (PushNow).
  std::unique_ptr<Event> StatusEvent(std::shared_ptr<const RunInfo> run, TraceState state,
                                     std::string message) const;
  // Stamps `event` with the time now and pushes it.
  void PushNow(std::unique_ptr<Event> event) const;
  void PostStatus(std::shared_ptr<const RunInfo> run, TraceState state, std::string message) const {
    PushNow(StatusEvent(std::move(run), state, std::move(message)));
  }

  // One item run's start and end events (a new execution id; the end is filled but for its
  // outcome), and its log for the item's context. Built ahead where the run is (a prepared
  // trigger's), so that the start and the end only stamp and push.
  struct ItemEvents {
    std::unique_ptr<Event> start;
    std::unique_ptr<Event> end;
    std::shared_ptr<ExecutionLog> log;
  };
  ItemEvents MakeItemEvents(std::shared_ptr<const RunInfo> run, int item,
                            ExecutionSource source) const;
  // Pushes `start` stamped `started`.
  void PushStart(std::unique_ptr<Event> start, Clock::WallTime started) const;
  // Pushes `end` (MakeItemEvents'), the run that began at `started` ending now: success, or
  // failure with `error` as the cause.
  void PushEnd(std::unique_ptr<Event> end, Clock::WallTime started, bool success,
               const std::string& error) const;

  EventBus& bus() const { return *bus_; }
  Clock& clock() const { return clock_; }

 private:
  const std::shared_ptr<EventBus> bus_;
  const std::string hostname_;
  const std::string ip_;
  Clock& clock_;
};

// ElasticJob's messages.
std::string StagingMessage(std::string_view job_name);  // "Job 'x' execute begin."
std::string EmptyItemsMessage(std::string_view job_name);
std::string MisfireMessage(std::string_view job_name, const std::vector<int>& items);
// The items' errors as Java's Map.toString: "{0=error, 2=error}".
std::string ItemErrorsMessage(const std::vector<std::pair<int, std::string>>& errors);

// This host's name (gethostname), read once.
const std::string& HostName();

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_EVENTS_JOB_TRACING_H_
