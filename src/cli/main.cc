// elasticjob: one binary, one subcommand per capability (cron, sharding, run, job, server,
// agent, trace, dump, console).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "build_version.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "infra/printable.h"

namespace {

std::vector<CLI::App*> Subcommands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

CLI::App* FindSubcommand(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : Subcommands(app)) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

// "job list" for the command `app` is in the tree under the root.
std::string PathOf(const CLI::App& app) {
  std::string path;
  for (const CLI::App* a = &app; a->get_parent() != nullptr; a = a->get_parent()) {
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  }
  return path;
}

// `word` names no subcommand of `parent`: says so on stderr, with the closest one (or the
// list), and returns the bad-input exit code.
int UnknownCommand(CLI::App& parent, const std::string& word) {
  std::vector<std::string> names;
  for (CLI::App* sub : Subcommands(parent)) names.push_back(sub->get_name());
  const std::string prefix = PathOf(parent).empty() ? "" : PathOf(parent) + " ";
  std::cerr << "elasticjob: unknown command '" << prefix << elasticjob::infra::Printable(word, 100)
            << "'";
  if (auto closest = elasticjob::cli::ClosestWord(word, names)) {
    std::cerr << "; did you mean '" << prefix << *closest << "'?\n";
  } else {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::cerr << "; the commands" << (prefix.empty() ? "" : " of '" + PathOf(parent) + "'")
              << " are: " << list << "\n";
  }
  std::cerr << "Run 'elasticjob " << prefix << "--help' for more information.\n";
  return elasticjob::cli::kExitBadInput;
}

// `app`'s help, its usage line naming the whole command ("elasticjob job item ...").
std::string HelpOf(const CLI::App& app) {
  if (app.get_parent() == nullptr) return app.help();
  const std::string parent = PathOf(*app.get_parent());
  return app.help(parent.empty() ? "elasticjob" : "elasticjob " + parent);
}

void PrintVersion() {
  std::string commit = ELASTICJOB_GIT_COMMIT;
  std::cout << "elasticjob " << ELASTICJOB_VERSION
            << (commit.empty() ? "" : " (commit " + commit + ")") << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"elasticjob: distributed job scheduling, ElasticJob-compatible", "elasticjob"};
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
  elasticjob::cli::AddWorkflowCommand(app, &exit_code);
  const std::string version_help =
      "Print the version (and the git commit it was built from) and exit";
  app.add_flag("--version", version_help);
  app.footer("`elasticjob help COMMAND...` prints a command's help.");

  // Before CLI11 parses: `--version`, `help [COMMAND...]`, and a word that names no command
  // where one is required (CLI11 would only say "A subcommand is required").
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--version") {
    PrintVersion();
    return elasticjob::cli::kExitOk;
  }
  if (!args.empty() && args[0] == "help") {
    CLI::App* target = &app;
    for (size_t i = 1; i < args.size(); ++i) {
      CLI::App* sub = FindSubcommand(*target, args[i]);
      if (sub == nullptr) return UnknownCommand(*target, args[i]);
      target = sub;
    }
    std::cout << HelpOf(*target);
    return elasticjob::cli::kExitOk;
  }
  CLI::App* current = &app;
  for (const std::string& word : args) {
    if (Subcommands(*current).empty() || word.starts_with("-")) break;
    CLI::App* sub = FindSubcommand(*current, word);
    // A command that runs on its own (`console`, beside `console hash-password`) takes
    // other words as its arguments.
    if (sub == nullptr && current->get_require_subcommand_min() == 0) break;
    if (sub == nullptr) return UnknownCommand(*current, word);
    current = sub;
  }
  const bool asks_help = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "-h" || a == "--help" || a == "--help-all";
  });
  // A group without its command.
  if (current->get_require_subcommand_min() > 0 && !asks_help) {
    std::string path = PathOf(*current);
    std::cerr << "elasticjob: " << (path.empty() ? "a command" : "'" + path + "' needs a command")
              << (path.empty() ? " is required" : "") << "\n\n"
              << HelpOf(*current);
    return elasticjob::cli::kExitBadInput;
  }
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
