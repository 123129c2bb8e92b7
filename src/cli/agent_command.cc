// `elasticjob agent --registry URL [--label L]...`: runs every command-line job of the
// namespace (a job whose `/{job}` names a type this binary runs by name: SCRIPT, HTTP) and
// follows the namespace by watch: a job whose config appears is scheduled here, one whose
// config goes is shut down, one whose type or props change is started again (a change of
// cron, time zone or item count is followed by the running job itself, as by any instance).
// With --label, only jobs whose `label` is one of those given. With --tracing, every job's
// runs are traced as `elasticjob run --tracing` traces them. Several agents share each
// job's items as any instances do. SIGINT or SIGTERM stops it as `elasticjob run` stops.
#include <fmt/format.h>
#include <signal.h>

#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/graceful_stop.h"
#include "cli/observability.h"
#include "cli/registry_option.h"
#include "cli/run_file.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/bootstrap/task_models.h"
#include "elasticjob/executor.h"
#include "elasticjob/tracing/tracer.h"
#include "elasticjob/workflow/workflow_api.h"
#include "executor/script/script_processes.h"
#include "infra/printable.h"
#include "reg/coordinator_registry.h"
#include "reg/registry_url.h"

namespace elasticjob::cli {
namespace {

struct AgentOptions {
  std::string registry;
  std::vector<std::string> labels;
  int64_t shutdown_grace_ms = 10000;
  std::string tracing;                 // empty: off
  ObservabilityOptions observability;  // --metrics, --log-format
};

// What the namespace watch keeps: the top-level names, each job's type (its own value) and
// its config; nothing else of the jobs (their running jobs watch their own subtrees).
constexpr std::string_view kJobChildren[] = {"config"};
reg::NodeWatches AgentWatches(std::string_view key) {
  if (key == "/") return {.value = false, .children = true};
  if (key.find('/', 1) == std::string_view::npos) {
    return {.value = true, .children = false, .named_children = kJobChildren};
  }
  return {.value = true, .children = false};
}

// The job a namespace key belongs to ("/orderJob/config" -> "orderJob"); empty for the root.
std::string JobOf(std::string_view key) {
  if (key.size() < 2) return "";
  size_t slash = key.find('/', 1);
  return std::string(key.substr(1, slash == std::string_view::npos ? key.npos : slash - 1));
}

void Log(const std::string& line) { Say("agent: " + line); }

// The jobs this agent runs. Reconcile is called on the watch's serial executor only.
class Agent {
 public:
  // `tracer` may be null (no tracing).
  Agent(RegistryCenter& registry, std::set<std::string> labels, std::shared_ptr<Tracer> tracer,
        std::shared_ptr<Metrics> metrics, std::chrono::milliseconds grace)
      : registry_(registry),
        labels_(std::move(labels)),
        tracer_(std::move(tracer)),
        metrics_(std::move(metrics)),
        join_timeout_(JoinTimeoutFor(grace)) {}

  // Brings job `name` here in line with the registry.
  void Reconcile(const std::string& name) {
    auto type = registry_.GetDirectly("/" + name);
    auto yaml = registry_.GetDirectly("/" + name + "/config");
    if (!type.ok() || !yaml.ok()) {
      const Status& s = type.ok() ? yaml.status() : type.status();
      if (s.code() == StatusCode::kNotFound) return Stop(name, "removed");
      return Log(fmt::format("job '{}': cannot be read: {}", name, s.ToString()));
    }
    auto config = ConfigFromYaml(*yaml);
    Status valid = config.ok() ? ValidateJobConfiguration(*config) : config.status();
    if (!valid.ok()) {
      return Log(fmt::format("job '{}': config refused, kept as it was: {}", name,
                             infra::OneLine(valid.message())));
    }
    if (!labels_.empty() && labels_.count(config->label.value_or("")) == 0) {
      return Stop(name, "label not selected");
    }
    auto it = running_.find(name);
    if (it != running_.end()) {
      if (it->second.type == *type && it->second.props == config->props) return;
      Stop(name, "type or props changed");
    }
    Start(name, *type, *config);
  }

