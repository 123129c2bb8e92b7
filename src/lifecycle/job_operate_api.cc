#include "elasticjob/lifecycle/job_operate_api.h"

#include <fmt/format.h>

#include <chrono>
#include <future>

#include "lifecycle/lifecycle_reads.h"
#include "reg/coordinator_registry.h"

namespace elasticjob {
namespace {

// Runs what is posted at once, on the poster's thread (a registry reply's).
class InlineExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override { task(); }
};

// Writes `value` to `key` (created if absent) and returns the write's place in the registry's
// order of writes (CoordinatorRegistry::ExecuteInTransactionStampedAsync).
Result<int64_t> StampedWrite(RegistryCenter& reg, const std::string& key,
                             const std::string& value) {
  auto exists = reg.IsExisted(key);
  if (!exists.ok()) return exists.status();
  InlineExecutor inline_executor;
  std::promise<Result<int64_t>> stamped;
  elasticjob::reg::CoordinatorRef(reg)->ExecuteInTransactionStampedAsync(
      {*exists ? TransactionOp::SetData(key, value) : TransactionOp::Create(key, value)},
      inline_executor, [&stamped](Result<int64_t> r) { stamped.set_value(std::move(r)); });
  return stamped.get_future().get();
}

// The jobs an operation selects: `job_name` alone, or every job when it is empty.
Result<std::vector<std::string>> SelectJobs(RegistryCenter& reg, std::string_view job_name,
                                            std::string_view server_ip) {
  if (job_name.empty() && server_ip.empty()) {
    return InvalidArgument("name a job, a server IP, or both");
  }
  if (!server_ip.empty()) {
    if (Status s = lifecycle::CheckName("server", server_ip); !s.ok()) return s;
  }
  if (job_name.empty()) return lifecycle::JobNames(reg);
  if (Status s = lifecycle::CheckJobExists(reg, job_name); !s.ok()) return s;
  return std::vector<std::string>{std::string(job_name)};
}

Status ServerNotFound(std::string_view job_name, std::string_view server_ip) {
  if (job_name.empty()) {
    return NotFound(fmt::format("server '{}' not found in any job", server_ip));
  }
  return NotFound(fmt::format("server '{}' not found in job '{}'", server_ip, job_name));
}

class JobOperateAPIImpl final : public JobOperateAPI {
 public:
  explicit JobOperateAPIImpl(RegistryCenter& reg) : reg_(reg) {}

  Result<int> Trigger(std::string_view job_name, std::string_view server_ip,
                      std::optional<std::string> parameter) override {
    auto jobs = SelectJobs(reg_, job_name, server_ip);
    if (!jobs.ok()) return jobs.status();
    int triggered = 0;
    for (const std::string& job : *jobs) {
      auto instances = lifecycle::Instances(reg_, job);
      if (!instances.ok()) return instances.status();
      for (const auto& instance : *instances) {
        if (!server_ip.empty() && instance.server_ip != server_ip) continue;
        // TriggerService.triggerAllInstances: one persistent node per instance.
        Status s = reg_.Persist(fmt::format("/{}/trigger/{}", job, instance.instance_id),
                                parameter.value_or(""));
        if (!s.ok()) return s;
        ++triggered;
      }
    }
    if (triggered == 0) {
      return FailedPrecondition(
          server_ip.empty() ? fmt::format("job '{}' has no live instance to trigger", job_name)
          : job_name.empty()
              ? fmt::format("server '{}' has no live instance to trigger", server_ip)
              : fmt::format("job '{}' has no live instance on server '{}' to trigger", job_name,
                            server_ip));
    }
    return triggered;
  }

  Result<std::string> TriggerAt(std::string_view job_name, std::chrono::system_clock::time_point at,
                                std::optional<std::string> parameter) override {
    if (Status s = lifecycle::CheckName("job", job_name); !s.ok()) return s;
    auto exists = lifecycle::Exists(reg_, fmt::format("/{}/config", job_name));
    if (!exists.ok()) return exists.status();
    if (!*exists) return NotFound(fmt::format("job '{}' does not exist", job_name));
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
    if (ms < 0) return InvalidArgument("--at: a time before 1970 cannot be scheduled");
    const auto id = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    std::string name = fmt::format("{}-{}", ms, id);
    if (Status s =
            reg_.Persist(fmt::format("/{}/triggerAt/{}", job_name, name), parameter.value_or(""));
        !s.ok()) {
      return s;
    }
    return name;
  }

