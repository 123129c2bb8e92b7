// ScriptJob: ElasticJob's SCRIPT job type. Runs `script.command.line` without a shell, the
// sharding context JSON appended as the last argument, and fails the item on a non-zero
// exit. The command line is split as Apache commons-exec's CommandLine.parse splits it
// (whitespace separates words; single or double quotes group them and are removed), so
// `/bin/sh -c 'echo run $0'` runs sh with `echo run $0` and the JSON becomes $0.
//
// Thread safety: safe for concurrent Execute calls.
#ifndef ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_JOB_H_
#define ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_JOB_H_

#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/simple_job.h"
#include "elasticjob/status.h"

namespace elasticjob::executor {

// Splits `command_line` into words. Fails on an unbalanced quote, naming the command.
Result<std::vector<std::string>> ParseCommandLine(std::string_view command_line);

class ScriptJob final : public SimpleJob {
 public:
  // REQUIRES: `command_line` parses (check with ParseCommandLine first).
  explicit ScriptJob(std::string command_line) : command_line_(std::move(command_line)) {}
  // Throws std::runtime_error naming the command and its exit status on failure.
  void Execute(const ShardingContext& context) override;

 private:
  const std::string command_line_;
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_JOB_H_
