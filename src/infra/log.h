// The library's log lines: LogLine hands one line to a Logger (elasticjob/logger.h): the
// job's (BootstrapOptions::logger) where the caller has it, else the process default
// (SetDefaultLogger; built in: spdlog on stderr). The runtime reports what it cannot return
// as a Status here: a malformed config seen by a listener, a failed coordination step.
//
// With the process's log format set to JSON (elasticjob::SetLogFormat, `--log-format json`)
// the built-in logger writes every line as one JSON object instead: {"time", "level", "job",
// "item", "instance", "message"} (docs/metrics.md, JSON logs); the job, item and instance
// come from the caller's LogFields, else from what the message names ("job 'x'", "job=x",
// "item 3", "item=3", "instance=..."), else are null.
#ifndef ELASTICJOB_INFRA_LOG_H_
#define ELASTICJOB_INFRA_LOG_H_

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "elasticjob/logger.h"

namespace elasticjob::infra {

// The process's log format: false text, true JSON (elasticjob::SetLogFormat sets it).
inline std::atomic<bool> g_json_logs{false};
inline bool JsonLogs() { return g_json_logs.load(std::memory_order_relaxed); }

using elasticjob::LogFields;

// `text` as a JSON string's contents: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD.
std::string JsonEscape(std::string_view text);
// The JSON object of one line (without the newline). Fields not given are taken from what
// `message` names, else null.
std::string JsonLogLine(std::string_view level, LogFields fields, std::string_view message);

// The built-in logger's line for (`level`, `fields`, `message`), without the newline: JSON
// (JsonLogLine) in JSON format, else "elasticjob LEVEL message", or with an item
// "elasticjob LEVEL job=J item=I: message".
std::string FormatLogLine(std::string_view level, const LogFields& fields,
                          std::string_view message);

// One line of the command line tools' own output on `out`: `text_line` as it is (it ends
// with a newline) in text format, else the JSON object of (`level`, `fields`, `message`).
void WriteLogLine(std::FILE* out, std::string_view level, const LogFields& fields,
                  std::string_view message, std::string_view text_line);

// "INFO", "WARN", "ERROR", ... as a level (an unknown name: kInfo).
LogLevel ParseLogLevel(std::string_view level);

// One line to `logger`, or to the process default when it is null.
void LogLine(Logger* logger, LogLevel level, const LogFields& fields, std::string_view message);
inline void LogLine(Logger* logger, std::string_view level, const LogFields& fields,
                    std::string_view message) {
  LogLine(logger, ParseLogLevel(level), fields, message);
}
// One line about no job in particular (or one whose logger the caller lacks) to the
// process default.
inline void LogLine(std::string_view level, std::string_view message) {
  LogLine(nullptr, ParseLogLevel(level), {}, message);
}

// A job's logger and name, as the bootstrap gives them to what it builds for the job: each
// line goes to the logger (null: the process default) with the job as its field.
class JobLogger {
 public:
  JobLogger() = default;  // the process default, no job
  JobLogger(std::shared_ptr<Logger> logger, std::string job)
      : logger_(std::move(logger)), job_(std::move(job)) {}

  void operator()(std::string_view level, std::string_view message) const {
    LogLine(logger_.get(), level, {.job = job_, .item = std::nullopt, .instance = {}}, message);
  }
  // The logger (null: the process default), borrowed while this object lives.
  Logger* logger() const { return logger_.get(); }

 private:
  std::shared_ptr<Logger> logger_;
  std::string job_;
};

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_LOG_H_