  // Every job's bootstrap, for the shutdown.
  std::vector<ScheduleJobBootstrap*> Boots() {
    std::vector<ScheduleJobBootstrap*> boots;
    for (auto& [name, job] : running_) boots.push_back(job.boot.get());
    return boots;
  }

 private:
  struct Running {
    std::string type;
    std::map<std::string, std::string> props;
    std::unique_ptr<ScheduleJobBootstrap> boot;
  };

  void Start(const std::string& name, const std::string& type, const JobConfiguration& config) {
    BootstrapOptions options;
    options.task_models = GrpcTaskModels();  // jobs broadcast by the prop task.broadcast
    options.tracer = tracer_;
    options.metrics = metrics_;
    options.shutdown_timeout = join_timeout_;
    options.on_item_run = PrintItemRun;  // the library prints nothing itself
    // By type name: the executor is made from the registry's configuration (SCRIPT's scripts
    // under the process's ScriptProcesses, which the shutdown signals).
    auto boot = std::make_unique<ScheduleJobBootstrap>(registry_, type, config, options);
    if (Status s = boot->Schedule(); !s.ok()) {
      if (skipped_.insert(name + "\n" + type).second) {
        Log(fmt::format("job '{}' (type '{}') not run here: {}", name, infra::OneLine(type),
                        s.message()));
      }
      return;
    }
    Log(fmt::format("job '{}' scheduled ({}, {})", name, type, ScheduleWords(config)));
    running_[name] = Running{type, config.props, std::move(boot)};
  }

  void Stop(const std::string& name, const char* why) {
    auto it = running_.find(name);
    if (it == running_.end()) return;
    it->second.boot->Shutdown();
    running_.erase(it);
    Log(fmt::format("job '{}' stopped ({})", name, why));
  }

