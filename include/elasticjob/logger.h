// Logger: where the library's log lines go. The embedding application gives one in
// BootstrapOptions::logger (as leveldb's Options::info_log): every line about that job
// (a bad configuration from the registry, an overdue fire skipped, a failed coordination
// step, its listeners' and its JobLog's lines when event tracing is off) goes to it. Code
// that belongs to no job (the registry client, the command line tools) writes to the
// process default, which SetDefaultLogger() replaces. Without either, lines go to stderr
// through spdlog, one line each, in the format SetLogFormat chose (docs/metrics.md,
// "Logging"):
//
//   elasticjob WARN job 'orderSync': config: cron: '0 0 25 * * ?': ... (keeping the last ...)
//
// The library writes nothing to stdout; the `elasticjob` command prints its item lines
// itself (BootstrapOptions::on_item_run).
//
//   class MyLogger final : public elasticjob::Logger {
//    public:
//     void Log(elasticjob::LogLevel level, const elasticjob::LogFields& fields,
//              std::string_view message) override {
//       my_log.Write(elasticjob::LogLevelName(level), fields.job, message);
//     }
//   };
//   elasticjob::BootstrapOptions options;
//   options.logger = std::make_shared<MyLogger>();
//
// Thread safety: a Logger is called from any thread, also from several at once (item
// threads, the registry's event strand, timers): an implementation must be thread-safe. It
// must not throw, and should not block long: it is called on the threads that run jobs.
// The functions below are thread-safe.
#ifndef ELASTICJOB_LOGGER_H_
#define ELASTICJOB_LOGGER_H_

#include <memory>
#include <optional>
#include <string_view>

namespace elasticjob {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };

// "TRACE", "DEBUG", "INFO", "WARN" or "ERROR".
const char* LogLevelName(LogLevel level);

// What a line is about. Views valid only during the Log call.
struct LogFields {
  std::string_view job;       // "": not about one job
  std::optional<int> item;    // set on a job's own lines (JobLog): the item that ran
  std::string_view instance;  // "": unknown
};

class Logger {
 public:
  virtual ~Logger() = default;
  // Takes one line (`message` has no trailing newline) at `level` about `fields`.
  virtual void Log(LogLevel level, const LogFields& fields, std::string_view message) = 0;
};

// The built-in logger: spdlog, stderr, one write per line. Text format:
// "elasticjob LEVEL message", a line with an item "elasticjob LEVEL job=J item=I: message";
// JSON format: one object per line (elasticjob/api/job_log.h, LogFormat). Every logger it
// returns shares the one stderr sink.
std::shared_ptr<Logger> MakeStderrLogger();
// A logger that drops every line.
std::shared_ptr<Logger> NullLogger();

// The process default: what jobs without BootstrapOptions::logger and code outside any job
// write to. Null restores the built-in stderr logger. A job keeps the logger it was
// scheduled with; set it at start-up, before scheduling jobs.
void SetDefaultLogger(std::shared_ptr<Logger> logger);
// The current process default (never null).
std::shared_ptr<Logger> DefaultLogger();

}  // namespace elasticjob

#endif  // ELASTICJOB_LOGGER_H_
