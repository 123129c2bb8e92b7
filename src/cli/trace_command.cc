// `elasticjob trace executions|status|logs`: reads back what event tracing wrote
// (docs/tracing.md): item runs, trigger steps, an execution's log lines. Tables for people,
// --json for scripts; exit 2 on bad usage, 1 when the database cannot be read (with the
// reason).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/output.h"
#include "elasticjob/tracing/trace_reader.h"
#include "tracing/events/event.h"
#include "tracing/events/tracing_url.h"

namespace elasticjob::cli {
namespace {

struct TraceOptions {
  std::string tracing;
  bool json = false;
  std::string job;
  std::optional<int> item;
  std::string since;
  std::string until;
  bool failed = false;
  size_t limit = 100;
  size_t offset = 0;
  std::string task;
  std::string execution_id;
  bool follow = false;
};

std::string Time(Clock::WallTime t) { return tracing::FormatTimestamp(t); }

// Opens the reader, or prints why not and returns the exit code.
Result<std::unique_ptr<TraceReader>> OpenReader(const TraceOptions& o, int* exit_code) {
  if (o.tracing.empty()) {
    std::cerr << "elasticjob trace: --tracing URL (or ELASTICJOB_TRACING) is required\n";
    *exit_code = kExitBadInput;
    return InvalidArgument("no URL");
  }
  auto reader = TraceReader::Open(o.tracing);
  if (!reader.ok()) {
    std::cerr << "elasticjob trace: " << reader.status().message() << "\n";
    *exit_code =
        reader.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailed;
  }
  return reader;
}

// --since/--until: a time, or an error printed (exit 2).
bool ParseTimes(const TraceOptions& o, std::optional<Clock::WallTime>* since,
                std::optional<Clock::WallTime>* until) {
  for (auto [flag, text, out] :
       {std::tuple{"--since", &o.since, since}, std::tuple{"--until", &o.until, until}}) {
    if (text->empty()) continue;
    auto t = tracing::ParseTimestamp(*text);
    if (!t.ok()) {
      std::cerr << "elasticjob trace: " << flag << ": " << t.status().message() << "\n";
      return false;
    }
    *out = *t;
  }
  return true;
}

int Failed(const Status& s) {
  std::cerr << "elasticjob trace: " << s.message() << "\n";
  return kExitFailed;
}

int Executions(const TraceOptions& o) {
  ExecutionQuery q;
  if (!ParseTimes(o, &q.since, &q.until)) return kExitBadInput;
  int code = kExitOk;
  auto reader = OpenReader(o, &code);
  if (!reader.ok()) return code;
  if (!o.job.empty()) q.job_name = o.job;
  q.sharding_item = o.item;
  q.failed_only = o.failed;
  q.limit = o.limit;
  q.offset = o.offset;
  auto runs = (*reader)->Executions(q);
  if (!runs.ok()) return Failed(runs.status());
  if (o.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : *runs) {
      rows.push_back({{"id", r.id},
                      {"job_name", r.job_name},
                      {"task_id", r.task_id},
                      {"hostname", r.hostname},
                      {"ip", r.ip},
                      {"sharding_item", r.sharding_item},
                      {"execution_source", ExecutionSourceName(r.source)},
                      {"start_time", Time(r.start_time)},
                      {"complete_time", r.complete_time ? nlohmann::json(Time(*r.complete_time))
                                                        : nlohmann::json(nullptr)},
                      {"is_success", r.success},
                      {"failure_cause", r.failure_cause}});
    }
    PrintJson(std::cout, rows);
    return kExitOk;
  }
  Table t({"ID", "JOB", "ITEM", "SOURCE", "IP", "START", "COMPLETE", "RESULT", "FAILURE"});
  for (const auto& r : *runs) {
    t.AddRow({r.id, r.job_name, std::to_string(r.sharding_item), ExecutionSourceName(r.source),
              r.ip, Time(r.start_time), r.complete_time ? Time(*r.complete_time) : "-",
              !r.complete_time ? "RUNNING"
              : r.success      ? "SUCCESS"
                               : "FAILURE",
              r.failure_cause.substr(0, 80)});
  }
  t.Print(std::cout);
  return kExitOk;
}

int StatusTraces(const TraceOptions& o) {
  StatusQuery q;
  if (!ParseTimes(o, &q.since, &q.until)) return kExitBadInput;
  int code = kExitOk;
  auto reader = OpenReader(o, &code);
  if (!reader.ok()) return code;
  if (!o.job.empty()) q.job_name = o.job;
  if (!o.task.empty()) q.task_id = o.task;
  q.limit = o.limit;
  q.offset = o.offset;
  auto steps = (*reader)->StatusTraces(q);
  if (!steps.ok()) return Failed(steps.status());
  if (o.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& s : *steps) {
      rows.push_back({{"id", s.id},
                      {"job_name", s.job_name},
                      {"original_task_id", s.original_task_id},
                      {"task_id", s.task_id},
                      {"slave_id", s.slave_id},
                      {"execution_type", s.execution_type},
                      {"sharding_item", s.sharding_items},
                      {"state", TraceStateName(s.state)},
                      {"message", s.message},
                      {"creation_time", Time(s.creation_time)}});
    }
    PrintJson(std::cout, rows);
    return kExitOk;
  }
  Table t({"TIME", "JOB", "ITEMS", "STATE", "SLAVE", "TASK", "MESSAGE"});
  for (const auto& s : *steps) {
    t.AddRow({Time(s.creation_time), s.job_name, s.sharding_items, TraceStateName(s.state),
              s.slave_id, s.task_id, s.message.substr(0, 120)});
  }
  t.Print(std::cout);
  return kExitOk;
}

