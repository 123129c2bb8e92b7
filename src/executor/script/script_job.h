// ScriptJob: ElasticJob's SCRIPT job type. Runs `script.command.line` without a shell, the
// sharding context JSON appended as the last argument, and fails the item on a non-zero
// exit. The command line is split as Apache commons-exec's CommandLine.parse splits it
// (whitespace separates words; single or double quotes group them and are removed), so
// `/bin/sh -c 'echo run $0'` runs sh with `echo run $0` and the JSON becomes $0. Each run is
// a process group of its own under ScriptProcesses: it dies with its instance, and what it
// leaves running when it exits is killed. With event tracing on (the context has a log
// sink), the command's stdout and stderr go to the execution's log, line by line (INFO and
// WARN); off, they are the instance's, as ElasticJob leaves them.
//
// Thread safety: safe for concurrent Execute calls.
#ifndef ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_JOB_H_
#define ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_JOB_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/simple_job.h"
#include "elasticjob/status.h"
#include "executor/script/script_processes.h"

namespace elasticjob::executor {

// Splits `command_line` into words. Fails on an unbalanced quote, naming the command.
Result<std::vector<std::string>> ParseCommandLine(std::string_view command_line);

// A workflow node's stdout conventions (docs/workflows.md): the last line starting with
// `RESULT:` gives the node's result (the rest of the line); a line `CONTEXT: {"k": v, ...}`
// (a JSON object) or `CONTEXT:k=v` adds keys to the workflow context.
inline constexpr std::string_view kResultLinePrefix = "RESULT:";
inline constexpr std::string_view kContextLinePrefix = "CONTEXT:";
// Applies the conventions to complete lines of stdout `text`.
void ReadWorkflowLines(std::string_view text, WorkflowNodeRun& workflow);

class ScriptJob final : public SimpleJob {
 public:
  // The job of a SCRIPT job's props, its runs under `processes` (shared by the jobs whose
  // processes one owner signals together). Fails naming the property when
  // `script.command.line` is missing or does not parse.
  static Result<std::shared_ptr<ScriptJob>> FromProps(
      const std::map<std::string, std::string>& props, std::shared_ptr<ScriptProcesses> processes);

  // REQUIRES: `words` is ParseCommandLine(command_line), not an error.
  ScriptJob(std::string command_line, std::vector<std::string> words,
            std::shared_ptr<ScriptProcesses> processes)
      : command_line_(std::move(command_line)),
        words_(std::move(words)),
        processes_(std::move(processes)) {}
  // Throws std::runtime_error naming the command and its exit status on failure, or why it
  // did not start.
  void Execute(const ShardingContext& context) override;

 private:
  // A partial line is recorded once it reaches this size.
  static constexpr size_t kMaxPartialLine = 64 * 1024;
  // Throws as Execute says unless `status` is a zero exit.
  void Check(Result<int> status);

  const std::string command_line_;
  const std::vector<std::string> words_;
  const std::shared_ptr<ScriptProcesses> processes_;
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_JOB_H_
