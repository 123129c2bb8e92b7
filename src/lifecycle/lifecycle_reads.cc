#include "lifecycle/lifecycle_reads.h"

#include <fmt/format.h>

#include <algorithm>

#include "infra/printable.h"
#include "instance/job_instance.h"

namespace elasticjob::lifecycle {

Status CheckName(std::string_view what, std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return InvalidArgument(
        fmt::format("{} '{}': expected a non-empty name without '/'", what, infra::OneLine(name)));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> Children(RegistryCenter& reg, const std::string& key) {
  auto children = reg.GetChildrenKeysDirectly(key);
  if (!children.ok()) {
    if (children.status().code() == StatusCode::kNotFound) return std::vector<std::string>{};
    return children.status();
  }
  std::sort(children->begin(), children->end());
  return children;
}

Result<bool> Exists(RegistryCenter& reg, const std::string& key) {
  auto value = reg.GetDirectly(key);
  if (value.ok()) return true;
  if (value.status().code() == StatusCode::kNotFound) return false;
  return value.status();
}

Result<std::vector<std::string>> JobNames(RegistryCenter& reg) {
  auto top = Children(reg, "/");
  if (!top.ok()) return top.status();
  std::vector<std::string> jobs;
  for (const std::string& name : *top) {
    auto has = Exists(reg, "/" + name + "/config");
    if (!has.ok()) return has.status();
    if (*has) jobs.push_back(name);
  }
  return jobs;
}

Status CheckJobExists(RegistryCenter& reg, std::string_view job_name) {
  if (Status s = CheckName("job", job_name); !s.ok()) return s;
  auto has = Exists(reg, fmt::format("/{}/config", job_name));
  if (!has.ok()) return has.status();
  if (!*has) return NotFound(fmt::format("job '{}' not found", job_name));
  return Status::Ok();
}

std::string ScheduleText(const JobConfiguration& config) {
  if (config.fixed_rate.count() > 0) return "fixedRate " + FormatDuration(config.fixed_rate);
  if (config.fixed_delay.count() > 0) return "fixedDelay " + FormatDuration(config.fixed_delay);
  return config.cron.value_or("");
}

Result<JobConfiguration> ReadConfig(RegistryCenter& reg, std::string_view job_name) {
  if (Status s = CheckName("job", job_name); !s.ok()) return s;
  auto yaml = reg.GetDirectly(fmt::format("/{}/config", job_name));
  if (!yaml.ok()) {
    if (yaml.status().code() == StatusCode::kNotFound) {
      return NotFound(fmt::format("job '{}' not found", job_name));
    }
    return yaml.status();
  }
  // The caller's arguments are fine; the registry's state is not.
  auto config = ConfigFromYaml(*yaml);
  if (!config.ok()) {
    return FailedPrecondition(fmt::format("job '{}': {}", job_name, config.status().message()));
  }
  return config;
}

Result<std::vector<InstanceEntry>> Instances(RegistryCenter& reg, std::string_view job_name) {
  const std::string root = fmt::format("/{}/instances", job_name);
  auto ids = Children(reg, root);
  if (!ids.ok()) return ids.status();
  std::vector<InstanceEntry> result;
  for (const std::string& id : *ids) {
    auto value = reg.GetDirectly(root + "/" + id);
    if (!value.ok()) {
      if (value.status().code() == StatusCode::kNotFound) continue;  // gone meanwhile
      return value.status();
    }
    InstanceEntry entry{id, id.substr(0, id.find(instance::kDelimiter))};
    if (auto parsed = instance::JobInstance::FromYaml(*value); parsed.ok()) {
      entry.server_ip = parsed->server_ip;
    }
    result.push_back(std::move(entry));
  }
  return result;
}

JobStatus ComputeJobStatus(const std::set<std::string>& live_instance_ids,
                           const std::vector<std::string>& server_states,
                           const std::vector<std::string>& item_owners) {
  if (live_instance_ids.empty()) return JobStatus::kCrashed;
  size_t disabled = 0;
  for (const std::string& state : server_states) {
    if (state == "DISABLED") ++disabled;
  }
  if (disabled == server_states.size()) return JobStatus::kDisabled;
  bool any_owner = false;
  for (const std::string& owner : item_owners) {
    if (owner.empty()) continue;
    any_owner = true;
    if (live_instance_ids.count(owner) == 0) return JobStatus::kShardingFlag;
  }
  return any_owner ? JobStatus::kOk : JobStatus::kShardingFlag;
}

ShardingStatus ComputeShardingStatus(bool disabled, bool running, bool owner_live) {
  return disabled      ? ShardingStatus::kDisabled
         : running     ? ShardingStatus::kRunning
         : !owner_live ? ShardingStatus::kShardingFlag
                       : ShardingStatus::kPending;
}

}  // namespace elasticjob::lifecycle
