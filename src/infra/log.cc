#include "infra/log.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <chrono>
#include <ctime>
#include <utility>

#include "elasticjob/mutex.h"

namespace elasticjob::infra {
namespace {

// The length of the valid UTF-8 sequence at the start of `s`, or 0.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xC2) return 0;                   // overlong
  if (n == 3 && c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
  if (n == 3 && c == 0xED && b(1) >= 0xA0) return 0;  // surrogates
  if (n == 4 && (c > 0xF4 || (c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90))) {
    return 0;
  }
  return n;
}

// The word after `key` in `message` ("job=orderSync" -> "orderSync"; "job 'a b'" -> "a b").
std::string_view After(std::string_view message, std::string_view key) {
  for (size_t at = message.find(key); at != std::string_view::npos;
       at = message.find(key, at + 1)) {
    if (at > 0 && message[at - 1] != ' ' && message[at - 1] != '(') continue;
    std::string_view rest = message.substr(at + key.size());
    if (rest.starts_with('\'')) {
      size_t end = rest.find('\'', 1);
      if (end == std::string_view::npos) return {};
      return rest.substr(1, end - 1);
    }
    size_t end = rest.find_first_of(" :,;)");
    std::string_view word = rest.substr(0, end);
    if (!word.empty()) return word;
  }
  return {};
}

std::optional<int> ItemIn(std::string_view message) {
  for (std::string_view key : {"item=", "item "}) {
    std::string_view word = After(message, key);
    if (word.empty() || word.size() > 9) continue;
    int n = 0;
    bool digits = true;
    for (char c : word) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      n = n * 10 + (c - '0');
    }
    if (digits) return n;
  }
  return std::nullopt;
}

void AppendString(std::string& out, std::string_view value) {
  out += '"';
  out += JsonEscape(value);
  out += '"';
}

}  // namespace

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text[0]);
    if (c >= 0x80) {
      size_t n = Utf8Length(text);
      if (n == 0) {
        out += "\\ufffd";
        text.remove_prefix(1);
      } else {
        out.append(text.substr(0, n));
        text.remove_prefix(n);
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    text.remove_prefix(1);
  }
  return out;
}

std::string JsonLogLine(std::string_view level, LogFields fields, std::string_view message) {
  if (fields.job.empty()) {
    fields.job = After(message, "job=");
    // "job 'x'" only: "job " before another word is prose.
    if (fields.job.empty() && message.find("job '") != std::string_view::npos) {
      fields.job = After(message, "job ");
    }
    if (fields.job.empty() && message.starts_with("Job '")) fields.job = After(message, "Job ");
  }
  if (!fields.item.has_value()) fields.item = ItemIn(message);
  if (fields.instance.empty()) {
    fields.instance = After(message, "instance=");
    if (fields.instance.empty()) {
      std::string_view word = After(message, "instance ");
      if (word.find("@-@") != std::string_view::npos) fields.instance = word;  // an id
    }
  }
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&secs, &utc);
  std::string out = fmt::format(
      "{{\"time\":\"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z\",\"level\":\"{}\",\"job\":",
      utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis,
      JsonEscape(level));
  if (fields.job.empty()) {
    out += "null";
  } else {
    AppendString(out, fields.job);
  }
  out += ",\"item\":";
  out += fields.item.has_value() ? std::to_string(*fields.item) : "null";
  out += ",\"instance\":";
  if (fields.instance.empty()) {
    out += "null";
  } else {
    AppendString(out, fields.instance);
  }
  out += ",\"message\":";
  AppendString(out, message);
  out += '}';
  return out;
}

std::string FormatLogLine(std::string_view level, const LogFields& fields,
                          std::string_view message) {
  if (JsonLogs()) return JsonLogLine(level, fields, message);
  if (fields.item.has_value()) {
    return fmt::format("elasticjob {} job={} item={}: {}", level, fields.job, *fields.item,
                       message);
  }
  return fmt::format("elasticjob {} {}", level, message);
}

LogLevel ParseLogLevel(std::string_view level) {
  for (LogLevel l :
       {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (level == LogLevelName(l)) return l;
  }
  return LogLevel::kInfo;
}

void WriteLogLine(std::FILE* out, std::string_view level, const LogFields& fields,
                  std::string_view message, std::string_view text_line) {
  if (!JsonLogs()) {
    std::fwrite(text_line.data(), 1, text_line.size(), out);
    return;
  }
  std::string line = JsonLogLine(level, fields, message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), out);
}

namespace {

class StderrLogger final : public Logger {
 public:
  explicit StderrLogger(std::shared_ptr<spdlog::sinks::sink> sink)
      : spd_("elasticjob", std::move(sink)) {
    spd_.set_pattern("%v");
    spd_.set_level(spdlog::level::trace);
  }

  void Log(LogLevel level, const LogFields& fields, std::string_view message) override {
    const std::string line = FormatLogLine(LogLevelName(level), fields, message);
    spd_.log(SpdLevel(level), spdlog::string_view_t(line.data(), line.size()));
  }

 private:
  static spdlog::level::level_enum SpdLevel(LogLevel level) {
    switch (level) {
      case LogLevel::kTrace:
        return spdlog::level::trace;
      case LogLevel::kDebug:
        return spdlog::level::debug;
      case LogLevel::kInfo:
        return spdlog::level::info;
      case LogLevel::kWarn:
        return spdlog::level::warn;
      case LogLevel::kError:
        return spdlog::level::err;
    }
    return spdlog::level::info;
  }

  spdlog::logger spd_;  // its sink is locked per line
};

class DroppingLogger final : public Logger {
 public:
  void Log(LogLevel, const LogFields&, std::string_view) override {}
};

// The one stderr sink of every built-in logger (leaked: lines may come at exit).
const std::shared_ptr<spdlog::sinks::sink>& StderrSink() {
  static auto* sink =
      new std::shared_ptr<spdlog::sinks::sink>(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  return *sink;
}

struct DefaultSlot {
  Mutex mu;
  std::shared_ptr<Logger> logger ELASTICJOB_GUARDED_BY(mu);  // null: the built-in one
};

DefaultSlot& Slot() {
  static auto* slot = new DefaultSlot;  // leaked: lines may come at exit
  return *slot;
}

const std::shared_ptr<Logger>& BuiltIn() {
  static auto* logger = new std::shared_ptr<Logger>(MakeStderrLogger());
  return *logger;
}

}  // namespace

void LogLine(Logger* logger, LogLevel level, const LogFields& fields, std::string_view message) {
  if (logger != nullptr) return logger->Log(level, fields, message);
  DefaultLogger()->Log(level, fields, message);
}

}  // namespace elasticjob::infra

namespace elasticjob {

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "TRACE";
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "INFO";
}

std::shared_ptr<Logger> MakeStderrLogger() {
  return std::make_shared<infra::StderrLogger>(infra::StderrSink());
}

std::shared_ptr<Logger> NullLogger() { return std::make_shared<infra::DroppingLogger>(); }

void SetDefaultLogger(std::shared_ptr<Logger> logger) {
  auto& slot = infra::Slot();
  MutexLock lock(&slot.mu);
  slot.logger = std::move(logger);
}

std::shared_ptr<Logger> DefaultLogger() {
  auto& slot = infra::Slot();
  {
    MutexLock lock(&slot.mu);
    if (slot.logger != nullptr) return slot.logger;
  }
  return infra::BuiltIn();
}

}  // namespace elasticjob
