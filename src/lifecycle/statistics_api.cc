#include "elasticjob/lifecycle/statistics_api.h"

#include <fmt/format.h>

#include <map>

#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/fixed_rate.h"
#include "elasticjob/schedule/time_zone.h"
#include "lifecycle/lifecycle_reads.h"

namespace elasticjob {

const char* JobStatusName(JobStatus status) {
  switch (status) {
    case JobStatus::kOk:
      return "OK";
    case JobStatus::kCrashed:
      return "CRASHED";
    case JobStatus::kDisabled:
      return "DISABLED";
    case JobStatus::kShardingFlag:
      return "SHARDING_FLAG";
  }
  return "?";
}

const char* ShardingStatusName(ShardingStatus status) {
  switch (status) {
    case ShardingStatus::kDisabled:
      return "DISABLED";
    case ShardingStatus::kRunning:
      return "RUNNING";
    case ShardingStatus::kShardingFlag:
      return "SHARDING_FLAG";
    case ShardingStatus::kPending:
      return "PENDING";
  }
  return "?";
}

namespace {

// The value at `key`, or "" when it does not exist.
Result<std::string> ValueOrEmpty(RegistryCenter& reg, const std::string& key) {
  auto value = reg.GetDirectly(key);
  if (value.ok() || value.status().code() != StatusCode::kNotFound) return value;
  return std::string();
}

class JobStatisticsAPIImpl final : public JobStatisticsAPI {
 public:
  explicit JobStatisticsAPIImpl(RegistryCenter& reg) : reg_(reg) {}

  Result<int> GetJobsTotalCount() override {
    auto jobs = lifecycle::JobNames(reg_);
    if (!jobs.ok()) return jobs.status();
    return static_cast<int>(jobs->size());
  }

  Result<std::vector<JobBriefInfo>> GetAllJobsBriefInfo() override {
    auto jobs = lifecycle::JobNames(reg_);
    if (!jobs.ok()) return jobs.status();
    std::vector<JobBriefInfo> result;
    for (const std::string& job : *jobs) {
      auto info = GetJobBriefInfo(job);
      if (!info.ok() && info.status().code() == StatusCode::kFailedPrecondition) {
        // One job's unreadable config does not hide the others: listed, with the reason.
        info = Unreadable(job, info.status());
      }
      if (!info.ok()) {
        if (info.status().code() == StatusCode::kNotFound) continue;  // removed meanwhile
        return info.status();
      }
      result.push_back(*std::move(info));
    }
    return result;
  }

  Result<JobBriefInfo> GetJobBriefInfo(std::string_view job_name) override {
    auto config = lifecycle::ReadConfig(reg_, job_name);
    if (!config.ok()) return config.status();
    JobBriefInfo info;
    info.job_name = std::string(job_name);
    info.description = config->description;
    info.cron = lifecycle::ScheduleText(*config);
    info.sharding_total_count = config->sharding_total_count;
    auto instances = lifecycle::Instances(reg_, job_name);
    if (!instances.ok()) return instances.status();
    info.instance_count = static_cast<int>(instances->size());
    auto status = ComputeStatus(job_name, *instances);
    if (!status.ok()) return status.status();
    info.status = *status;
    return info;
  }

  Result<std::vector<JobBriefInfo>> GetJobsBriefInfo(std::string_view server_ip) override {
    if (Status s = lifecycle::CheckName("server", server_ip); !s.ok()) return s;
    auto jobs = lifecycle::JobNames(reg_);
    if (!jobs.ok()) return jobs.status();
    std::vector<JobBriefInfo> result;
    for (const std::string& job : *jobs) {
      auto state = reg_.GetDirectly(fmt::format("/{}/servers/{}", job, server_ip));
      if (!state.ok()) {
        if (state.status().code() == StatusCode::kNotFound) continue;
        return state.status();
      }
      JobBriefInfo info;
      info.job_name = job;
      info.status = *state == "DISABLED" ? JobStatus::kDisabled : JobStatus::kOk;
      auto instances = lifecycle::Instances(reg_, job);
      if (!instances.ok()) return instances.status();
      for (const auto& instance : *instances) {
        if (instance.server_ip == server_ip) ++info.instance_count;
      }
      result.push_back(std::move(info));
    }
    return result;
  }

  Result<std::vector<TimePoint>> GetNextFireTimes(std::string_view job_name, int count,
                                                  TimePoint after) override {
    auto config = lifecycle::ReadConfig(reg_, job_name);
    if (!config.ok()) return config.status();
    std::vector<TimePoint> times;
    if (config->fixed_rate.count() > 0) {
      return FixedRateNextFireTimes(after, config->fixed_rate, count);
    }
    if (!config->cron.has_value() || config->cron->empty()) return times;
    auto cron = CronExpression::Parse(*config->cron);
    if (!cron.ok()) {
      return FailedPrecondition(fmt::format("job '{}': {}", job_name, cron.status().message()));
    }
    auto zone = config->time_zone.has_value() ? TimeZone::Parse(*config->time_zone)
                                              : Result<TimeZone>(TimeZone::SystemDefault());
    if (!zone.ok()) {
      return FailedPrecondition(fmt::format("job '{}': {}", job_name, zone.status().message()));
    }
    return cron->NextFireTimes(after, *zone, count);
  }

 private:
  Result<JobBriefInfo> Unreadable(const std::string& job, const Status& why) {
    JobBriefInfo info;
    info.job_name = job;
    info.description = "config not readable: " + why.message();
    auto instances = lifecycle::Instances(reg_, job);
    if (!instances.ok()) return instances.status();
    info.instance_count = static_cast<int>(instances->size());
    auto status = ComputeStatus(job, *instances);
    if (!status.ok()) return status.status();
    info.status = *status;
    return info;
  }

