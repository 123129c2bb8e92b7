// What `run`, `agent` and `console` share for running in production (docs/metrics.md):
// --metrics HOST:PORT (Prometheus /metrics, /healthz, /readyz) and --log-format text|json,
// and the lines they print, which follow --log-format.
#ifndef ELASTICJOB_CLI_OBSERVABILITY_H_
#define ELASTICJOB_CLI_OBSERVABILITY_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "elasticjob/metrics/metrics.h"
#include "elasticjob/run_reports.h"

namespace elasticjob::cli {

struct ObservabilityOptions {
  std::string metrics;              // --metrics; empty: not served
  std::string log_format = "text";  // --log-format
};

inline constexpr std::string_view kDefaultMetricsAddress = "127.0.0.1:9404";

void AddObservabilityOptions(CLI::App& command, ObservabilityOptions* options);

// Sets the process's log format from --log-format (call first).
void ApplyLogFormat(const ObservabilityOptions& options);

// The metrics server of --metrics (its address: HOST:PORT, or PORT alone for loopback), or
// null when --metrics was not given. On failure prints the error (naming --metrics and its
// value) and sets `*exit_code` (2 bad address, 1 cannot listen), returning null.
std::unique_ptr<MetricsServer> ServeMetricsOption(const ObservabilityOptions& options,
                                                  std::shared_ptr<Metrics> metrics, int* exit_code);

// The metrics' registry label of a registry URL: its namespace ("" when it has none).
std::string RegistryLabel(std::string_view url);

// "elasticjob: `message`" on stdout, or a JSON line at INFO.
void Say(std::string_view message);
// "elasticjob: `message`" on stderr, or a JSON line at `level`.
void SayError(std::string_view message, std::string_view level = "ERROR");

// The command's on_item_run: one stdout line per item run ("job=x item=0 instance=...
// outcome=SUCCESS duration_ms=3"), or in JSON format a JSON line (INFO, or WARN for a
// failure) with the job, item and instance as fields.
void PrintItemRun(const ItemRunReport& r);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_OBSERVABILITY_H_
