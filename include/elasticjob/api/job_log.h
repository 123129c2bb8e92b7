// JobLog: what a job prints about one execution (one run of one item), kept with that
// execution when event tracing is on (docs/tracing.md, table JOB_EXECUTION_LOG_LINE) and
// given to the job's Logger (BootstrapOptions::logger, elasticjob/logger.h), with the job and
// item as fields and the level kept, when it is off. A job reaches it through its
// ShardingContext, with spdlog's level names and fmt's format strings:
//
//   void Execute(const elasticjob::ShardingContext& ctx) override {
//     ctx.log().Info("syncing region {}", ctx.sharding_parameter.value_or("-"));
//     if (failed) ctx.log().Error("{} rows rejected", rejected);
//   }
//
// Each call is one line (a text with newlines stays one line; a line longer than 4000
// characters is cut there). An execution keeps at most TracingConfiguration's
// log_line_limit lines and log_byte_limit bytes; the line that would pass a limit is
// replaced by one marker line saying so, and later lines are dropped.
//
// Thread safety: a JobLog may be used from any thread, also concurrently; lines from
// several threads get their line numbers in the order their calls took them.
#ifndef ELASTICJOB_API_JOB_LOG_H_
#define ELASTICJOB_API_JOB_LOG_H_

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

#include "elasticjob/logger.h"

namespace elasticjob {

struct ShardingContext;

// How the built-in logger (elasticjob/logger.h) writes the library's lines and JobLog's
// lines when event tracing is off, on stderr, and how the `elasticjob` command writes its
// item-run lines on stdout. kText (the default):
// "elasticjob WARN job 'x': ...". kJson: one JSON object per line, for a log collector:
//   {"time":"2026-01-02T03:04:05.678Z","level":"WARN","job":"x","item":0,
//    "instance":"10.0.0.1@-@42","message":"..."}
// job, item and instance are null when a line is not about one (docs/metrics.md, JSON
// logs). Process-wide; set it once at start-up, before any job is scheduled.
enum class LogFormat { kText, kJson };
void SetLogFormat(LogFormat format);
LogFormat GetLogFormat();

// Where an execution's lines go: implemented by the runtime (event tracing). Thread-safe.
class JobLogSink {
 public:
  virtual ~JobLogSink() = default;
  // Records one line of the execution (REQUIRES: no newline in `line`).
  virtual void Append(LogLevel level, std::string_view line) = 0;
};

// A handle on one execution's log: cheap to make and copy, valid while its ShardingContext is.
class JobLog {
 public:
  explicit JobLog(const ShardingContext& context) : context_(context) {}

  // One line at `level`.
  void Log(LogLevel level, std::string_view text) const;

  template <typename... Args>
  void Trace(fmt::format_string<Args...> format, Args&&... args) const {
    Log(LogLevel::kTrace, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void Debug(fmt::format_string<Args...> format, Args&&... args) const {
    Log(LogLevel::kDebug, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void Info(fmt::format_string<Args...> format, Args&&... args) const {
    Log(LogLevel::kInfo, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void Warn(fmt::format_string<Args...> format, Args&&... args) const {
    Log(LogLevel::kWarn, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void Error(fmt::format_string<Args...> format, Args&&... args) const {
    Log(LogLevel::kError, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  const ShardingContext& context_;
};

// Records `text`, an execution's output (a SCRIPT job's stdout or stderr, an HTTP job's
// response body), in `context`'s log: one line per line of the text (a trailing newline ends
// the last one; "\r\n" counts as one), at `level`, `prefix` put before each ("" for none).
// The entry point for job types that capture what they run.
void RecordExecutionOutput(const ShardingContext& context, std::string_view text,
                           LogLevel level = LogLevel::kInfo, std::string_view prefix = "");

}  // namespace elasticjob

#endif  // ELASTICJOB_API_JOB_LOG_H_
