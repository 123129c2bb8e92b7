// elasticjob: one binary, one subcommand per capability (cron, sharding, run; later console,
// job operations).
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"elasticjob: distributed job scheduling, ElasticJob-compatible"};
  app.require_subcommand(1);
  int exit_code = elasticjob::cli::kExitOk;
  elasticjob::cli::AddCronCommand(app, &exit_code);
  elasticjob::cli::AddShardingCommand(app, &exit_code);
  elasticjob::cli::AddRunCommand(app, &exit_code);
  elasticjob::cli::AddJobCommand(app, &exit_code);
  elasticjob::cli::AddServerCommand(app, &exit_code);
  elasticjob::cli::AddAgentCommand(app, &exit_code);
  elasticjob::cli::AddTraceCommand(app, &exit_code);
  elasticjob::cli::AddDumpCommand(app, &exit_code);
  elasticjob::cli::AddConsoleCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return elasticjob::cli::kExitBadInput;
  }
  return exit_code;
}
