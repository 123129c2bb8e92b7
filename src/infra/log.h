// One-line diagnostics on stderr ("elasticjob WARN job 'x': ..."), written with one write so
// lines from several threads never interleave. The runtime reports what it cannot return as
// a Status here: a malformed config seen by a listener, a failed coordination step.
//
// With the process's log format set to JSON (elasticjob::SetLogFormat, `--log-format json`)
// every line is one JSON object instead: {"time", "level", "job", "item", "instance",
// "message"} (docs/metrics.md, JSON logs); the job, item and instance come from the
// caller's LogFields, else from what the message names ("job 'x'", "job=x", "item 3",
// "item=3", "instance=..."), else are null.
#ifndef ELASTICJOB_INFRA_LOG_H_
#define ELASTICJOB_INFRA_LOG_H_

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace elasticjob::infra {

// The process's log format: false text, true JSON (elasticjob::SetLogFormat sets it).
inline std::atomic<bool> g_json_logs{false};
inline bool JsonLogs() { return g_json_logs.load(std::memory_order_relaxed); }

struct LogFields {
  std::string_view job;       // "" : unknown
  std::optional<int> item;    // none: unknown
  std::string_view instance;  // "" : unknown
};

// `text` as a JSON string's contents: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD.
std::string JsonEscape(std::string_view text);
// The JSON object of one line (without the newline). Fields not given are taken from what
// `message` names, else null.
std::string JsonLogLine(std::string_view level, LogFields fields, std::string_view message);

// One line on `out`: `text_line` as it is (it ends with a newline) in text format, else the
// JSON object of (`level`, `fields`, `message`).
void WriteLogLine(std::FILE* out, std::string_view level, const LogFields& fields,
                  std::string_view message, std::string_view text_line);

inline void LogLine(std::string_view level, std::string_view message) {
  if (JsonLogs()) return WriteLogLine(stderr, level, {}, message, {});
  std::string line = fmt::format("elasticjob {} {}\n", level, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_LOG_H_