int Logs(const TraceOptions& o) {
  int code = kExitOk;
  auto reader = OpenReader(o, &code);
  if (!reader.ok()) return code;
  auto execution = (*reader)->Execution(o.execution_id);
  if (!execution.ok()) return Failed(execution.status());
  int64_t last = 0;
  Table table({"LINE", "TIME", "LEVEL", "TEXT"});
  auto print = [&](const std::vector<JobLogLine>& lines) {
    for (const auto& l : lines) {
      last = l.line_no;
      if (o.json) {
        // One object per line (JSON Lines), so that --follow can stream them.
        PrintJson(std::cout, {{"execution_id", l.execution_id},
                              {"line_no", l.line_no},
                              {"time", Time(l.time)},
                              {"level", LogLevelName(l.level)},
                              {"text", l.text}});
      } else if (o.follow) {
        std::cout << fmt::format("{} {:<5} {}\n", Time(l.time), LogLevelName(l.level), l.text);
      } else {
        table.AddRow({std::to_string(l.line_no), Time(l.time), LogLevelName(l.level), l.text});
      }
    }
    std::cout << std::flush;
  };
  while (true) {
    // Read whether it has ended before the lines: lines written before its end are then
    // all read by this pass.
    bool ended = !o.follow;
    if (o.follow) {
      auto now = (*reader)->Execution(o.execution_id);
      if (!now.ok()) return Failed(now.status());
      ended = now->complete_time.has_value();
    }
    auto lines = (*reader)->LogLines(o.execution_id, last);
    if (!lines.ok()) return Failed(lines.status());
    print(*lines);
    if (ended && lines->size() < 10000) break;
    if (!ended && lines->empty()) {
      // A database table has no change notification that SQLite, PostgreSQL and MySQL
      // share: --follow reads again twice a second until the execution has ended.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  if (!o.json && !o.follow) table.Print(std::cout);
  return kExitOk;
}

}  // namespace

void AddTraceCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<TraceOptions>();
  CLI::App* trace = app.add_subcommand(
      "trace", "Read event tracing's database: item runs, trigger steps, job log lines");
  trace->require_subcommand(1);
  auto common = [&](CLI::App* sub) {
    sub->add_option("--tracing", opts->tracing,
                    "Database URL: sqlite:///path/events.db, postgresql://user:pass@host:port/db "
                    "or mysql://user:pass@host:port/db")
        ->envname("ELASTICJOB_TRACING");
    sub->add_flag("--json", opts->json, "JSON for scripts instead of a table");
  };
  auto filters = [&](CLI::App* sub) {
    sub->add_option("--job", opts->job, "Only this job");
    sub->add_option("--since", opts->since, "From this time on (UTC, YYYY-MM-DD[ HH:MM:SS])");
    sub->add_option("--until", opts->until, "Before this time (UTC)");
    sub->add_option("--limit", opts->limit, "Rows at most (default 100)")
        ->check(CLI::Range(1, 1000000));
    sub->add_option("--offset", opts->offset, "Rows skipped first (the next page)");
  };
  CLI::App* executions = trace->add_subcommand("executions", "Item runs, the newest first");
  common(executions);
  filters(executions);
  executions->add_option("--item", opts->item, "Only this sharding item")
      ->check(CLI::NonNegativeNumber);
  executions->add_flag("--failed", opts->failed, "Only failed runs");
  executions->callback([opts, exit_code] { *exit_code = Executions(*opts); });

  CLI::App* status = trace->add_subcommand("status", "Trigger steps, the newest first");
  common(status);
  filters(status);
  status->add_option("--task", opts->task, "Only this task id");
  status->callback([opts, exit_code] { *exit_code = StatusTraces(*opts); });

  CLI::App* logs = trace->add_subcommand("logs", "The log lines of one execution, in order");
  common(logs);
  logs->add_option("execution_id", opts->execution_id, "The execution's id (trace executions)")
      ->required();
  logs->add_flag("--follow", opts->follow, "Keep printing new lines until the execution ends");
  logs->callback([opts, exit_code] { *exit_code = Logs(*opts); });
}

}  // namespace elasticjob::cli
