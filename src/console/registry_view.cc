#include "console/registry_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "elasticjob/schedule/fixed_rate.h"
#include "instance/job_instance.h"
#include "lifecycle/lifecycle_reads.h"
#include "reg/coordinator_registry.h"

namespace elasticjob::console {
namespace {

// Not a job: the workflows' subtree; a change in it is reported as a change of this "job".
constexpr std::string_view kWorkflowsRoot = ".workflows";
constexpr std::string_view kJobChildren[] = {"config", "servers", "instances", "runtime",
                                             "sharding"};
// Not `running`: it comes and goes with every run of every item (two watch events per item
// run); the one job a request shows reads it from the server (ReadRunning).
constexpr std::string_view kItemChildren[] = {"instance", "disabled", "failover"};

// Splits "/a/b/c" into {"a","b","c"}; at most 5 parts (deeper keys are not the console's).
size_t SplitKey(std::string_view key, std::array<std::string_view, 5>& parts) {
  size_t n = 0;
  size_t start = 1;
  if (key.size() < 2 || key[0] != '/') return 0;
  while (start <= key.size()) {
    if (n == parts.size()) return n + 1;
    size_t slash = key.find('/', start);
    if (slash == std::string_view::npos) slash = key.size();
    parts[n++] = key.substr(start, slash - start);
    start = slash + 1;
  }
  return n;
}

reg::NodeWatches ConsoleWatches(std::string_view key) {
  constexpr reg::NodeWatches kNone{false, false};
  constexpr reg::NodeWatches kValue{true, false};
  constexpr reg::NodeWatches kChildren{false, true};
  if (key == "/") return kChildren;
  std::array<std::string_view, 5> parts;
  size_t n = SplitKey(key, parts);
  // The workflows' subtree (docs/workflows.md): all of it, for the Workflows pages' events.
  if (n >= 1 && parts[0] == kWorkflowsRoot) return {true, true};
  if (n == 1) return {.value = true, .children = false, .named_children = kJobChildren};
  if (n == 2) return parts[1] == "config" ? kValue : kChildren;
  if (n == 3) {
    if (parts[1] == "sharding") {
      return {.value = false, .children = false, .named_children = kItemChildren};
    }
    return kValue;  // servers/{ip}, instances/{id}, runtime/{id}
  }
  if (n == 4 && parts[1] == "sharding") return parts[3] == "instance" ? kValue : kNone;
  return kNone;
}

std::string ServerIpOf(const std::string& id, const std::string& value) {
  if (auto parsed = instance::JobInstance::FromYaml(value); parsed.ok()) {
    return parsed->server_ip;
  }
  return id.substr(0, id.find(instance::kDelimiter));
}

std::set<std::string> LiveIds(const JobNodes& job) {
  std::set<std::string> ids;
  for (const auto& [id, ip] : job.instances) ids.insert(id);
  return ids;
}

}  // namespace

void JobNodes::ParseConfig() {
  config.reset();
  next_fire_cache.reset();
  cron.reset();
  zone.reset();
  config_error.clear();
  if (!config_yaml.has_value()) return;
  auto parsed = ConfigFromYaml(*config_yaml);
  if (!parsed.ok()) {
    // As ReadConfig words it (lifecycle_reads.h), so the list reads as the statistics API's.
    config_error = fmt::format("job '{}': {}", name, parsed.status().message());
    return;
  }
  config = *std::move(parsed);
  if (!config->cron.has_value() || config->cron->empty()) return;
  auto c = CronExpression::Parse(*config->cron);
  auto z = config->time_zone.has_value() ? TimeZone::Parse(*config->time_zone)
                                         : Result<TimeZone>(TimeZone::SystemDefault());
  if (c.ok() && z.ok()) {
    cron = *std::move(c);
    zone = *std::move(z);
  }
}

JobStatus JobNodes::Status() const {
  std::vector<std::string> states;
  for (const auto& [ip, state] : servers) states.push_back(state);
  std::vector<std::string> owners;
  for (const auto& [i, item] : items) owners.push_back(item.owner);
  return lifecycle::ComputeJobStatus(LiveIds(*this), states, owners);
}

std::vector<TimePoint> JobNodes::NextFireTimes(TimePoint after, int count) const {
  if (config.has_value() && config->fixed_rate.count() > 0) {
    return FixedRateNextFireTimes(after, config->fixed_rate, count);
  }
  if (!cron.has_value() || !zone.has_value()) return {};
  return cron->NextFireTimes(after, *zone, count);
}

std::vector<ShardingInfo> ShardingOf(const JobNodes& job) {
  std::vector<ShardingInfo> result;
  for (const auto& [i, item] : job.items) {
    ShardingInfo info;
    info.item = i;
    info.instance_id = item.owner;
    auto it = job.instances.find(item.owner);
    const bool live = it != job.instances.end();
    info.server_ip =
        live ? it->second : item.owner.substr(0, item.owner.find(instance::kDelimiter));
    info.failover = item.failover;
    info.status = lifecycle::ComputeShardingStatus(item.disabled, item.running, live);
    result.push_back(std::move(info));
  }
  return result;
}

void ReadRunning(RegistryCenter& reg, JobNodes* job) {
  for (auto& [i, item] : job->items) {
    item.running = lifecycle::Exists(reg, fmt::format("/{}/sharding/{}/running", job->name, i))
                       .value_or(false);
  }
}

Result<JobNodes> ReadJobNodes(RegistryCenter& reg, const std::string& job_name) {
  if (Status s = lifecycle::CheckName("job", job_name); !s.ok()) return s;
  JobNodes job;
  job.name = job_name;
  const std::string root = "/" + job_name;
  auto type = reg.GetDirectly(root);
  if (type.ok()) job.type = *type;
  auto yaml = reg.GetDirectly(root + "/config");
  if (!yaml.ok()) {
    if (yaml.status().code() == StatusCode::kNotFound) {
      return NotFound(fmt::format("job '{}' not found", job_name));
    }
    return yaml.status();
  }
  job.config_yaml = *yaml;
  job.ParseConfig();
  auto ips = lifecycle::Children(reg, root + "/servers");
  if (!ips.ok()) return ips.status();
  for (const std::string& ip : *ips) {
    auto state = reg.GetDirectly(root + "/servers/" + ip);
    if (state.ok()) job.servers[ip] = *state;
  }
  auto instances = lifecycle::Instances(reg, job_name);
  if (!instances.ok()) return instances.status();
  for (const auto& instance : *instances) job.instances[instance.instance_id] = instance.server_ip;
  auto items = lifecycle::Children(reg, root + "/sharding");
  if (!items.ok()) return items.status();
  for (const std::string& name : *items) {
    int i = 0;
    try {
      i = std::stoi(name);
    } catch (const std::exception&) {
      continue;
    }
    JobNodes::Item& item = job.items[i];
    const std::string base = root + "/sharding/" + name + "/";
    auto owner = reg.GetDirectly(base + "instance");
    if (owner.ok()) item.owner = *owner;
    item.disabled = lifecycle::Exists(reg, base + "disabled").value_or(false);
    item.running = lifecycle::Exists(reg, base + "running").value_or(false);
    item.failover = lifecycle::Exists(reg, base + "failover").value_or(false);
  }
  return job;
}

RegistryView::RegistryView(std::unique_ptr<RegistryCenter> registry, Executor& pool,
                           ChangeCallback on_change)
    : registry_(std::move(registry)), on_change_(std::move(on_change)), events_(pool) {}

RegistryView::~RegistryView() {
  watch_.reset();
  connection_.reset();
  registry_->Close();
}

Status RegistryView::Start() {
  connection_ = registry_->AddConnectionStateListener(events_, [this](ConnectionState state) {
    connected_.store(state == ConnectionState::kConnected ||
                     state == ConnectionState::kReconnected);
  });
  auto watch =
      reg::CoordinatorRef(*registry_)
          ->WatchTree(
              "/", events_, [this](const TreeEvent& event) { Apply(event); }, ConsoleWatches);
  if (!watch.ok()) return watch.status();
  watch_ = std::move(watch).value();
  // The initial contents are queued on events_ before Watch returns: wait for them.
  Sync();
  return Status::Ok();
}

void RegistryView::Sync() {
  Mutex mu;
  CondVar cv{&mu};
  bool done = false;
  events_.Post([&] {
    MutexLock lock(&mu);
    done = true;
    cv.SignalAll();
  });
  MutexLock lock(&mu);
  while (!done) cv.Wait();
}

void RegistryView::Apply(const TreeEvent& event) {
  std::array<std::string_view, 5> parts;
  const size_t n = SplitKey(event.key, parts);
  if (n >= 1 && parts[0] == kWorkflowsRoot) {
    if (on_change_) on_change_(std::string(kWorkflowsRoot), false);
    return;
  }
  if (n == 0 || n > 4) return;
  const bool gone = event.type == TreeEvent::Type::kDeleted;
  const std::string name(parts[0]);
  bool jobs_changed = false;
  {
    MutexLock lock(&mu_);
    if (n == 1) {
      if (gone) {
        auto it = jobs_.find(name);
        if (it != jobs_.end()) {
          jobs_changed = it->second.config_yaml.has_value();
          jobs_.erase(it);
        }
      } else {
        JobNodes& job = jobs_[name];
        job.name = name;
        job.type = event.value;
      }
    } else {
      auto it = jobs_.find(name);
      if (it == jobs_.end()) {
        if (gone) return;
        it = jobs_.emplace(name, JobNodes{}).first;
        it->second.name = name;
      }
      JobNodes& job = it->second;
      const std::string_view kind = parts[1];
      if (n == 2 && kind == "config") {
        jobs_changed = gone == job.config_yaml.has_value();
        if (gone) {
          job.config_yaml.reset();
        } else {
          job.config_yaml = event.value;
        }
        job.ParseConfig();
      } else if (n == 3 && kind == "servers") {
        if (gone) {
          job.servers.erase(std::string(parts[2]));
        } else {
          job.servers[std::string(parts[2])] = event.value;
        }
      } else if (n == 3 && kind == "runtime") {
        const std::string id(parts[2]);
        if (gone) {
          job.runtimes.erase(id);
        } else {
          job.runtimes[id] = event.value;
        }
      } else if (n == 3 && kind == "instances") {
        const std::string id(parts[2]);
        if (gone) {
          job.instances.erase(id);
        } else {
          job.instances[id] = ServerIpOf(id, event.value);
        }
      } else if (kind == "sharding" && n >= 3) {
        int i = 0;
        try {
          i = std::stoi(std::string(parts[2]));
        } catch (const std::exception&) {
          return;
        }
        if (n == 3) {
          if (gone) {
            job.items.erase(i);
          } else {
            job.items[i];
          }
        } else {
          JobNodes::Item& item = job.items[i];
          const std::string_view leaf = parts[3];
          if (leaf == "instance") item.owner = gone ? "" : event.value;
          if (leaf == "disabled") item.disabled = !gone;
          if (leaf == "failover") item.failover = !gone;
        }
      } else if (n == 2 && gone) {
        if (kind == "servers") job.servers.clear();
        if (kind == "instances") job.instances.clear();
        if (kind == "runtime") job.runtimes.clear();
        if (kind == "sharding") job.items.clear();
      }
    }
  }
  if (on_change_) on_change_(name, jobs_changed);
}

std::vector<JobRow> RegistryView::Jobs(TimePoint now) const {
  std::vector<JobRow> rows;
  MutexLock lock(&mu_);
  rows.reserve(jobs_.size());
  for (auto& [name, job] : jobs_) {
    if (!job.config_yaml.has_value()) continue;
    JobRow row;
    row.brief.job_name = name;
    row.brief.status = job.Status();
    if (job.config.has_value()) {
      row.brief.description = job.config->description;
      row.brief.cron = lifecycle::ScheduleText(*job.config);
      row.brief.sharding_total_count = job.config->sharding_total_count;
    } else {
      row.brief.description = "config not readable: " + job.config_error;
    }
    row.brief.instance_count = static_cast<int>(job.instances.size());
    // A fire time worked out earlier is still the next one while it is ahead of `now`.
    if (!job.next_fire_cache.has_value() || *job.next_fire_cache <= now) {
      auto next = job.NextFireTimes(now, 1);
      job.next_fire_cache = next.empty() ? std::nullopt : std::optional<TimePoint>(next[0]);
    }
    row.next_fire_time = job.next_fire_cache;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<JobNodes> RegistryView::Job(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = jobs_.find(name);
  if (it == jobs_.end() || !it->second.config_yaml.has_value()) return std::nullopt;
  return it->second;
}

std::vector<ServerBriefInfo> RegistryView::Servers() const {
  std::map<std::string, ServerBriefInfo> servers;
  MutexLock lock(&mu_);
  for (const auto& [name, job] : jobs_) {
    if (!job.config_yaml.has_value()) continue;
    for (const auto& [ip, state] : job.servers) {
      ServerBriefInfo& info = servers[ip];
      info.server_ip = ip;
      info.job_names.insert(name);
      if (state == "DISABLED") ++info.disabled_jobs;
    }
    for (const auto& [id, ip] : job.instances) {
      auto it = servers.find(ip);
      if (it != servers.end()) it->second.instances.insert(id);
    }
  }
  std::vector<ServerBriefInfo> result;
  for (auto& [ip, info] : servers) result.push_back(std::move(info));
  return result;
}

std::vector<JobBriefInfo> RegistryView::JobsOnServer(const std::string& ip) const {
  std::vector<JobBriefInfo> result;
  MutexLock lock(&mu_);
  for (const auto& [name, job] : jobs_) {
    if (!job.config_yaml.has_value()) continue;
    auto it = job.servers.find(ip);
    if (it == job.servers.end()) continue;
    JobBriefInfo info;
    info.job_name = name;
    info.status = it->second == "DISABLED" ? JobStatus::kDisabled : JobStatus::kOk;
    for (const auto& [id, instance_ip] : job.instances) {
      if (instance_ip == ip) ++info.instance_count;
    }
    result.push_back(std::move(info));
  }
  return result;
}

std::map<std::string, std::vector<std::string>> RegistryView::JobsByInstance() const {
  std::map<std::string, std::vector<std::string>> result;
  MutexLock lock(&mu_);
  for (const auto& [name, job] : jobs_) {  // by name: each list comes out sorted
    if (!job.config_yaml.has_value()) continue;
    for (const auto& [id, ip] : job.instances) result[id].push_back(name);
  }
  return result;
}

std::map<std::string, instance::InstanceRuntime> RegistryView::RuntimeByInstance() const {
  std::map<std::string, instance::InstanceRuntime> result;
  MutexLock lock(&mu_);
  for (const auto& [name, job] : jobs_) {
    if (!job.config_yaml.has_value()) continue;
    for (const auto& [id, value] : job.runtimes) {
      if (!job.instances.contains(id)) continue;  // the instance node went first
      auto parsed = instance::InstanceRuntime::FromJson(value);
      if (!parsed.ok()) continue;
      auto [it, fresh] = result.try_emplace(id, *parsed);
      instance::InstanceRuntime& kept = it->second;
      if (fresh) continue;
      // One process: the newest registration, the earliest job start.
      if (parsed->registered_time > kept.registered_time) {
        const int64_t first_job = kept.job_start_time;
        kept = *parsed;
        kept.job_start_time = std::min(first_job, parsed->job_start_time);
      } else {
        kept.job_start_time = std::min(kept.job_start_time, parsed->job_start_time);
      }
    }
  }
  return result;
}

}  // namespace elasticjob::console
