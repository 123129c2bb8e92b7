// The `elasticjob` command's subcommands. Each Add*Command registers its options on `app`
// and a callback that stores the exit code in `*exit_code`.
//
// Exit codes: 0 success, 1 the operation failed (no such job, registry or database
// unreachable, with the reason on stderr), 2 bad input (an invalid expression, zone,
// option or argument).
#ifndef ELASTICJOB_CLI_COMMANDS_H_
#define ELASTICJOB_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace elasticjob::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

void AddCronCommand(CLI::App& app, int* exit_code);
void AddShardingCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddJobCommand(CLI::App& app, int* exit_code);
void AddServerCommand(CLI::App& app, int* exit_code);
void AddAgentCommand(CLI::App& app, int* exit_code);
void AddTraceCommand(CLI::App& app, int* exit_code);
void AddDumpCommand(CLI::App& app, int* exit_code);
void AddConsoleCommand(CLI::App& app, int* exit_code);
void AddWorkflowCommand(CLI::App& app, int* exit_code);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_COMMANDS_H_
