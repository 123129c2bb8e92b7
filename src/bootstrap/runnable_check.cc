#include "bootstrap/runnable_check.h"

#include <fmt/format.h>

#include <algorithm>

#include "bootstrap/item_limiter.h"
#include "error_handler/job_error_handler.h"
#include "executor/job_listeners.h"
#include "executor/typed_job.h"

namespace elasticjob::config {

Status CheckRunnable(const JobConfiguration& config, const JobShardingStrategyRegistry& strategies,
                     const std::set<std::string>& listener_types) {
  if (auto strategy = strategies.Find(config.job_sharding_strategy_type.value_or(""));
      !strategy.ok()) {
    return strategy.status();
  }
  if (auto limit = bootstrap::ItemLimitOf(config); !limit.ok()) return limit.status();
  if (auto handler =
          error_handler::NewJobErrorHandler(config, error_handler::NotificationSender::Shared());
      !handler.ok()) {
    return handler.status();
  }
  const auto builtin = executor::BuiltinJobListenerTypes();
  for (const std::string& type : config.job_listener_types) {
    if (builtin.count(type) != 0 || listener_types.count(type) != 0) continue;
    std::set<std::string> known = listener_types;
    for (const auto& [name, factory] : builtin) known.insert(name);
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    return InvalidArgument(
        fmt::format("jobListenerTypes: unknown type '{}' (known: {})", type, list));
  }
  return Status::Ok();
}

Status WriterCheck(const JobConfiguration& config, const std::string& job_type,
                   const std::optional<JobConfiguration>& current) {
  // What the registry has already is not refused again: its names may be another process's.
  JobConfiguration probe = config;
  std::set<std::string> listener_types;
  if (current.has_value()) {
    if (probe.job_sharding_strategy_type == current->job_sharding_strategy_type) {
      probe.job_sharding_strategy_type.reset();
    }
    listener_types.insert(current->job_listener_types.begin(), current->job_listener_types.end());
  }
  Clock& clock = Clock::System();
  if (Status s =
          CheckRunnable(probe, JobShardingStrategyRegistry::WithBuiltins(clock), listener_types);
      !s.ok()) {
    return s;
  }
  // The job type's props, when this process knows the type.
  auto factory = executor::FindJobType(job_type, {});
  if (!factory.ok()) return Status::Ok();
  try {
    auto made = (*factory)(config);
    if (!made.ok()) return made.status();
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("job type '{}': its factory threw: {}", job_type, e.what()));
  } catch (...) {
    return InvalidArgument(fmt::format("job type '{}': its factory threw", job_type));
  }
  return Status::Ok();
}

}  // namespace elasticjob::config
