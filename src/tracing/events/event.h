// The tracing bus's unit: one event (an item run's start or end, a trigger step, a log line,
// or a flush marker), allocated by its poster and owned by the bus once pushed. What a run's
// events share (job, task id, host) is one RunInfo they point to, so that an event costs one
// allocation and no string copies.
#ifndef ELASTICJOB_TRACING_EVENTS_EVENT_H_
#define ELASTICJOB_TRACING_EVENTS_EVENT_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "elasticjob/tracing/job_event.h"

namespace elasticjob::tracing {

// A UUID's 36 characters (version 4, random).
using Uuid = std::array<char, 36>;
Uuid NewUuid();
inline std::string_view UuidText(const Uuid& id) { return {id.data(), id.size()}; }

// What the events of one pass of one trigger share.
struct RunInfo {
  std::string job_name;
  std::string task_id;
  std::string hostname;
  std::string ip;
  std::string slave_id;        // the task id's fourth part
  std::string execution_type;  // the task id's third part ("READY")
  std::string items_text;      // "[0, 1]"
};

// Builds the RunInfo of `task_id` (ElasticJob's TaskContext.from).
std::shared_ptr<const RunInfo> MakeRunInfo(std::string job_name, std::string task_id,
                                           std::string hostname, std::string ip);

// Waits for the writer to reach a flush marker.
struct FlushWaiter {
  Mutex mu;
  CondVar cv{&mu};
  bool done ELASTICJOB_GUARDED_BY(mu) = false;
};

// What an item's start and end write (the time stamps, the link, the outcome) is on the
// first cache line, the rest after: at a fire time the start touches one line per event,
// the one the launch fetched ahead (trigger/launch_board.h, Unit::touch).
struct alignas(64) Event {
  enum class Kind : uint8_t { kExecutionStart, kExecutionEnd, kStatus, kLogLine, kFlush };
  Event* next = nullptr;       // the bus's link
  Clock::WallTime time{};      // start, creation, log time
  Clock::WallTime complete{};  // end
  Clock::WallTime start{};     // end: the run's start, should the start row be missing
  int64_t line_no = 0;         // log line
  int item = 0;                // start, end
  Kind kind = Kind::kStatus;
  bool success = false;  // end
  ExecutionSource source = ExecutionSource::kNormalTrigger;
  TraceState state = TraceState::kTaskStaging;
  LogLevel level = LogLevel::kInfo;
  Uuid id{};                           // the execution's (start, end, log line) or the status row's
  std::shared_ptr<const RunInfo> run;  // start, end, status
  std::string text;                    // failure cause, message or log line
  std::shared_ptr<FlushWaiter> flush;  // kFlush
};

// "2026-11-25 14:20:00.123" (UTC), what the tables hold.
std::string FormatTimestamp(Clock::WallTime t);
// Reads FormatTimestamp's text back (also without the fraction, or with 'T', or with up to
// nine fraction digits); INVALID_ARGUMENT otherwise.
Result<Clock::WallTime> ParseTimestamp(std::string_view text);

// Cuts `s` to at most `max` bytes, not inside a UTF-8 sequence.
std::string Truncate(std::string s, size_t max);

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_EVENTS_EVENT_H_
