// JobConfiguration: everything ElasticJob 3.x lets a user configure about one job, its
// validation, and its `/{job}/config` YAML form (wire-compatible with ElasticJob 3.0.4/3.0.5).
//
// Build one with the builder, which applies ElasticJob's defaults and validates:
//
// clang-format off
//   auto config = elasticjob::JobConfiguration::Builder("orderSync", 3)
//                     .Cron("0/5 * * * * ?")
//                     .ShardingItemParameters("0=Beijing,1=Shanghai,2=Guangzhou")
//                     .Failover(true)
//                     .Build();
//   if (!config.ok()) { std::cerr << config.status() << "\n"; }  // names field and value
//   std::string yaml = elasticjob::ConfigToYaml(*config);
// clang-format on
//
// Optional fields use std::optional where ElasticJob distinguishes "not set" (null, left
// out of the YAML) from an empty string (written as '').
//
// Thread safety: plain value type.
#ifndef ELASTICJOB_CONFIG_JOB_CONFIGURATION_H_
#define ELASTICJOB_CONFIG_JOB_CONFIGURATION_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob {

// The largest shardingTotalCount a job may have. The leader writes a job's whole assignment
// in one ZooKeeper multi-op, which must fit the server's request limit (jute.maxbuffer,
// 1 MiB by default) however long the namespace and job names are; docs/config.md has the
// measurement behind this figure.
inline constexpr int kMaxShardingTotalCount = 500;

// The longest config text a job may have, in bytes: refused before it is parsed. A real
// config (500 item parameters included) is a few kilobytes; a hostile value of a megabyte
// took a Debug build over a second to parse, on a trigger's path (docs/config.md).
inline constexpr size_t kMaxConfigYamlBytes = 256 * 1024;

// The props key prefix under which the registry's config node carries the execution-control
// settings (`elasticjob-cpp.fixedRate: 30s`, `elasticjob-cpp.timeoutMs: '5000'`): Java
// instances keep them as opaque properties.
inline constexpr std::string_view kExecutionControlPropsPrefix = "elasticjob-cpp.";

// The most retries a job may ask for.
inline constexpr int kMaxRetries = 100;

struct JobConfiguration {
  std::string job_name;
  std::optional<std::string> cron;       // unset (or empty) for one-off jobs
  std::optional<std::string> time_zone;  // unset: the system's zone
  int sharding_total_count = 0;
  std::string sharding_item_parameters;  // "0=Beijing,1=Shanghai"
  std::string job_parameter;
  bool monitor_execution = true;
  bool failover = false;
  bool misfire = true;
  int max_time_diff_seconds = -1;       // -1: no time-skew check
  int reconcile_interval_minutes = 10;  // < 1: no reconcile
  // The dump port of this instance (ElasticJob's monitorPort; docs/dump.md): -1 off, 0 any
  // free port. An instance setting: read from YAML (ConfigFromYaml) but never written to
  // the registry (ConfigToYaml leaves it out: ElasticJob 3's SnakeYAML refuses a config
  // with a key it does not know), so the registry's configuration never changes it.
  int monitor_port = -1;
  std::optional<std::string> job_sharding_strategy_type;                   // unset: AVG_ALLOCATION
  std::optional<std::string> job_executor_thread_pool_size_provider_type;  // unset: CPU
  std::optional<std::string> job_error_handler_type;                       // unset: LOG
  std::vector<std::string> job_listener_types;
  // The `jobExtraConfigurations` YAML exactly as read (tracing and the like, with Java `!!`
  // class tags), written back unchanged. Empty: none.
  std::string job_extra_configurations;
  std::string description;
  std::map<std::string, std::string> props;  // e.g. script.command.line, http.uri
  bool disabled = false;
  bool overwrite = false;
  std::optional<std::string> label;
  bool static_sharding = false;
  // Execution control (docs/scheduling.md). A scheduled job has exactly one of cron,
  // fixed_rate and fixed_delay; 0 is "not set". In the YAML files `elasticjob run`, `agent`
  // and `job add` read they are the top-level keys fixedRate, fixedDelay (durations:
  // `1500ms`, `30s`, `5m`, `1h`), timeoutMs, maxRetries and retryIntervalMs. In the
  // registry's config node they travel inside `props` under kExecutionControlPropsPrefix
  // (ElasticJob 3.0.5's SnakeYAML refuses an unknown top-level key).
  std::chrono::milliseconds fixed_rate{0};   // fire every period, aligned to the cluster
  std::chrono::milliseconds fixed_delay{0};  // next run this long after the last one ended
  int64_t timeout_ms = 0;                    // 0: an execution's items may run forever
  int max_retries = 0;                       // extra attempts of a failed item
  int64_t retry_interval_ms = 0;             // wait between attempts

  friend bool operator==(const JobConfiguration&, const JobConfiguration&) = default;

  class Builder;
};