  // JobStatisticsAPIImpl.getJobStatus, over the registry's current nodes.
  Result<JobStatus> ComputeStatus(std::string_view job_name,
                                  const std::vector<lifecycle::InstanceEntry>& instances) {
    if (instances.empty()) return JobStatus::kCrashed;  // nothing more to read
    std::set<std::string> live;
    for (const auto& instance : instances) live.insert(instance.instance_id);
    auto servers = lifecycle::Children(reg_, fmt::format("/{}/servers", job_name));
    if (!servers.ok()) return servers.status();
    std::vector<std::string> states;
    for (const std::string& ip : *servers) {
      auto state = ValueOrEmpty(reg_, fmt::format("/{}/servers/{}", job_name, ip));
      if (!state.ok()) return state.status();
      states.push_back(*std::move(state));
    }
    std::vector<std::string> owners;
    if (lifecycle::ComputeJobStatus(live, states, {}) != JobStatus::kDisabled) {
      auto items = lifecycle::Children(reg_, fmt::format("/{}/sharding", job_name));
      if (!items.ok()) return items.status();
      for (const std::string& item : *items) {
        auto owner = ValueOrEmpty(reg_, fmt::format("/{}/sharding/{}/instance", job_name, item));
        if (!owner.ok()) return owner.status();
        owners.push_back(*std::move(owner));
      }
    }
    return lifecycle::ComputeJobStatus(live, states, owners);
  }

  RegistryCenter& reg_;
};

class ServerStatisticsAPIImpl final : public ServerStatisticsAPI {
 public:
  explicit ServerStatisticsAPIImpl(RegistryCenter& reg) : reg_(reg) {}

  Result<int> GetServersTotalCount() override {
    auto servers = GetAllServersBriefInfo();
    if (!servers.ok()) return servers.status();
    return static_cast<int>(servers->size());
  }

  Result<std::vector<ServerBriefInfo>> GetAllServersBriefInfo() override {
    auto jobs = lifecycle::JobNames(reg_);
    if (!jobs.ok()) return jobs.status();
    std::map<std::string, ServerBriefInfo> servers;
    for (const std::string& job : *jobs) {
      auto ips = lifecycle::Children(reg_, fmt::format("/{}/servers", job));
      if (!ips.ok()) return ips.status();
      for (const std::string& ip : *ips) {
        ServerBriefInfo& info = servers[ip];
        info.server_ip = ip;
        info.job_names.insert(job);
        auto state = ValueOrEmpty(reg_, fmt::format("/{}/servers/{}", job, ip));
        if (!state.ok()) return state.status();
        if (*state == "DISABLED") ++info.disabled_jobs;
      }
      auto instances = lifecycle::Instances(reg_, job);
      if (!instances.ok()) return instances.status();
      for (const auto& instance : *instances) {
        auto it = servers.find(instance.server_ip);
        if (it != servers.end()) it->second.instances.insert(instance.instance_id);
      }
    }
    std::vector<ServerBriefInfo> result;
    for (auto& [ip, info] : servers) result.push_back(std::move(info));
    return result;
  }

 private:
  RegistryCenter& reg_;
};

class ShardingStatisticsAPIImpl final : public ShardingStatisticsAPI {
 public:
  explicit ShardingStatisticsAPIImpl(RegistryCenter& reg) : reg_(reg) {}

  Result<std::vector<ShardingInfo>> GetShardingInfo(std::string_view job_name) override {
    if (Status s = lifecycle::CheckJobExists(reg_, job_name); !s.ok()) return s;
    auto items = lifecycle::Children(reg_, fmt::format("/{}/sharding", job_name));
    if (!items.ok()) return items.status();
    auto instances = lifecycle::Instances(reg_, job_name);
    if (!instances.ok()) return instances.status();
    std::vector<ShardingInfo> result;
    for (const std::string& item : *items) {
      ShardingInfo info;
      try {
        info.item = std::stoi(item);
      } catch (const std::exception&) {
        continue;  // not an item node
      }
      const std::string base = fmt::format("/{}/sharding/{}/", job_name, item);
      auto owner = ValueOrEmpty(reg_, base + "instance");
      auto disabled = lifecycle::Exists(reg_, base + "disabled");
      auto running = lifecycle::Exists(reg_, base + "running");
      auto failover = lifecycle::Exists(reg_, base + "failover");
      for (const Status& s :
           {owner.status(), disabled.status(), running.status(), failover.status()}) {
        if (!s.ok()) return s;
      }
      info.instance_id = *owner;
      bool live = false;
      for (const auto& instance : *instances) {
        if (instance.instance_id != *owner) continue;
        live = true;
        info.server_ip = instance.server_ip;
      }
      if (!live && !owner->empty()) info.server_ip = owner->substr(0, owner->find("@-@"));
      info.failover = *failover;
      info.status = lifecycle::ComputeShardingStatus(*disabled, *running, live);
      result.push_back(std::move(info));
    }
    std::sort(result.begin(), result.end(),
              [](const ShardingInfo& a, const ShardingInfo& b) { return a.item < b.item; });
    return result;
  }

 private:
  RegistryCenter& reg_;
};

}  // namespace

std::unique_ptr<JobStatisticsAPI> NewJobStatisticsAPI(RegistryCenter& registry) {
  return std::make_unique<JobStatisticsAPIImpl>(registry);
}
std::unique_ptr<ServerStatisticsAPI> NewServerStatisticsAPI(RegistryCenter& registry) {
  return std::make_unique<ServerStatisticsAPIImpl>(registry);
}
std::unique_ptr<ShardingStatisticsAPI> NewShardingStatisticsAPI(RegistryCenter& registry) {
  return std::make_unique<ShardingStatisticsAPIImpl>(registry);
}

}  // namespace elasticjob
