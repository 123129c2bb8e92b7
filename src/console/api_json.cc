#include "console/api_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "instance/job_instance.h"

namespace elasticjob::console {
namespace {

using nlohmann::json;

Status WrongType(const std::string& field, const char* expected, const json& value) {
  std::string shown = value.dump();
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  return InvalidArgument(fmt::format("{}: expected {}, got {}", field, expected, shown));
}

Status GetString(const std::string& field, const json& v, std::string* out) {
  if (!v.is_string()) return WrongType(field, "a string", v);
  *out = v.get<std::string>();
  return Status::Ok();
}

Status GetOptString(const std::string& field, const json& v, std::optional<std::string>* out) {
  if (v.is_null()) {
    out->reset();
    return Status::Ok();
  }
  std::string s;
  if (Status st = GetString(field, v, &s); !st.ok()) return st;
  *out = std::move(s);
  return Status::Ok();
}

Status GetInt(const std::string& field, const json& v, int* out) {
  if (!v.is_number_integer()) return WrongType(field, "an integer", v);
  auto n = v.get<int64_t>();
  if (n < INT32_MIN || n > INT32_MAX) return WrongType(field, "a 32-bit integer", v);
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status GetInt64(const std::string& field, const json& v, int64_t* out) {
  if (!v.is_number_integer()) return WrongType(field, "an integer", v);
  *out = v.get<int64_t>();
  return Status::Ok();
}

// A duration: "30s" (ParseDuration), or null / "" for none.
Status GetDuration(const std::string& field, const json& v, std::chrono::milliseconds* out) {
  if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) {
    *out = std::chrono::milliseconds(0);
    return Status::Ok();
  }
  if (!v.is_string()) return WrongType(field, "a duration such as \"30s\"", v);
  auto d = ParseDuration(v.get<std::string>(), field);
  if (!d.ok()) return d.status();
  *out = *d;
  return Status::Ok();
}

Status GetBool(const std::string& field, const json& v, bool* out) {
  if (!v.is_boolean()) return WrongType(field, "true or false", v);
  *out = v.get<bool>();
  return Status::Ok();
}

}  // namespace

int64_t EpochMs(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

json ConfigToJson(const JobConfiguration& c) {
  auto opt = [](const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); };
  json props = json::object();
  for (const auto& [k, v] : c.props) props[k] = v;
  return {
      {"jobName", c.job_name},
      {"cron", opt(c.cron)},
      {"timeZone", opt(c.time_zone)},
      {"shardingTotalCount", c.sharding_total_count},
      {"shardingItemParameters", c.sharding_item_parameters},
      {"jobParameter", c.job_parameter},
      {"monitorExecution", c.monitor_execution},
      {"failover", c.failover},
      {"misfire", c.misfire},
      {"maxTimeDiffSeconds", c.max_time_diff_seconds},
      {"reconcileIntervalMinutes", c.reconcile_interval_minutes},
      {"jobShardingStrategyType", opt(c.job_sharding_strategy_type)},
      {"jobExecutorThreadPoolSizeProviderType", opt(c.job_executor_thread_pool_size_provider_type)},
      {"jobErrorHandlerType", opt(c.job_error_handler_type)},
      {"jobListenerTypes", c.job_listener_types},
      {"jobExtraConfigurations", c.job_extra_configurations},
      {"description", c.description},
      {"props", props},
      {"disabled", c.disabled},
      {"overwrite", c.overwrite},
      {"label", opt(c.label)},
      {"staticSharding", c.static_sharding},
      {"fixedRate", c.fixed_rate.count() > 0 ? json(FormatDuration(c.fixed_rate)) : json(nullptr)},
      {"fixedDelay",
       c.fixed_delay.count() > 0 ? json(FormatDuration(c.fixed_delay)) : json(nullptr)},
      {"timeoutMs", c.timeout_ms},
      {"maxRetries", c.max_retries},
      {"retryIntervalMs", c.retry_interval_ms},
  };
}

Status ConfigFromJson(const json& j, JobConfiguration* c) {
  if (!j.is_object()) return WrongType("config", "an object", j);
  using Setter = std::function<Status(const std::string&, const json&)>;
  const std::map<std::string, Setter> setters = {
      {"jobName", [&](auto& f, auto& v) { return GetString(f, v, &c->job_name); }},
      {"cron", [&](auto& f, auto& v) { return GetOptString(f, v, &c->cron); }},
      {"fixedRate", [&](auto& f, auto& v) { return GetDuration(f, v, &c->fixed_rate); }},
      {"fixedDelay", [&](auto& f, auto& v) { return GetDuration(f, v, &c->fixed_delay); }},
      {"timeoutMs", [&](auto& f, auto& v) { return GetInt64(f, v, &c->timeout_ms); }},
      {"maxRetries", [&](auto& f, auto& v) { return GetInt(f, v, &c->max_retries); }},
      {"retryIntervalMs", [&](auto& f, auto& v) { return GetInt64(f, v, &c->retry_interval_ms); }},
      {"timeZone", [&](auto& f, auto& v) { return GetOptString(f, v, &c->time_zone); }},
      {"shardingTotalCount",
       [&](auto& f, auto& v) { return GetInt(f, v, &c->sharding_total_count); }},
      {"shardingItemParameters",
       [&](auto& f, auto& v) { return GetString(f, v, &c->sharding_item_parameters); }},
      {"jobParameter", [&](auto& f, auto& v) { return GetString(f, v, &c->job_parameter); }},
      {"monitorExecution", [&](auto& f, auto& v) { return GetBool(f, v, &c->monitor_execution); }},
      {"failover", [&](auto& f, auto& v) { return GetBool(f, v, &c->failover); }},
      {"misfire", [&](auto& f, auto& v) { return GetBool(f, v, &c->misfire); }},
      {"maxTimeDiffSeconds",
       [&](auto& f, auto& v) { return GetInt(f, v, &c->max_time_diff_seconds); }},
      {"reconcileIntervalMinutes",
       [&](auto& f, auto& v) { return GetInt(f, v, &c->reconcile_interval_minutes); }},
      {"jobShardingStrategyType",
       [&](auto& f, auto& v) { return GetOptString(f, v, &c->job_sharding_strategy_type); }},
      {"jobExecutorThreadPoolSizeProviderType",
       [&](auto& f, auto& v) {
         return GetOptString(f, v, &c->job_executor_thread_pool_size_provider_type);
       }},
      {"jobErrorHandlerType",
       [&](auto& f, auto& v) { return GetOptString(f, v, &c->job_error_handler_type); }},
      {"jobListenerTypes",
       [&](auto& f, auto& v) -> Status {
         if (!v.is_array()) return WrongType(f, "a list of strings", v);
         std::vector<std::string> types;
         for (const auto& e : v) {
           if (!e.is_string()) return WrongType(f, "a list of strings", v);
           types.push_back(e.template get<std::string>());
         }
         c->job_listener_types = std::move(types);
         return Status::Ok();
       }},
      {"jobExtraConfigurations",
       [&](auto& f, auto& v) { return GetString(f, v, &c->job_extra_configurations); }},
      {"description", [&](auto& f, auto& v) { return GetString(f, v, &c->description); }},
      {"props",
       [&](auto& f, auto& v) -> Status {
         if (!v.is_object()) return WrongType(f, "an object of strings", v);
         std::map<std::string, std::string> props;
         for (auto it = v.begin(); it != v.end(); ++it) {
           if (!it.value().is_string()) {
             return WrongType(fmt::format("props.{}", it.key()), "a string", it.value());
           }
           props[it.key()] = it.value().template get<std::string>();
         }
         c->props = std::move(props);
         return Status::Ok();
       }},
      {"disabled", [&](auto& f, auto& v) { return GetBool(f, v, &c->disabled); }},
      {"overwrite", [&](auto& f, auto& v) { return GetBool(f, v, &c->overwrite); }},
      {"label", [&](auto& f, auto& v) { return GetOptString(f, v, &c->label); }},
      {"staticSharding", [&](auto& f, auto& v) { return GetBool(f, v, &c->static_sharding); }},
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    auto setter = setters.find(it.key());
    if (setter == setters.end()) {
      return InvalidArgument(fmt::format("{}: unknown configuration field", it.key()));
    }
    if (Status s = setter->second(it.key(), it.value()); !s.ok()) return s;
  }
  return Status::Ok();
}

std::string FieldOf(const std::string& message) {
  std::string_view m = message;
  if (m.starts_with("config: ")) m.remove_prefix(8);
  size_t colon = m.find(':');
  if (colon == std::string_view::npos) return "";
  std::string_view field = m.substr(0, colon);
  if (size_t bracket = field.find('['); bracket != std::string_view::npos) {
    field = field.substr(0, bracket);
  }
  if (size_t dot = field.find('.'); dot != std::string_view::npos) field = field.substr(0, dot);
  for (char ch : field) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) return "";
  }
  return std::string(field);
}

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kBadVersion:
      return 409;
    case StatusCode::kConnectionLoss:
    case StatusCode::kSessionExpired:
    case StatusCode::kTimeout:
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