  RegistryCenter& registry_;
  const std::set<std::string> labels_;
  const std::shared_ptr<Tracer> tracer_;
  const std::shared_ptr<Metrics> metrics_;
  const std::chrono::milliseconds join_timeout_;  // the jobs' shutdown_timeout
  std::map<std::string, Running> running_;
  std::set<std::string> skipped_;  // job and type already reported as not runnable here
};

int RunAgent(const AgentOptions& o) {
  ApplyLogFormat(o.observability);
  // Signals are taken by sigwait below: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  int code = kExitOk;
  // Two sessions: the jobs' own, and the namespace watch's (whose cache of the top level must
  // not overlap the jobs' caches of their subtrees).
  auto registry = ConnectRegistry(o.registry, &code);
  if (registry == nullptr) return code;
  auto watcher = ConnectRegistry(o.registry, &code);
  if (watcher == nullptr) return code;
  // Event tracing, for every job of the agent (its URL's password is never printed).
  std::shared_ptr<Tracer> tracer;
  if (!o.tracing.empty()) {
    auto opened = Tracer::Open({.url = o.tracing});
    if (!opened.ok()) {
      SayError("agent: --tracing: " + opened.status().message());
      return kExitBadInput;
    }
    tracer = *std::move(opened);
    Log("tracing to " + tracer->redacted_url());
  }
  // Metrics (docs/metrics.md): both sessions count for /readyz.
  auto metrics = Metrics::Create();
  metrics->AddRegistry(*registry, RegistryLabel(o.registry));
  metrics->AddRegistry(*watcher, RegistryLabel(o.registry) + " (namespace watch)");
  metrics->AddTracer(tracer);
  auto metrics_server = ServeMetricsOption(o.observability, metrics, &code);
  if (code != kExitOk) return code;
  Agent agent(*registry, std::set<std::string>(o.labels.begin(), o.labels.end()), tracer, metrics,
              std::chrono::milliseconds(o.shutdown_grace_ms));
  // Workflows (docs/workflows.md): this process may coordinate any of the namespace's.
  ThreadPool workflow_pool(1);
  auto workflows = NewWorkflowCoordinator(*registry, workflow_pool, {});
  if (Status s = workflows->Start(); !s.ok()) SayError("workflows: " + s.message(), "WARN");
  ThreadPool pool(1);
  SerialExecutor events(pool);
  auto watch = reg::CoordinatorRef(*watcher)->WatchTree(
      "/", events,
      [&agent](const TreeEvent& e) {
        const std::string job = JobOf(e.key);
        if (!job.empty() && job[0] != '.') agent.Reconcile(job);  // not /.workflows
      },
      AgentWatches);
  if (!watch.ok()) {
    SayError("agent: watching the namespace: " + watch.status().message());
    return kExitFailed;
  }
  // After a lost connection, every job is looked at again: a reconcile whose reads failed
  // meanwhile is done over, and what changed while the watch was away is caught up.
  auto reconnects = watcher->AddConnectionStateListener(events, [&](ConnectionState state) {
    if (state != ConnectionState::kReconnected) return;
    auto jobs = watcher->GetChildrenKeysDirectly("/");
    if (!jobs.ok()) return Log("listing the jobs after a reconnect: " + jobs.status().ToString());
    for (const std::string& job : *jobs) agent.Reconcile(job);
  });
  std::string labels;
  for (const std::string& l : o.labels) labels += (labels.empty() ? " (labels: " : ", ") + l;
  Log(fmt::format("following {}{}", reg::RedactRegistryUrl(o.registry),
                  labels.empty() ? "" : labels + ")"));
  int sig = 0;
  sigwait(&signals, &sig);
  Say(fmt::format("{} received, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM"));
  workflows->Stop();
  watch->reset();  // no reconcile from now on (waits for one in progress)
  reconnects.reset();
  pool.Stop();
  pool.Join();
  std::vector<ScheduleJobBootstrap*> boots = agent.Boots();
  StopGracefully(executor::ScriptProcesses::Shared(), boots,
                 std::chrono::milliseconds(o.shutdown_grace_ms), signals);
  watcher->Close();
  registry->Close();
  if (tracer != nullptr) {
    // What the jobs posted is written before the process ends (bounded).
    if (Status s = tracer->Shutdown(std::chrono::seconds(10)); !s.ok()) {
      SayError("agent: " + s.message());
    }
    if (uint64_t dropped = tracer->dropped(); dropped > 0) {
      SayError(fmt::format("agent: tracing: {} events were dropped", dropped), "WARN");
    }
  }
  return kExitOk;
}

}  // namespace

void AddAgentCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<AgentOptions>();
  CLI::App* agent = app.add_subcommand(
      "agent",
      "Run every command-line job of a namespace and follow it (jobs added, changed, "
      "removed) until SIGINT or SIGTERM");
  AddRegistryOption(*agent, &opts->registry);
  agent->add_option("--label", opts->labels,
                    "Only jobs whose label is this (repeatable; default: every job)");
  agent
      ->add_option("--shutdown-grace-ms", opts->shutdown_grace_ms,
                   "At SIGINT or SIGTERM, how long running scripts get between SIGTERM and "
                   "SIGKILL (milliseconds; default 10000)")
      ->check(CLI::NonNegativeNumber);
  agent
      ->add_option("--tracing", opts->tracing,
                   "Event tracing of every job run here, as `run --tracing` (docs/tracing.md); "
                   "without a value: " +
                       std::string(kDefaultTracingUrl))
      ->expected(0, 1)
      ->default_str(kDefaultTracingUrl);
  AddObservabilityOptions(*agent, &opts->observability);
  agent->callback([opts, exit_code] { *exit_code = RunAgent(*opts); });
}

}  // namespace elasticjob::cli
