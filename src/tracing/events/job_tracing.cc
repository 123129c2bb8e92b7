#include "tracing/events/job_tracing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

namespace elasticjob::tracing {

void ExecutionLog::Append(LogLevel level, std::string_view line) {
  const TracingConfiguration& config = bus_->config();
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kLogLine;
  e->id = id_;
  e->time = clock_.WallNow();
  {
    MutexLock lock(&mu_);
    if (cut_) return;
    if (static_cast<size_t>(lines_) + 1 >= config.log_line_limit ||
        bytes_ + line.size() > config.log_byte_limit) {
      // The last line an execution may take says why the rest is missing.
      cut_ = true;
      e->level = LogLevel::kWarn;
      e->text = fmt::format(
          "[log cut: this execution reached its limit of {} lines or {} bytes; "
          "later lines are not kept]",
          config.log_line_limit, config.log_byte_limit);
    } else {
      e->level = level;
      e->text = std::string(line);
      bytes_ += line.size();
    }
    e->line_no = ++lines_;
  }
  bus_->Push(std::move(e));
}

int64_t ExecutionLog::lines() {
  MutexLock lock(&mu_);
  return lines_;
}

std::shared_ptr<const RunInfo> JobTracing::RunInfoOf(const std::string& job_name,
                                                     const std::string& task_id) const {
  return MakeRunInfo(job_name, task_id, hostname_, ip_);
}

std::unique_ptr<Event> JobTracing::StatusEvent(std::shared_ptr<const RunInfo> run, TraceState state,
                                               std::string message) const {
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kStatus;
  e->id = NewUuid();
  e->run = std::move(run);
  e->state = state;
  e->text = std::move(message);
  return e;
}

void JobTracing::PushNow(std::unique_ptr<Event> event) const {
  event->time = clock_.WallNow();
  bus_->Push(std::move(event));
}

JobTracing::ItemEvents JobTracing::MakeItemEvents(std::shared_ptr<const RunInfo> run, int item,
                                                  ExecutionSource source) const {
  ItemEvents s;
  s.start = std::make_unique<Event>();
  s.start->kind = Event::Kind::kExecutionStart;
  s.start->id = NewUuid();
  s.start->item = item;
  s.start->source = source;
  s.end = std::make_unique<Event>();
  s.end->kind = Event::Kind::kExecutionEnd;
  s.end->id = s.start->id;
  s.end->run = run;
  s.end->item = item;
  s.end->source = source;
  s.start->run = std::move(run);
  s.log = std::make_shared<ExecutionLog>(bus_, s.start->id, clock_);
  return s;
}

void JobTracing::PushStart(std::unique_ptr<Event> start, Clock::WallTime started) const {
  start->time = started;
  bus_->Push(std::move(start));
}

void JobTracing::PushEnd(std::unique_ptr<Event> end, Clock::WallTime started, bool success,
                         const std::string& error) const {
  end->start = started;
  end->time = started;
  end->complete = clock_.WallNow();
  end->success = success;
  if (!success) end->text = error;
  bus_->Push(std::move(end));
}

std::string StagingMessage(std::string_view job_name) {
  return fmt::format("Job '{}' execute begin.", job_name);
}

std::string EmptyItemsMessage(std::string_view job_name) {
  return fmt::format("Sharding item for job '{}' is empty.", job_name);
}

std::string MisfireMessage(std::string_view job_name, const std::vector<int>& items) {
  return fmt::format(
      "Previous job '{}' - shardingItems '[{}]' is still running, misfired job will start "
      "after previous job completed.",
      job_name, fmt::join(items, ", "));
}

std::string ItemErrorsMessage(const std::vector<std::pair<int, std::string>>& errors) {
  std::string out = "{";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{}={}", errors[i].first, errors[i].second);
  }
  out += '}';
  return out;
}

const std::string& HostName() {
  static const std::string name = [] {
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string("localhost");
    return std::string(buf);
  }();
  return name;
}

}  // namespace elasticjob::tracing