json JobRowToJson(const JobRow& row) {
  return {
      {"name", row.brief.job_name},
      {"status", JobStatusName(row.brief.status)},
      {"cron", row.brief.cron},
      {"description", row.brief.description},
      {"shardingTotalCount", row.brief.sharding_total_count},
      {"instanceCount", row.brief.instance_count},
      {"nextFireTime", row.next_fire_time ? json(EpochMs(*row.next_fire_time)) : json(nullptr)},
  };
}

namespace {

// The pid is the instance id's second part (`ip@-@pid`); none for another form.
void AddPid(const std::string& id, json* entry) {
  size_t at = id.find(instance::kDelimiter);
  if (at == std::string::npos) return;
  try {
    (*entry)["pid"] = std::stol(id.substr(at + instance::kDelimiter.size()));
  } catch (const std::exception&) {
  }
}

}  // namespace

json ServerToJson(const ServerBriefInfo& server,
                  const std::map<std::string, std::vector<std::string>>& jobs_by_instance,
                  const std::string& hostname,
                  const std::map<std::string, instance::InstanceRuntime>& runtimes, TimePoint now,
                  bool connected) {
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  json details = json::array();
  for (const std::string& id : server.instances) {
    json entry = {{"id", id},
                  {"jobs", json::array()},
                  {"version", nullptr},
                  {"hostname", nullptr},
                  {"startTime", nullptr},
                  {"uptimeMs", nullptr},
                  {"registeredTime", nullptr},
                  {"heartbeatWithinMs", nullptr}};
    AddPid(id, &entry);
    if (auto it = jobs_by_instance.find(id); it != jobs_by_instance.end()) {
      entry["jobs"] = it->second;
    }
    if (auto it = runtimes.find(id); it != runtimes.end()) {
      const instance::InstanceRuntime& r = it->second;
      entry["version"] = r.version;
      if (!r.hostname.empty()) entry["hostname"] = r.hostname;
      if (r.process_start_time > 0) {
        entry["startTime"] = r.process_start_time;
        entry["uptimeMs"] = std::max<int64_t>(0, now_ms - r.process_start_time);
      }
      if (r.registered_time > 0) entry["registeredTime"] = r.registered_time;
      // The node is ephemeral: the registry removes it one session timeout after the last
      // heartbeat it received, so while the console's own session is up and still has it,
      // that heartbeat was at most this long ago (docs/console.md, "Servers").
      if (connected && r.session_timeout_ms > 0) {
        entry["heartbeatWithinMs"] = r.session_timeout_ms;
      }
    }
    details.push_back(std::move(entry));
  }
  return {{"ip", server.server_ip},
          {"hostname", hostname.empty() ? json(nullptr) : json(hostname)},
          {"instances", server.instances},
          {"instanceDetails", details},
          {"jobs", server.job_names},
          {"disabledJobs", server.disabled_jobs}};
}

