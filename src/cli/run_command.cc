// `elasticjob run FILE.yaml`: runs the jobs a YAML file declares (ElasticJob Spring Boot's
// property names) until SIGINT or SIGTERM, then shuts them down gracefully: no more
// triggers, SIGTERM to the running scripts, SIGKILL to those left after the grace (or at a
// second signal).
#include <fmt/format.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/reg/registry_center.h"
#include "executor/script/script_job.h"

namespace elasticjob::cli {
namespace {

struct RunOptions {
  std::string file;
  std::string registry;
  // --shutdown-grace-ms; -1: the file's shutdownGraceMilliseconds, else the default.
  int64_t shutdown_grace_ms = -1;
};

constexpr int64_t kDefaultShutdownGraceMs = 10000;

// The JobConfiguration keys, plus the Spring Boot-only ones we read or accept.
const std::set<std::string>& KnownJobKeys() {
  static const std::set<std::string> k = {"cron",
                                          "timeZone",
                                          "shardingTotalCount",
                                          "shardingItemParameters",
                                          "jobParameter",
                                          "monitorExecution",
                                          "failover",
                                          "misfire",
                                          "maxTimeDiffSeconds",
                                          "reconcileIntervalMinutes",
                                          "jobShardingStrategyType",
                                          "jobExecutorServiceHandlerType",
                                          "jobExecutorThreadPoolSizeProviderType",
                                          "jobErrorHandlerType",
                                          "jobListenerTypes",
                                          "jobExtraConfigurations",
                                          "description",
                                          "props",
                                          "disabled",
                                          "overwrite",
                                          "label",
                                          "staticSharding",
                                          "elasticJobType",
                                          "elasticJobClass",
                                          "jobBootstrapBeanName",
                                          "jobName"};
  return k;
}

Result<std::string> RegistryUrl(const YAML::Node& reg, const std::string& flag) {
  if (!flag.empty()) return flag;
  std::string ns = reg && reg["namespace"] ? reg["namespace"].as<std::string>() : "elasticjob";
  if (!reg || !reg["serverLists"]) return "memory://" + ns;
  std::string url = "zookeeper://" + reg["serverLists"].as<std::string>() + "/" + ns;
  std::vector<std::string> params;
  auto param = [&](const char* yaml_key, const char* url_key) {
    if (reg[yaml_key])
      params.push_back(std::string(url_key) + "=" + reg[yaml_key].as<std::string>());
  };
  param("digest", "digest");
  param("sessionTimeoutMilliseconds", "sessionTimeoutMs");
  param("connectionTimeoutMilliseconds", "connectionTimeoutMs");
  param("baseSleepTimeMilliseconds", "baseSleepMs");
  param("maxSleepTimeMilliseconds", "maxSleepMs");
  param("maxRetries", "maxRetries");
  for (size_t i = 0; i < params.size(); ++i) url += (i == 0 ? "?" : "&") + params[i];
  return url;
}

// The grace a shutdown gives running scripts between SIGTERM and SIGKILL: the flag, else
// `elasticjob.shutdownGraceMilliseconds`, else 10 s.
Result<std::chrono::milliseconds> ShutdownGrace(const YAML::Node& ej, int64_t flag) {
  int64_t ms = flag;
  if (ms < 0 && ej["shutdownGraceMilliseconds"]) {
    const YAML::Node node = ej["shutdownGraceMilliseconds"];
    try {
      ms = node.as<int64_t>();
    } catch (const YAML::Exception&) {
      return InvalidArgument(fmt::format(
          "elasticjob.shutdownGraceMilliseconds: expected milliseconds, got '{}'",
          node.IsScalar() ? node.Scalar() : "a " + std::string(node.IsMap() ? "map" : "list")));
    }
    if (ms < 0) {
      return InvalidArgument(
          fmt::format("elasticjob.shutdownGraceMilliseconds: must not be negative, got {}", ms));
    }
  }
  return std::chrono::milliseconds(ms < 0 ? kDefaultShutdownGraceMs : ms);
}

struct JobSpec {
  std::string type;
  JobConfiguration config;
  std::shared_ptr<SimpleJob> job;
};

// Every script runs under `processes`, which the shutdown signals.
Result<std::vector<JobSpec>> ReadJobs(const YAML::Node& jobs,
                                      const std::shared_ptr<executor::ScriptProcesses>& processes) {
  std::vector<JobSpec> out;
  if (!jobs || !jobs.IsMap() || jobs.size() == 0) {
    return InvalidArgument("elasticjob.jobs: no jobs declared");
  }
  for (auto it = jobs.begin(); it != jobs.end(); ++it) {
    std::string name = it->first.as<std::string>();
    const YAML::Node j = it->second;  // a copy: the iterator yields a temporary
    if (!j.IsMap())
      return InvalidArgument(fmt::format("job '{}': expected a map of settings", name));
    for (auto k = j.begin(); k != j.end(); ++k) {
      std::string key = k->first.as<std::string>();
      if (KnownJobKeys().count(key) == 0) {
        std::cerr << fmt::format("elasticjob: warning: job '{}': unknown key '{}' ignored\n", name,
                                 key);
      }
    }
    YAML::Node doc = YAML::Clone(j);
    doc["jobName"] = name;
    // Spring Boot binds a comma-separated string to a list: `jobListenerTypes: LOG,OTHER`.
    if (doc["jobListenerTypes"] && doc["jobListenerTypes"].IsScalar()) {
      YAML::Node list(YAML::NodeType::Sequence);
      std::string text = doc["jobListenerTypes"].as<std::string>();
      for (size_t start = 0; start <= text.size();) {
        size_t comma = std::min(text.find(',', start), text.size());
        std::string type = text.substr(start, comma - start);
        type.erase(0, type.find_first_not_of(' '));
        type.erase(type.find_last_not_of(' ') + 1);
        list.push_back(type);
        start = comma + 1;
      }
      doc["jobListenerTypes"] = list;
    }
    YAML::Emitter emit;
    emit << doc;
    auto config = ConfigFromYaml(emit.c_str());
    if (!config.ok()) {
      return InvalidArgument(
          fmt::format("job '{}': {}", name, config.status().message().substr(8)));
    }
    if (Status s = ValidateJobConfiguration(*config); !s.ok()) {
      return InvalidArgument(fmt::format("job '{}': {}", name, s.message()));
    }
    std::string type = j["elasticJobType"] ? j["elasticJobType"].as<std::string>() : "";
    if (type.empty() && j["elasticJobClass"]) {
      return InvalidArgument(
          fmt::format("job '{}': elasticJobClass '{}': Java classes cannot run here; use "
                      "elasticJobType: SCRIPT "
                      "or a C++ SimpleJob",
                      name, j["elasticJobClass"].as<std::string>()));
    }
    if (type != "SCRIPT") {
      return InvalidArgument(
          fmt::format("job '{}': elasticJobType: '{}' is not supported by `elasticjob run` yet "
                      "(supported: SCRIPT)",
                      name, type));
    }
    auto job = executor::ScriptJob::FromProps(config->props, processes);
    if (!job.ok())
      return InvalidArgument(fmt::format("job '{}': {}", name, job.status().message()));
    out.push_back({type, *config, std::move(job).value()});
  }
  return out;
}

int RunJobs(const RunOptions& o) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(o.file);
  } catch (const YAML::Exception& e) {
    std::cerr << "elasticjob: " << o.file << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  YAML::Node ej = root["elasticjob"];
  if (!ej || !ej.IsMap()) {
    std::cerr << "elasticjob: " << o.file << ": expected a top-level 'elasticjob:' map\n";
    return kExitBadInput;
  }
  auto url = RegistryUrl(ej["regCenter"], o.registry);
  auto grace = ShutdownGrace(ej, o.shutdown_grace_ms);
  if (!grace.ok()) {
    std::cerr << "elasticjob: " << o.file << ": " << grace.status().message() << "\n";
    return kExitBadInput;
  }
  auto processes = std::make_shared<executor::ScriptProcesses>();
  auto jobs = ReadJobs(ej["jobs"], processes);
  if (!jobs.ok()) {
    std::cerr << "elasticjob: " << o.file << ": " << jobs.status().message() << "\n";
    return kExitBadInput;
  }
  // Signals are taken by sigwait below: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto registry = NewRegistryCenter(*url);
  if (!registry.ok()) {
    std::cerr << "elasticjob: " << registry.status().message() << "\n";
    return kExitBadInput;
  }
  if (Status s = (*registry)->Init(); !s.ok()) {
    std::cerr << "elasticjob: registry " << *url << ": " << s.message() << "\n";
    return 1;
  }
  // Registered together: a file of many jobs starts in the time of a few (ScheduleAll).
  std::vector<std::unique_ptr<ScheduleJobBootstrap>> running;
  std::vector<ScheduleJobBootstrap*> boots;
  BootstrapOptions options;
  options.job_type_name = "SCRIPT";
  for (auto& spec : *jobs) {
    running.push_back(
        std::make_unique<ScheduleJobBootstrap>(**registry, spec.job, spec.config, options));
    boots.push_back(running.back().get());
  }
  const std::vector<Status> statuses = ScheduleJobBootstrap::ScheduleAll(boots);
  bool failed = false;
  for (size_t i = 0; i < statuses.size(); ++i) {
    const auto& spec = (*jobs)[i];
    if (!statuses[i].ok()) {
      std::cerr << "elasticjob: " << statuses[i].message() << "\n";
      failed = true;
      continue;
    }
    std::cout << fmt::format("elasticjob: job '{}' scheduled ({}, cron '{}') on {}\n",
                             spec.config.job_name, spec.type, spec.config.cron.value_or(""), *url);
  }
  std::cout << std::flush;
  if (failed) {
    ScheduleJobBootstrap::ShutdownAll(boots);
    return kExitBadInput;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << fmt::format("elasticjob: {} received, shutting down\n",
                           sig == SIGINT ? "SIGINT" : "SIGTERM")
            << std::flush;
  // No script starts from now on; those running get SIGTERM and the grace to end, while the
  // jobs stop triggering and wait for their runs; SIGKILL ends the scripts left.
  const auto deadline = std::chrono::steady_clock::now() + *grace;
  processes->StopStarting();
  if (int n = processes->Signal(SIGTERM); n > 0) {
    std::cout << fmt::format("elasticjob: SIGTERM sent to {} running script(s), grace {} ms\n", n,
                             grace->count())
              << std::flush;
  }
  std::thread stopping([&boots] { ScheduleJobBootstrap::ShutdownAll(boots); });
  // A second SIGINT or SIGTERM cuts the grace short. The thread is woken by a signal of its
  // own when the shutdown is over.
  std::atomic<bool> over{false};
  std::thread impatient([&] {
    int again = 0;
    sigwait(&signals, &again);
    if (over.load()) return;
    std::cout << "elasticjob: second signal, killing the running scripts now (SIGKILL)\n"
              << std::flush;
    processes->Signal(SIGKILL);
  });
  if (!processes->WaitIdle(deadline)) {
    int n = processes->Signal(SIGKILL);
    std::cout
        << fmt::format(
               "elasticjob: grace of {} ms over, killing {} script(s) still running (SIGKILL)\n",
               grace->count(), n)
        << std::flush;
    if (!processes->WaitIdle(std::chrono::steady_clock::now() + std::chrono::minutes(1))) {
      std::cerr << "elasticjob: scripts still running a minute after SIGKILL\n";
    }
  }
  stopping.join();
  over.store(true);
  pthread_kill(impatient.native_handle(), SIGTERM);
  impatient.join();
  running.clear();
  (*registry)->Close();
  return kExitOk;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* run =
      app.add_subcommand("run", "Run the jobs a YAML file declares until SIGINT or SIGTERM");
  run->add_option("file", opts->file, "YAML file (ElasticJob Spring Boot property names)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--registry", opts->registry,
                  "Registry URL (zookeeper://host:port/namespace or memory://namespace); "
                  "overrides the file's regCenter");
  run->add_option("--shutdown-grace-ms", opts->shutdown_grace_ms,
                  "At SIGINT or SIGTERM, how long running scripts get between SIGTERM and SIGKILL "
                  "(milliseconds; overrides the file's shutdownGraceMilliseconds; default 10000)")
      ->check(CLI::NonNegativeNumber);
  run->callback([opts, exit_code] { *exit_code = RunJobs(*opts); });
}

}  // namespace elasticjob::cli