// ElasticJob's JobConfiguration.newBuilder(jobName, shardingTotalCount): same defaults
// (monitorExecution=true, failover=false, misfire=true, maxTimeDiffSeconds=-1,
// reconcileIntervalMinutes=10, empty strings for parameters and description).
class JobConfiguration::Builder {
 public:
  Builder(std::string job_name, int sharding_total_count);

  Builder& Cron(std::string v);
  Builder& TimeZone(std::string v);
  Builder& ShardingItemParameters(std::string v);
  Builder& JobParameter(std::string v);
  Builder& MonitorExecution(bool v);
  Builder& Failover(bool v);
  Builder& Misfire(bool v);
  Builder& MaxTimeDiffSeconds(int v);
  Builder& ReconcileIntervalMinutes(int v);
  Builder& MonitorPort(int v);
  Builder& JobShardingStrategyType(std::string v);
  Builder& JobExecutorThreadPoolSizeProviderType(std::string v);
  Builder& JobErrorHandlerType(std::string v);
  Builder& JobListenerTypes(std::vector<std::string> v);
  Builder& JobExtraConfigurations(std::string yaml);
  Builder& Description(std::string v);
  Builder& SetProperty(std::string key, std::string value);
  Builder& Disabled(bool v);
  Builder& Overwrite(bool v);
  Builder& Label(std::string v);
  Builder& StaticSharding(bool v);
  Builder& FixedRate(std::chrono::milliseconds v);
  Builder& FixedDelay(std::chrono::milliseconds v);
  Builder& TimeoutMs(int64_t v);
  Builder& MaxRetries(int v);
  Builder& RetryIntervalMs(int64_t v);

  // The configuration, or the first validation error (see ValidateJobConfiguration).
  Result<JobConfiguration> Build() const;

 private:
  JobConfiguration config_;
};

// Checks `config` and returns INVALID_ARGUMENT naming the field and the value on the first
// problem: empty or path-unsafe jobName; shardingTotalCount <= 0 or above
// kMaxShardingTotalCount; a cron Quartz rejects; an
// unknown timeZone; malformed shardingItemParameters (see ParseShardingItemParameters);
// maxTimeDiffSeconds or reconcileIntervalMinutes below -1; a monitorPort outside -1..65535;
// an empty type name, listener
// type or property key; more than one of cron, fixedRate and fixedDelay; a negative
// fixedRate, fixedDelay, timeoutMs, maxRetries or retryIntervalMs; maxRetries above
// kMaxRetries.
Status ValidateJobConfiguration(const JobConfiguration& config);

// Parses ElasticJob's `shardingItemParameters` ("0=Beijing,1=Shanghai") into item -> value.
// Keys and values are trimmed; a trailing comma is allowed, as in ElasticJob. Fails naming
// the offending entry for: a missing or extra `=`, a key that is not an integer, a negative
// item, an item >= `sharding_total_count`, or an item given twice.
Result<std::map<int, std::string>> ParseShardingItemParameters(std::string_view text,
                                                               int sharding_total_count);

// Parses a duration: a non-negative integer and a unit, `ms`, `s`, `m` or `h` (`1500ms`,
// `30s`, `5m`, `1h`); a bare integer is milliseconds. Fails naming `field` and the text.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view field);

// The shortest exact form of `d`: `1500ms`, `30s`, `5m`, `1h`, `0ms`.
std::string FormatDuration(std::chrono::milliseconds d);

// Which ElasticJob release's key set the YAML is written for. Up to 3.0.4 the thread-pool
// key is `jobExecutorServiceHandlerType`; from 3.0.5 `jobExecutorThreadPoolSizeProviderType`.
enum class ConfigYamlVersion { kV3_0_4, kV3_0_5 };

// The `/{job}/config` YAML, as ElasticJob's SnakeYAML writes it: block style, keys in
// alphabetical order, unset values and empty lists and maps left out, '' for empty strings,
// quoting wherever a plain scalar would read back as another type or break the syntax,
// props keys in alphabetical order. monitorPort is not written (an instance setting).
std::string ConfigToYaml(const JobConfiguration& config,
                         ConfigYamlVersion version = ConfigYamlVersion::kV3_0_5);

// Reads a config YAML written by either version (or by hand): unknown keys and `!!` tags are
// ignored, both thread-pool keys are understood, missing keys take the builder defaults,
// invalid UTF-8 is read as U+FFFD (as ElasticJob's Java decoding reads it).
// Fails naming the key and value when a value has the wrong type (`shardingTotalCount:
// expected an integer, got 'three'`), the text is not YAML or is longer than
// kMaxConfigYamlBytes; never throws, and the error is one line (control characters
// escaped). Does not validate: call
// ValidateJobConfiguration on the result.
Result<JobConfiguration> ConfigFromYaml(std::string_view yaml);

}  // namespace elasticjob

#endif  // ELASTICJOB_CONFIG_JOB_CONFIGURATION_H_