json JobToJson(const JobNodes& job, TimePoint now) {
  json sharding = json::array();
  for (const ShardingInfo& s : ShardingOf(job)) {
    sharding.push_back({{"item", s.item},
                        {"instance", s.instance_id},
                        {"serverIp", s.server_ip},
                        {"status", ShardingStatusName(s.status)},
                        {"failover", s.failover}});
  }
  json instances = json::array();
  for (const auto& [id, ip] : job.instances) {
    json entry = {{"id", id}, {"serverIp", ip}};
    AddPid(id, &entry);
    instances.push_back(std::move(entry));
  }
  json servers = json::array();
  for (const auto& [ip, state] : job.servers) {
    servers.push_back({{"ip", ip}, {"status", state == "DISABLED" ? "DISABLED" : "ENABLED"}});
  }
  json next = json::array();
  for (TimePoint t : job.NextFireTimes(now, 5)) next.push_back(EpochMs(t));
  json result = {
      {"name", job.name},
      {"status", JobStatusName(job.Status())},
      {"jobType", job.type},
      {"config", job.config ? ConfigToJson(*job.config) : json(nullptr)},
      {"yaml", job.config_yaml.value_or("")},
      {"sharding", sharding},
      {"instances", instances},
      {"servers", servers},
      {"nextFireTimes", next},
  };
  if (!job.config) result["configError"] = job.config_error;
  if (job.zone) result["timeZone"] = job.zone->id();
  return result;
}

