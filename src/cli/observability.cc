#include "cli/observability.h"

#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "elasticjob/api/job_log.h"
#include "infra/log.h"
#include "reg/registry_url.h"

namespace elasticjob::cli {

void AddObservabilityOptions(CLI::App& command, ObservabilityOptions* options) {
  command
      .add_option("--metrics", options->metrics,
                  "Serve Prometheus metrics at HOST:PORT (/metrics, /healthz, /readyz; "
                  "docs/metrics.md); PORT alone: on 127.0.0.1; without a value: " +
                      std::string(kDefaultMetricsAddress))
      ->expected(0, 1)
      ->default_str(std::string(kDefaultMetricsAddress));
  command
      .add_option("--log-format", options->log_format,
                  "text (default) or json: one JSON object per line (time, level, job, item, "
                  "instance, message)")
      ->check(CLI::IsMember({"text", "json"}));
}

void ApplyLogFormat(const ObservabilityOptions& options) {
  SetLogFormat(options.log_format == "json" ? LogFormat::kJson : LogFormat::kText);
}

std::unique_ptr<MetricsServer> ServeMetricsOption(const ObservabilityOptions& options,
                                                  std::shared_ptr<Metrics> metrics,
                                                  int* exit_code) {
  if (options.metrics.empty()) return nullptr;
  std::string listen = options.metrics;
  if (listen.find(':') == std::string::npos && !listen.empty() &&
      listen.find_first_not_of("0123456789") == std::string::npos) {
    listen = "127.0.0.1:" + listen;
  }
  auto server = ServeMetrics(std::move(metrics), {.listen = listen, .option_name = "--metrics"});
  if (!server.ok()) {
    std::string message = server.status().message();
    if (listen != options.metrics) {
      message = fmt::format("--metrics '{}': {}", options.metrics, message);
    }
    SayError(message);
    *exit_code =
        server.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailed;
    return nullptr;
  }
  Say(fmt::format("metrics at {}/metrics", (*server)->url()));
  return std::move(server).value();
}

std::string RegistryLabel(std::string_view url) {
  if (url.starts_with("memory://")) {
    std::string_view rest = url.substr(9);
    return std::string(rest.substr(0, rest.find_first_of("/?")));
  }
  auto parsed = reg::ParseRegistryUrl(url);
  return parsed.ok() ? parsed->name_space : "";
}

void Say(std::string_view message) {
  const std::string line = fmt::format("elasticjob: {}\n", message);
  infra::WriteLogLine(stdout, "INFO", {}, message, line);
  std::fflush(stdout);
}

void PrintItemRun(const ItemRunReport& r) {
  std::string line =
      fmt::format("job={} item={} instance={} outcome={}{} duration_ms={}{}{}\n", r.job_name,
                  r.item, r.instance_id, r.success ? "SUCCESS" : "FAILURE",
                  r.success ? "" : " error=\"" + r.error + "\"", r.duration.count(),
                  r.misfire_rerun ? " misfire_rerun=true" : "", r.failover ? " failover=true" : "");
  if (infra::JsonLogs()) {
    // The same words as a message; job, item and instance as fields.
    std::string message = fmt::format(
        "outcome={}{} duration_ms={}{}{}", r.success ? "SUCCESS" : "FAILURE",
        r.success ? "" : " error=\"" + r.error + "\"", r.duration.count(),
        r.misfire_rerun ? " misfire_rerun=true" : "", r.failover ? " failover=true" : "");
    infra::WriteLogLine(stdout, r.success ? "INFO" : "WARN",
                        {.job = r.job_name, .item = r.item, .instance = r.instance_id}, message,
                        line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  std::fflush(stdout);
}

void SayError(std::string_view message, std::string_view level) {
  const std::string line = fmt::format("elasticjob: {}\n", message);
  infra::WriteLogLine(stderr, level, {}, message, line);
}

}  // namespace elasticjob::cli
