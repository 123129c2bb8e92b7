#include "elasticjob/config/job_configuration.h"

#include <fmt/format.h>

#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/time_zone.h"
#include "infra/printable.h"

namespace elasticjob {

JobConfiguration::Builder::Builder(std::string job_name, int sharding_total_count) {
  config_.job_name = std::move(job_name);
  config_.sharding_total_count = sharding_total_count;
}

#define EJ_BUILDER_SETTER(Method, field, Type)                           \
  JobConfiguration::Builder& JobConfiguration::Builder::Method(Type v) { \
    config_.field = std::move(v);                                        \
    return *this;                                                        \
  }
EJ_BUILDER_SETTER(Cron, cron, std::string)
EJ_BUILDER_SETTER(TimeZone, time_zone, std::string)
EJ_BUILDER_SETTER(ShardingItemParameters, sharding_item_parameters, std::string)
EJ_BUILDER_SETTER(JobParameter, job_parameter, std::string)
EJ_BUILDER_SETTER(MonitorExecution, monitor_execution, bool)
EJ_BUILDER_SETTER(Failover, failover, bool)
EJ_BUILDER_SETTER(Misfire, misfire, bool)
EJ_BUILDER_SETTER(MaxTimeDiffSeconds, max_time_diff_seconds, int)
EJ_BUILDER_SETTER(ReconcileIntervalMinutes, reconcile_interval_minutes, int)
EJ_BUILDER_SETTER(MonitorPort, monitor_port, int)
EJ_BUILDER_SETTER(JobShardingStrategyType, job_sharding_strategy_type, std::string)
EJ_BUILDER_SETTER(JobExecutorThreadPoolSizeProviderType,
                  job_executor_thread_pool_size_provider_type, std::string)
EJ_BUILDER_SETTER(JobErrorHandlerType, job_error_handler_type, std::string)
EJ_BUILDER_SETTER(JobListenerTypes, job_listener_types, std::vector<std::string>)
EJ_BUILDER_SETTER(JobExtraConfigurations, job_extra_configurations, std::string)
EJ_BUILDER_SETTER(Description, description, std::string)
EJ_BUILDER_SETTER(Disabled, disabled, bool)
EJ_BUILDER_SETTER(Overwrite, overwrite, bool)
EJ_BUILDER_SETTER(Label, label, std::string)
EJ_BUILDER_SETTER(StaticSharding, static_sharding, bool)
EJ_BUILDER_SETTER(FixedRate, fixed_rate, std::chrono::milliseconds)
EJ_BUILDER_SETTER(FixedDelay, fixed_delay, std::chrono::milliseconds)
EJ_BUILDER_SETTER(TimeoutMs, timeout_ms, int64_t)
EJ_BUILDER_SETTER(MaxRetries, max_retries, int)
EJ_BUILDER_SETTER(RetryIntervalMs, retry_interval_ms, int64_t)
#undef EJ_BUILDER_SETTER

JobConfiguration::Builder& JobConfiguration::Builder::SetProperty(std::string key,
                                                                  std::string value) {
  config_.props[std::move(key)] = std::move(value);
  return *this;
}

Result<JobConfiguration> JobConfiguration::Builder::Build() const {
  Status s = ValidateJobConfiguration(config_);
  if (!s.ok()) return s;
  return config_;
}

namespace {

Status CheckJobName(const std::string& name) {
  if (name.empty()) return InvalidArgument("jobName: must not be empty");
  if (name == "." || name == ".." || name.find('/') != std::string::npos) {
    return InvalidArgument(
        fmt::format("jobName: '{}' cannot be a registry node name (no '/', '.' or '..')", name));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7F) {
      return InvalidArgument(fmt::format("jobName: '{}' contains a control character", name));
    }
  }
  return Status::Ok();
}

Status CheckTypeName(const char* field, const std::optional<std::string>& v) {
  if (v.has_value() && v->empty()) {
    return InvalidArgument(fmt::format("{}: must not be empty when set", field));
  }
  return Status::Ok();
}

Status ValidateExecutionControl(const JobConfiguration& c) {
  if (c.fixed_rate.count() < 0) {
    return InvalidArgument(
        fmt::format("fixedRate: must be a positive duration, got {}ms", c.fixed_rate.count()));
  }
  if (c.fixed_delay.count() < 0) {
    return InvalidArgument(
        fmt::format("fixedDelay: must be a positive duration, got {}ms", c.fixed_delay.count()));
  }
  const bool has_cron = c.cron.has_value() && !c.cron->empty();
  const int kinds =
      (has_cron ? 1 : 0) + (c.fixed_rate.count() > 0 ? 1 : 0) + (c.fixed_delay.count() > 0 ? 1 : 0);
  if (kinds > 1) {
    return InvalidArgument(fmt::format(
        "cron/fixedRate/fixedDelay: give exactly one, got cron '{}', fixedRate '{}', "
        "fixedDelay '{}'",
        c.cron.value_or(""), c.fixed_rate.count() > 0 ? FormatDuration(c.fixed_rate) : "",
        c.fixed_delay.count() > 0 ? FormatDuration(c.fixed_delay) : ""));
  }
  if (c.timeout_ms < 0) {
    return InvalidArgument(fmt::format(
        "timeoutMs: must be 0 (no timeout) or a number of milliseconds, got {}", c.timeout_ms));
  }
  if (c.max_retries < 0 || c.max_retries > kMaxRetries) {
    return InvalidArgument(
        fmt::format("maxRetries: must be between 0 and {}, got {}", kMaxRetries, c.max_retries));
  }
  if (c.retry_interval_ms < 0) {
    return InvalidArgument(fmt::format(
        "retryIntervalMs: must be 0 or a number of milliseconds, got {}", c.retry_interval_ms));
  }
  return Status::Ok();
}

Status Validate(const JobConfiguration& c) {
  if (Status s = CheckJobName(c.job_name); !s.ok()) return s;
  if (c.sharding_total_count <= 0) {
    return InvalidArgument(
        fmt::format("shardingTotalCount: must be greater than 0, got {}", c.sharding_total_count));
  }
  if (c.sharding_total_count > kMaxShardingTotalCount) {
    return InvalidArgument(fmt::format("shardingTotalCount: must be at most {}, got {}",
                                       kMaxShardingTotalCount, c.sharding_total_count));
  }
  if (c.cron.has_value() && !c.cron->empty()) {
    auto cron = CronExpression::Parse(*c.cron);
    if (!cron.ok()) return InvalidArgument("cron: " + cron.status().message());
  }
  if (c.time_zone.has_value()) {
    auto zone = TimeZone::Parse(*c.time_zone);
    if (!zone.ok()) return zone.status();
  }
  auto params = ParseShardingItemParameters(c.sharding_item_parameters, c.sharding_total_count);
  if (!params.ok()) return params.status();
  if (c.max_time_diff_seconds < -1) {
    return InvalidArgument(
        fmt::format("maxTimeDiffSeconds: must be -1 (no check) or at least 0, got {}",
                    c.max_time_diff_seconds));
  }
  if (c.reconcile_interval_minutes < -1) {
    return InvalidArgument(
        fmt::format("reconcileIntervalMinutes: must be -1 or 0 (no reconcile) or a number of "
                    "minutes, got {}",
                    c.reconcile_interval_minutes));
  }
  if (c.monitor_port < -1 || c.monitor_port > 65535) {
    return InvalidArgument(fmt::format(
        "monitorPort: must be -1 (no dump port), 0 (any free port) or a TCP port up to 65535, "
        "got {}",
        c.monitor_port));
  }
  if (Status s = CheckTypeName("jobShardingStrategyType", c.job_sharding_strategy_type); !s.ok())
    return s;
  if (Status s = CheckTypeName("jobExecutorThreadPoolSizeProviderType",
                               c.job_executor_thread_pool_size_provider_type);
      !s.ok())
    return s;
  if (Status s = CheckTypeName("jobErrorHandlerType", c.job_error_handler_type); !s.ok()) return s;
  for (size_t i = 0; i < c.job_listener_types.size(); ++i) {
    if (c.job_listener_types[i].empty()) {
      return InvalidArgument(fmt::format("jobListenerTypes[{}]: must not be empty", i));
    }
  }
  for (const auto& [key, value] : c.props) {
    if (key.empty()) return InvalidArgument("props: a property key is empty");
  }
  return ValidateExecutionControl(c);
}

}  // namespace

Status ValidateJobConfiguration(const JobConfiguration& c) {
  Status s = Validate(c);
  // The values quoted may hold line breaks (a job name from a YAML key, say).
  return s.ok() ? s : Status(s.code(), infra::OneLine(s.message()));
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view field) {
  auto bad = [&] {
    return InvalidArgument(
        fmt::format("{}: expected a duration such as 1500ms, 30s, 5m or 1h, got '{}'", field,
                    infra::Printable(text, 60)));
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return bad();
  int64_t value = 0;
  for (size_t i = 0; i < digits; ++i) value = value * 10 + (text[i] - '0');
  const std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60 * 1000;
  } else if (unit == "h") {
    scale = 3600 * 1000;
  } else {
    return bad();
  }
  // Beyond 63 bits of milliseconds (some 292 million years): refused, not wrapped.
  if (value > INT64_MAX / scale) return bad();
  return std::chrono::milliseconds(value * scale);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  if (ms != 0 && ms % (3600 * 1000) == 0) return fmt::format("{}h", ms / (3600 * 1000));
  if (ms != 0 && ms % (60 * 1000) == 0) return fmt::format("{}m", ms / (60 * 1000));
  if (ms != 0 && ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

}  // namespace elasticjob