json ExecutionToJson(const JobExecutionEvent& e) {
  return {
      {"id", e.id},
      {"jobName", e.job_name},
      {"taskId", e.task_id},
      {"hostname", e.hostname},
      {"ip", e.ip},
      {"shardingItem", e.sharding_item},
      {"executionSource", ExecutionSourceName(e.source)},
      {"startTime", EpochMs(e.start_time)},
      {"completeTime", e.complete_time ? json(EpochMs(*e.complete_time)) : json(nullptr)},
      {"success", e.complete_time ? json(e.success) : json(nullptr)},
      {"failureCause", e.failure_cause},
  };
}

json ExecutionStatsJson(const std::vector<JobExecutionEvent>& rows, int64_t from, int64_t width,
                        int64_t now) {
  std::vector<std::pair<int64_t, int64_t>> counts((now - from) / width + 1);
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t timed_out = 0;
  json recent = json::array();
  for (const auto& e : rows) {  // newest first
    if (!e.complete_time) continue;
    const int64_t start_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(e.start_time.time_since_epoch())
            .count();
    if (start_ms < from) continue;
    const size_t b = static_cast<size_t>((start_ms - from) / width);
    if (b >= counts.size()) continue;
    if (e.success) {
      ++counts[b].first;
      ++ok;
      continue;
    }
    ++counts[b].second;
    ++failed;
    if (e.failure_cause.starts_with("timeout after ")) ++timed_out;
    if (recent.size() < 10) recent.push_back(ExecutionToJson(e));
  }
  json buckets = json::array();
  for (size_t i = 0; i < counts.size(); ++i) {
    buckets.push_back({{"start", from + static_cast<int64_t>(i) * width},
                       {"succeeded", counts[i].first},
                       {"failed", counts[i].second}});
  }
  return {{"buckets", buckets},
          {"successRate",
           ok + failed == 0 ? json(nullptr) : json(static_cast<double>(ok) / (ok + failed))},
          {"timedOut", timed_out},
          {"recentFailures", recent}};
}

json StatusTraceToJson(const JobStatusTraceEvent& e) {
  return {
      {"id", e.id},
      {"jobName", e.job_name},
      {"taskId", e.task_id},
      {"originalTaskId", e.original_task_id},
      {"slaveId", e.slave_id},
      {"executionType", e.execution_type},
      {"shardingItem", e.sharding_items},
      {"state", TraceStateName(e.state)},
      {"message", e.message},
      {"creationTime", EpochMs(e.creation_time)},
  };
}

}  // namespace elasticjob::console
