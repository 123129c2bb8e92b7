#include "elasticjob/api/job_log.h"

#include <fmt/format.h>

#include <cstdio>

#include "elasticjob/api/sharding_context.h"
#include "infra/log.h"

namespace elasticjob {

namespace {

constexpr size_t kMaxLine = 4000;  // JOB_EXECUTION_LOG_LINE.text

// Cut at kMaxLine bytes, not inside a UTF-8 sequence.
std::string_view Cut(std::string_view line) {
  if (line.size() <= kMaxLine) return line;
  size_t n = kMaxLine;
  while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) --n;
  return line.substr(0, n);
}

}  // namespace

void JobLog::Log(LogLevel level, std::string_view text) const {
  if (context_.log_sink != nullptr) {
    // One line: newlines inside become spaces, as the table holds one line a row.
    if (text.find_first_of("\r\n") == std::string_view::npos) {
      context_.log_sink->Append(level, Cut(text));
      return;
    }
    std::string flat(text);
    for (char& c : flat) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    context_.log_sink->Append(level, Cut(flat));
    return;
  }
  infra::LogLine(context_.logger, level,
                 {.job = context_.job_name, .item = context_.sharding_item, .instance = {}}, text);
}

void SetLogFormat(LogFormat format) { infra::g_json_logs.store(format == LogFormat::kJson); }

LogFormat GetLogFormat() { return infra::JsonLogs() ? LogFormat::kJson : LogFormat::kText; }

void RecordExecutionOutput(const ShardingContext& context, std::string_view text, LogLevel level,
                           std::string_view prefix) {
  JobLog log(context);
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (prefix.empty()) {
      log.Log(level, line);
    } else {
      log.Log(level, fmt::format("{}{}", prefix, line));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace elasticjob
