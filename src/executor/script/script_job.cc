#include "executor/script/script_job.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
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
  std::string json = ShardingContextToJson(context);
  // The run's fencing token (ShardingContext::fencing_token), for the resources it writes.
  std::vector<std::string> env = {
      fmt::format("{}={}", kFencingTokenVariable, context.fencing_token())};
  WorkflowNodeRun* workflow = context.workflow.get();
  if (workflow != nullptr) {
    // A workflow node (docs/workflows.md): its data as `workflow` in the JSON and the
    // environment; its result and context keys read from stdout.
    const std::string data = workflow->ToJson();
    json.insert(json.size() - 1, ",\"workflow\":" + data);
    env.push_back(fmt::format("{}={}", kWorkflowVariable, data));
  }
  argv.push_back(std::move(json));
  if (context.log_sink == nullptr && !infra::JsonLogs() && workflow == nullptr) {
    return Check(
        processes_->Run(argv, nullptr, context.cancellation.get(), env, context.start_deadline));
  }
  // Tracing on: stdout (INFO) and stderr (WARN) line by line into the execution's log (with
  // tracing off and JSON logs: into the process log, one JSON line each; with neither, a
  // workflow node's output goes to the instance's own, as it would unread).
  const bool own = context.log_sink == nullptr && !infra::JsonLogs();
  std::string partial[2];
  const LogLevel levels[2] = {LogLevel::kInfo, LogLevel::kWarn};
  auto lines = [&](int stream, std::string_view text) {
    if (own) {
      std::fwrite(text.data(), 1, text.size(), stream == 1 ? stdout : stderr);
      std::fflush(stream == 1 ? stdout : stderr);
    } else {
      RecordExecutionOutput(context, text, levels[stream - 1]);
    }
    if (workflow != nullptr && stream == 1) ReadWorkflowLines(text, *workflow);
  };
  auto output = [&](int stream, std::string_view data) {
    std::string& buf = partial[stream - 1];
    buf.append(data);
    size_t end = buf.rfind('\n');
    if (end == std::string::npos) {
      if (buf.size() < kMaxPartialLine) return;
      end = buf.size() - 1;  // a line that long is cut into pieces
    }
    lines(stream, std::string_view(buf).substr(0, end + 1));
    buf.erase(0, end + 1);
  };
  auto status =
      processes_->Run(argv, output, context.cancellation.get(), env, context.start_deadline);
  for (int i = 0; i < 2; ++i) {
    if (!partial[i].empty()) lines(i + 1, partial[i]);
  }
  Check(std::move(status));
}

void ReadWorkflowLines(std::string_view text, WorkflowNodeRun& workflow) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with(kResultLinePrefix)) {
      workflow.SetResult(line.substr(kResultLinePrefix.size()));
    } else if (line.starts_with(kContextLinePrefix)) {
      std::string_view rest = line.substr(kContextLinePrefix.size());
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      auto object = nlohmann::json::parse(rest, nullptr, false);
      if (!object.is_discarded() && object.is_object()) {
        for (const auto& [key, value] : object.items()) {
          (void)workflow.PutContext(
              key, value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        }
      } else if (size_t eq = rest.find('='); eq != std::string_view::npos && eq > 0) {
        (void)workflow.PutContext(rest.substr(0, eq), rest.substr(eq + 1));
      }
    }
  }
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
