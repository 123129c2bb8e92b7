// `elasticjob run FILE.yaml`: runs the jobs a YAML file declares (ElasticJob Spring Boot's
// property names) until SIGINT or SIGTERM, then shuts them down gracefully: no more
// triggers, SIGTERM to the running scripts, SIGKILL to those left after the grace (or at a
// second signal).
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/graceful_stop.h"
#include "cli/observability.h"
#include "cli/run_file.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/bootstrap/task_models.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/console/console_server.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/tracing/tracer.h"
#include "elasticjob/workflow/workflow_api.h"
#include "executor/script/script_processes.h"
#include "infra/printable.h"
#include "reg/registry_url.h"

namespace elasticjob::cli {
namespace {

struct RunOptions {
  std::string file;
  // --registry; empty: ELASTICJOB_REGISTRY, else the file's regCenter, else memory://.
  std::string registry;
  // --shutdown-grace-ms; -1: the file's shutdownGraceMilliseconds, else the default.
  int64_t shutdown_grace_ms = -1;
  // --tracing [URL]; empty: the file's elasticjob.tracing, else off.
  std::string tracing;
  // --console ADDR (host:port): the web console in this process; empty: none.
  std::string console;
  std::string console_users;           // --console-users FILE
  ObservabilityOptions observability;  // --metrics, --log-format
};

constexpr int64_t kDefaultShutdownGraceMs = 10000;

int RunJobs(const RunOptions& o) {
  ApplyLogFormat(o.observability);
  // Bounded: `elasticjob run /dev/zero` must not read forever.
  constexpr std::streamsize kMaxFileBytes = 16 << 20;
  std::ifstream in(o.file, std::ios::binary);
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), kMaxFileBytes + 1);
  if (in.bad() || !in.is_open()) {
    SayError(o.file + ": cannot be read");
    return kExitBadInput;
  }
  if (in.gcount() > kMaxFileBytes) {
    SayError(o.file + ": larger than 16 MiB, not a job file");
    return kExitBadInput;
  }
  text.resize(static_cast<size_t>(in.gcount()));
  // The registry as every other command finds it: --registry, else ELASTICJOB_REGISTRY;
  // else the file's regCenter (memory:// without one).
  std::string registry_flag = o.registry;
  std::string registry_source = "--registry";
  if (const char* env = std::getenv("ELASTICJOB_REGISTRY");
      registry_flag.empty() && env != nullptr && *env != '\0') {
    registry_flag = env;
    registry_source = "ELASTICJOB_REGISTRY";
  }
  std::vector<std::string> warnings;
  auto file = ParseRunFile(text, registry_flag, &warnings);
  for (const std::string& warning : warnings) {
    SayError("warning: " + infra::OneLine(warning), "WARN");
  }
  if (!file.ok()) {
    SayError(infra::OneLine(o.file + ": " + file.status().message()));
    return kExitBadInput;
  }
  const std::string& url = file->registry_url;
  if (registry_flag.empty()) registry_source = "the file's regCenter";
  const std::string shown_url = reg::RedactRegistryUrl(url);
  Say(fmt::format("registry {} (from {}{})", shown_url, registry_source,
                  url.starts_with("memory://") ? "; in this process only" : ""));
  const std::vector<RunJobSpec>& jobs = file->jobs;
  const std::chrono::milliseconds grace(
      o.shutdown_grace_ms >= 0 ? o.shutdown_grace_ms
                               : file->shutdown_grace_ms.value_or(kDefaultShutdownGraceMs));
  // Signals are taken by sigwait below: block them before any thread starts (the
  // tracer's writer is the first: a SIGTERM it took would end the process at once).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Event tracing, for every job of the process (its URL's password is never printed).
  std::shared_ptr<Tracer> tracer;
  std::string console_tracing_url;  // what the console reads executions from
  if (std::string tracing_url = !o.tracing.empty() ? o.tracing : file->tracing_url.value_or("");
      !tracing_url.empty()) {
    auto opened = Tracer::Open({.url = tracing_url});
    if (!opened.ok()) {
      SayError(opened.status().message());
      return kExitBadInput;
    }
    tracer = *std::move(opened);
    console_tracing_url = tracing_url;
    Say("tracing to " + tracer->redacted_url());
  }
  // Every job by its type name (SCRIPT, HTTP, ...): its item executor is made from the
  // registry's configuration, which wins over the file's, and again at every change of it
  // (docs/runtime.md). Scripts run under the process's ScriptProcesses, which the shutdown
  // signals.
  executor::ScriptProcesses& processes = executor::ScriptProcesses::Shared();
  auto registry = NewRegistryCenter(url);
  if (!registry.ok()) {
    SayError(registry.status().message());
    return kExitBadInput;
  }
  if (Status s = (*registry)->Init(); !s.ok()) {
    SayError("registry " + shown_url + ": " + s.message());
    return 1;
  }
  // Registered together: a file of many jobs starts in the time of a few (ScheduleAll).
  std::vector<std::unique_ptr<ScheduleJobBootstrap>> running;
  std::vector<ScheduleJobBootstrap*> boots;
  BootstrapOptions options;
  options.task_models = GrpcTaskModels();  // jobs broadcast by the prop task.broadcast
  options.tracer = tracer;
  if (file->dump_address) options.dump_port.address = *file->dump_address;
  options.shutdown_timeout = JoinTimeoutFor(grace);
  options.on_item_run = PrintItemRun;  // the library prints nothing itself
  // Metrics (docs/metrics.md): served from before the jobs are scheduled, so /healthz answers
  // and /readyz says what it waits for.
  auto metrics = Metrics::Create();
  metrics->AddRegistry(**registry, RegistryLabel(url));
  metrics->AddTracer(tracer);
  options.metrics = metrics;
  for (const RunJobSpec& spec : jobs) {
    running.push_back(
        std::make_unique<ScheduleJobBootstrap>(**registry, spec.type, spec.config, options));
    boots.push_back(running.back().get());
  }
  int metrics_code = kExitOk;
  auto metrics_server = ServeMetricsOption(o.observability, metrics, &metrics_code);
  if (metrics_code != kExitOk) {
    running.clear();
    if (tracer != nullptr) (void)tracer->Shutdown(std::chrono::seconds(5));
    return metrics_code;
  }
  const std::vector<Status> statuses = ScheduleJobBootstrap::ScheduleAll(boots);
  bool failed = false;
  for (size_t i = 0; i < statuses.size(); ++i) {
    const auto& spec = jobs[i];
    if (!statuses[i].ok()) {
      SayError(statuses[i].message());
      failed = true;
      continue;
    }
    Say(fmt::format("job '{}' scheduled ({}, {}) on {}", spec.config.job_name, spec.type,
                    ScheduleWords(spec.config), shown_url));
  }
  if (failed) {
    ScheduleJobBootstrap::ShutdownAll(boots);
    if (tracer != nullptr) (void)tracer->Shutdown(std::chrono::seconds(5));
    return kExitBadInput;
  }
  // Workflows (docs/workflows.md): this process may coordinate any of the namespace's.
  ThreadPool workflow_pool(1);
  auto workflows = NewWorkflowCoordinator(**registry, workflow_pool, {});
  if (Status s = workflows->Start(); !s.ok()) SayError("workflows: " + s.message(), "WARN");
  // The web console over this process's registry (docs/console.md).
  std::unique_ptr<Console> console;
  if (!o.console.empty()) {
    ConsoleOptions console_options;
    console_options.registry_urls = {url};
    console_options.tracing_url = console_tracing_url;
    console_options.listen = o.console;
    console_options.users_file = o.console_users;
    auto started = StartConsole(console_options);
    if (!started.ok()) {
      SayError("console: " + started.status().message());
      ScheduleJobBootstrap::ShutdownAll(boots);
      if (tracer != nullptr) (void)tracer->Shutdown(std::chrono::seconds(5));
      return started.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : 1;
    }
    console = std::move(started).value();
    Say("console at " + console->url());
  }
  int sig = 0;
  sigwait(&signals, &sig);
  console.reset();
  Say(fmt::format("{} received, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM"));
  workflows->Stop();
  StopGracefully(processes, boots, grace, signals);
  running.clear();
  (*registry)->Close();
  if (tracer != nullptr) {
    // What the jobs posted is written before the process ends (bounded).
    if (Status s = tracer->Shutdown(std::chrono::seconds(10)); !s.ok()) {
      SayError(s.message());
    }
    if (uint64_t dropped = tracer->dropped(); dropped > 0) {
      SayError(fmt::format("tracing: {} events were dropped", dropped), "WARN");
    }
  }
  return kExitOk;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* run =
      app.add_subcommand("run", "Run the jobs a YAML file declares until SIGINT or SIGTERM");
  run->add_option("file", opts->file,
                  "YAML file (ElasticJob Spring Boot property names; per job also fixedRate, "
                  "fixedDelay, timeoutMs, maxRetries, retryIntervalMs: docs/scheduling.md)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--registry", opts->registry,
                  "Registry URL (zookeeper://host:port/namespace or memory://namespace); "
                  "default: $ELASTICJOB_REGISTRY; either overrides the file's regCenter");
  run->add_option("--shutdown-grace-ms", opts->shutdown_grace_ms,
                  "At SIGINT or SIGTERM, how long running scripts get between SIGTERM and SIGKILL "
                  "(milliseconds; overrides the file's shutdownGraceMilliseconds; default 10000)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--tracing", opts->tracing,
                  "Event tracing into a database: sqlite:///path/events.db, "
                  "postgresql://user:pass@host:port/db or mysql://user:pass@host:port/db "
                  "(docs/tracing.md); overrides the file's elasticjob.tracing; without a value: " +
                      std::string(kDefaultTracingUrl))
      ->expected(0, 1)
      ->default_str(kDefaultTracingUrl);
  run->add_option("--console", opts->console,
                  "Serve the web console in this process at host:port (docs/console.md)");
  run->add_option("--console-users", opts->console_users,
                  "Users file of --console (without it the console is read-only and "
                  "loopback-only)");
  AddObservabilityOptions(*run, &opts->observability);
  run->callback([opts, exit_code] { *exit_code = RunJobs(*opts); });
}

}  // namespace elasticjob::cli