  Result<int> Stop(std::string_view job_name, std::string_view server_ip,
                   std::optional<int> item) override {
    if (job_name.empty()) return InvalidArgument("stop: a job name is required");
    if (item && *item < 0) return InvalidArgument(fmt::format("item: must be >= 0, got {}", *item));
    if (Status s = lifecycle::CheckName("job", job_name); !s.ok()) return s;
    auto exists = lifecycle::Exists(reg_, fmt::format("/{}/config", job_name));
    if (!exists.ok()) return exists.status();
    if (!*exists) return NotFound(fmt::format("job '{}' does not exist", job_name));
    auto instances = lifecycle::Instances(reg_, job_name);
    if (!instances.ok()) return instances.status();
    int asked = 0;
    for (const auto& instance : *instances) {
      if (server_ip.empty() || instance.server_ip == server_ip) ++asked;
    }
    if (asked == 0) {
      return FailedPrecondition(
          server_ip.empty() ? fmt::format("job '{}' has no live instance to stop", job_name)
                            : fmt::format("job '{}' has no live instance on server '{}' to stop",
                                          job_name, server_ip));
    }
    // A new value every time (the id), so that a second stop of the same item is a change.
    std::string value =
        fmt::format("id={}", std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
    if (!server_ip.empty()) value += fmt::format(" server={}", server_ip);
    if (item) value += fmt::format(" item={}", *item);
    // The request's place in the registry's order of writes, which the runs' claims share:
    // an instance that sees it late cancels only the runs claimed before it (not a fire that
    // began after it). A first write takes the stamp (instances ignore a `pending` request),
    // the second carries it.
    const std::string node = fmt::format("/{}/stop", job_name);
    auto stamp = StampedWrite(reg_, node, value + " pending");
    if (!stamp.ok()) return stamp.status();
    if (Status s = reg_.Persist(node, fmt::format("{} before={}", value, *stamp)); !s.ok()) {
      return s;
    }
    return asked;
  }

  Result<int> Disable(std::string_view job_name, std::string_view server_ip) override {
    return SetServers(job_name, server_ip, "DISABLED");
  }
  Result<int> Enable(std::string_view job_name, std::string_view server_ip) override {
    return SetServers(job_name, server_ip, "ENABLED");
  }

  Result<int> Shutdown(std::string_view job_name, std::string_view server_ip) override {
    auto jobs = SelectJobs(reg_, job_name, server_ip);
    if (!jobs.ok()) return jobs.status();
    int removed = 0;
    bool server_known = server_ip.empty();
    for (const std::string& job : *jobs) {
      if (!server_ip.empty()) {
        auto has = lifecycle::Exists(reg_, fmt::format("/{}/servers/{}", job, server_ip));
        if (!has.ok()) return has.status();
        server_known = server_known || *has;
      }
      auto instances = lifecycle::Instances(reg_, job);
      if (!instances.ok()) return instances.status();
      for (const auto& instance : *instances) {
        if (!server_ip.empty() && instance.server_ip != server_ip) continue;
        server_known = true;
        Status s = reg_.Remove(fmt::format("/{}/instances/{}", job, instance.instance_id));
        if (!s.ok()) return s;
        ++removed;
      }
    }
    if (!server_known) return ServerNotFound(job_name, server_ip);
    return removed;
  }

  Result<int> Remove(std::string_view job_name, std::string_view server_ip) override {
    auto shut = Shutdown(job_name, server_ip);
    if (!shut.ok()) return shut.status();
    auto jobs = SelectJobs(reg_, job_name, server_ip);
    if (!jobs.ok()) return jobs.status();
    int removed = 0;
    for (const std::string& job : *jobs) {
      auto servers = lifecycle::Children(reg_, fmt::format("/{}/servers", job));
      if (!servers.ok()) return servers.status();
      for (const std::string& ip : *servers) {
        if (!server_ip.empty() && ip != server_ip) continue;
        if (Status s = reg_.Remove(fmt::format("/{}/servers/{}", job, ip)); !s.ok()) return s;
        ++removed;
      }
    }
    return removed;
  }

 private:
  Result<int> SetServers(std::string_view job_name, std::string_view server_ip,
                         std::string_view state) {
    auto jobs = SelectJobs(reg_, job_name, server_ip);
    if (!jobs.ok()) return jobs.status();
    int written = 0;
    for (const std::string& job : *jobs) {
      auto servers = lifecycle::Children(reg_, fmt::format("/{}/servers", job));
      if (!servers.ok()) return servers.status();
      for (const std::string& ip : *servers) {
        if (!server_ip.empty() && ip != server_ip) continue;
        if (Status s = reg_.Persist(fmt::format("/{}/servers/{}", job, ip), state); !s.ok()) {
          return s;
        }
        ++written;
      }
    }
    if (written == 0 && !server_ip.empty()) return ServerNotFound(job_name, server_ip);
    return written;
  }

  RegistryCenter& reg_;
};

class ShardingOperateAPIImpl final : public ShardingOperateAPI {
 public:
  explicit ShardingOperateAPIImpl(RegistryCenter& reg) : reg_(reg) {}

  Status Disable(std::string_view job_name, int item) override {
    auto path = DisabledPath(job_name, item);
    if (!path.ok()) return path.status();
    return reg_.Persist(*path, "");
  }
  Status Enable(std::string_view job_name, int item) override {
    auto path = DisabledPath(job_name, item);
    if (!path.ok()) return path.status();
    return reg_.Remove(*path);
  }

 private:
  Result<std::string> DisabledPath(std::string_view job_name, int item) {
    auto config = lifecycle::ReadConfig(reg_, job_name);
    if (!config.ok()) return config.status();
    if (item < 0 || item >= config->sharding_total_count) {
      return InvalidArgument(fmt::format("item {}: job '{}' has items 0 to {}", item, job_name,
                                         config->sharding_total_count - 1));
    }
    return fmt::format("/{}/sharding/{}/disabled", job_name, item);
  }

  RegistryCenter& reg_;
};

}  // namespace

std::unique_ptr<JobOperateAPI> NewJobOperateAPI(RegistryCenter& registry) {
  return std::make_unique<JobOperateAPIImpl>(registry);
}
std::unique_ptr<ShardingOperateAPI> NewShardingOperateAPI(RegistryCenter& registry) {
  return std::make_unique<ShardingOperateAPIImpl>(registry);
}

}  // namespace elasticjob
