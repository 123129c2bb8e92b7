#include "executor/script/script_job.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <stdexcept>

#include "infra/log.h"

namespace elasticjob::executor {

Result<std::vector<std::string>> ParseCommandLine(std::string_view line) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return InvalidArgument(fmt::format("script.command.line: unbalanced quote in '{}'", line));
  }
  if (in_word) words.push_back(std::move(current));
  if (words.empty()) return InvalidArgument("script.command.line: must not be empty");
  return words;
}

Result<std::shared_ptr<ScriptJob>> ScriptJob::FromProps(
    const std::map<std::string, std::string>& props, std::shared_ptr<ScriptProcesses> processes) {
  auto it = props.find("script.command.line");
  if (it == props.end()) return InvalidArgument("props.script.command.line: missing");
  auto words = ParseCommandLine(it->second);
  if (!words.ok()) return words.status();
  return std::make_shared<ScriptJob>(it->second, std::move(words).value(), std::move(processes));
}

void ScriptJob::Execute(const ShardingContext& context) {
  std::vector<std::string> argv = words_;
  argv.push_back(ShardingContextToJson(context));
  // The run's fencing token (ShardingContext::fencing_token), for the resources it writes.
  const std::vector<std::string> env = {
      fmt::format("{}={}", kFencingTokenVariable, context.fencing_token())};
  if (context.log_sink == nullptr && !infra::JsonLogs()) {
    return Check(
        processes_->Run(argv, nullptr, context.cancellation.get(), env, context.start_deadline));
  }
  // Tracing on: stdout (INFO) and stderr (WARN) line by line into the execution's log (with
  // tracing off and JSON logs: into the process log, one JSON line each).
  std::string partial[2];
  const LogLevel levels[2] = {LogLevel::kInfo, LogLevel::kWarn};
  auto output = [&](int stream, std::string_view data) {
    std::string& buf = partial[stream - 1];
    buf.append(data);
    size_t end = buf.rfind('\n');
    if (end == std::string::npos) {
      if (buf.size() < kMaxPartialLine) return;
      end = buf.size() - 1;  // a line that long is cut into pieces
    }
    RecordExecutionOutput(context, std::string_view(buf).substr(0, end + 1), levels[stream - 1]);
    buf.erase(0, end + 1);
  };
  auto status =
      processes_->Run(argv, output, context.cancellation.get(), env, context.start_deadline);
  for (int i = 0; i < 2; ++i) {
    if (!partial[i].empty()) RecordExecutionOutput(context, partial[i], levels[i]);
  }
  Check(std::move(status));
}

void ScriptJob::Check(Result<int> status) {
  if (!status.ok()) throw std::runtime_error(status.status().message());
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return;
  if (WIFSIGNALED(*status)) {
    throw std::runtime_error(
        fmt::format("'{}' killed by signal {}", command_line_, WTERMSIG(*status)));
  }
  throw std::runtime_error(fmt::format("'{}' exited with {}", command_line_, WEXITSTATUS(*status)));
}

}  // namespace elasticjob::executor
