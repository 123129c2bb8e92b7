// `elasticjob console`: the web console (docs/console.md) over one or more registries, until
// SIGINT or SIGTERM; `elasticjob console hash-password`: an argon2id hash for the users file.
#include <fmt/format.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/observability.h"
#include "cli/registry_option.h"
#include "elasticjob/console/console_server.h"

namespace elasticjob::cli {
namespace {

struct ConsoleCommandOptions {
  std::vector<std::string> registries;
  std::string tracing;
  std::string listen = "127.0.0.1:8899";
  std::string users;
  std::string tls_cert;
  std::string tls_key;
  int max_event_clients = 16;
  ObservabilityOptions observability;  // --metrics, --log-format
};

int RunConsole(const ConsoleCommandOptions& o) {
  ApplyLogFormat(o.observability);
  if (o.registries.empty()) {
    SayError("console: --registry URL is required (or ELASTICJOB_REGISTRY)");
    return kExitBadInput;
  }
  ConsoleOptions options;
  // A registry that is down fails the command within kConnectSeconds, as the operation
  // commands do (unless the URL sets its own connectionTimeoutMs).
  for (std::string url : o.registries) {
    if (url.starts_with("zookeeper://") && url.find("connectionTimeoutMs=") == std::string::npos) {
      url += fmt::format("{}connectionTimeoutMs={}", url.find('?') == std::string::npos ? '?' : '&',
                         kConnectSeconds * 1000);
    }
    options.registry_urls.push_back(url);
  }
  options.tracing_url = o.tracing;
  options.listen = o.listen;
  options.users_file = o.users;
  options.tls_cert_file = o.tls_cert;
  options.tls_key_file = o.tls_key;
  options.max_event_clients = o.max_event_clients;
  // Metrics (docs/metrics.md): the console's registry sessions.
  auto metrics = Metrics::Create();
  options.metrics = metrics;
  // Signals are taken by sigwait below: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto console = StartConsole(options);
  if (!console.ok()) {
    SayError("console: " + console.status().message());
    return console.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailed;
  }
  Say(fmt::format("console at {}{}", (*console)->url(),
                  o.users.empty() ? " (read-only: no --users)" : ""));
  int code = kExitOk;
  auto metrics_server = ServeMetricsOption(o.observability, metrics, &code);
  if (code != kExitOk) return code;
  int sig = 0;
  sigwait(&signals, &sig);
  Say(fmt::format("{} received, console stopping", sig == SIGINT ? "SIGINT" : "SIGTERM"));
  metrics_server.reset();
  console->reset();
  return kExitOk;
}

// Reads one line from stdin, without echo when it is a terminal.
std::string ReadPassword() {
  const bool tty = isatty(STDIN_FILENO) != 0;
  termios saved{};
  if (tty) {
    std::cerr << "Password: " << std::flush;
    tcgetattr(STDIN_FILENO, &saved);
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
  }
  std::string line;
  std::getline(std::cin, line);
  if (tty) {
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    std::cerr << "\n";
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

int HashPassword() {
  const std::string password = ReadPassword();
  if (password.empty()) {
    std::cerr << "elasticjob: console hash-password: the password (one line on stdin) is empty\n";
    return kExitBadInput;
  }
  auto hash = HashConsolePassword(password);
  if (!hash.ok()) {
    std::cerr << "elasticjob: console hash-password: " << hash.status().message() << "\n";
    return kExitFailed;
  }
  std::cout << *hash << "\n";
  return kExitOk;
}

}  // namespace

void AddConsoleCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<ConsoleCommandOptions>();
  CLI::App* console = app.add_subcommand(
      "console", "Serve the web console (REST API, live events, UI) until SIGINT or SIGTERM");
  console
      ->add_option("--registry", opts->registries,
                   "Registry URL, zookeeper://host:port/namespace (repeat for more "
                   "namespaces; else ELASTICJOB_REGISTRY)")
      ->envname("ELASTICJOB_REGISTRY");
  console->add_option("--tracing", opts->tracing,
                      "Tracing database to show executions from (sqlite:///path/events.db, "
                      "postgresql://..., mysql://...)");
  console->add_option("--listen", opts->listen,
                      "host:port to listen on (default 127.0.0.1:8899; a non-loopback address "
                      "needs --users)");
  console->add_option("--users", opts->users,
                      "Users file (YAML: name, role admin|guest, passwordHash); without it the "
                      "console is read-only");
  console->add_option("--tls-cert", opts->tls_cert, "PEM certificate chain: serve HTTPS");
  console->add_option("--tls-key", opts->tls_key, "PEM private key of --tls-cert");
  console
      ->add_option("--max-event-streams", opts->max_event_clients,
                   "Open live event streams at most (default 16)")
      ->check(CLI::Range(1, 1000));
  CLI::App* hash = console->add_subcommand(
      "hash-password", "Print an argon2id hash of the password read from stdin (users file)");
  AddObservabilityOptions(*console, &opts->observability);
  hash->callback([exit_code] { *exit_code = HashPassword(); });
  console->callback([opts, exit_code, hash] {
    if (hash->parsed()) return;
    *exit_code = RunConsole(*opts);
  });
}

}  // namespace elasticjob::cli
