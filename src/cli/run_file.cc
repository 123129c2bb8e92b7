#include "cli/run_file.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <set>

#include "config/yaml_node.h"
#include "infra/printable.h"

namespace elasticjob::cli {
namespace {

// The JobConfiguration keys, plus the Spring Boot-only ones we read or accept.
const std::set<std::string>& KnownJobKeys() {
  static const std::set<std::string> k = {"cron",
                                          "timeZone",
                                          "shardingTotalCount",
                                          "shardingItemParameters",
                                          "jobParameter",
                                          "monitorExecution",
                                          "failover",
                                          "misfire",
                                          "maxTimeDiffSeconds",
                                          "reconcileIntervalMinutes",
                                          "monitorPort",
                                          "jobShardingStrategyType",
                                          "jobExecutorServiceHandlerType",
                                          "jobExecutorThreadPoolSizeProviderType",
                                          "jobErrorHandlerType",
                                          "jobListenerTypes",
                                          "jobExtraConfigurations",
                                          "description",
                                          "props",
                                          "disabled",
                                          "overwrite",
                                          "label",
                                          "staticSharding",
                                          "fixedRate",
                                          "fixedDelay",
                                          "timeoutMs",
                                          "maxRetries",
                                          "retryIntervalMs",
                                          "elasticJobType",
                                          "elasticJobClass",
                                          "jobBootstrapBeanName",
                                          "jobName"};
  return k;
}

bool Absent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

// The string at `node[key]` into `*out`; `*out` unchanged when absent. Errors name it
// `prefix` + `key`.
Status OptionalString(const YAML::Node& node, const char* key, const std::string& prefix,
                      std::string* out) {
  const YAML::Node v = config::YamlChild(node, key);
  if (Absent(v)) return Status::Ok();
  return config::ReadYamlString(v, prefix + key, out);
}

Result<std::string> RegistryUrl(const YAML::Node& reg, std::string_view flag) {
  if (!flag.empty()) return std::string(flag);
  const std::string where = "elasticjob.regCenter";
  if (Absent(reg)) return std::string("memory://elasticjob");
  if (!reg.IsMap()) return config::YamlTypeError(where, "a map of settings", reg);
  std::string ns = "elasticjob";
  if (Status s = OptionalString(reg, "namespace", where + ".", &ns); !s.ok()) return s;
  std::string servers;
  if (Status s = OptionalString(reg, "serverLists", where + ".", &servers); !s.ok()) return s;
  if (Absent(config::YamlChild(reg, "serverLists"))) return "memory://" + ns;
  std::string url = "zookeeper://" + servers + "/" + ns;
  static const std::pair<const char*, const char*> kParams[] = {
      {"digest", "digest"},
      {"sessionTimeoutMilliseconds", "sessionTimeoutMs"},
      {"connectionTimeoutMilliseconds", "connectionTimeoutMs"},
      {"baseSleepTimeMilliseconds", "baseSleepMs"},
      {"maxSleepTimeMilliseconds", "maxSleepMs"},
      {"maxRetries", "maxRetries"}};
  char separator = '?';
  for (const auto& [yaml_key, url_key] : kParams) {
    std::string value;
    if (Status s = OptionalString(reg, yaml_key, where + ".", &value); !s.ok()) return s;
    if (Absent(config::YamlChild(reg, yaml_key))) continue;
    url += fmt::format("{}{}={}", separator, url_key, value);
    separator = '&';
  }
  return url;
}

// Spring Boot binds a comma-separated string to a list: `jobListenerTypes: LOG,OTHER`.
YAML::Node SplitListenerTypes(const std::string& text) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (size_t start = 0; start <= text.size();) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string type = text.substr(start, comma - start);
    type.erase(0, type.find_first_not_of(' '));
    type.erase(type.find_last_not_of(' ') + 1);
    list.push_back(type);
    start = comma + 1;
  }
  return list;
}

Result<RunJobSpec> ReadJob(const std::string& name, const YAML::Node& j,
                           std::vector<std::string>* warnings) {
  const std::string where = fmt::format("job '{}'", name);
  if (!j.IsMap()) return config::YamlTypeError(where, "a map of settings", j);
  for (auto k = j.begin(); k != j.end(); ++k) {
    if (!k->first.IsScalar()) {
      return config::YamlTypeError(where, "setting names", k->first);
    }
    if (KnownJobKeys().count(k->first.Scalar()) == 0) {
      warnings->push_back(fmt::format("{}: unknown key '{}' ignored", where, k->first.Scalar()));
    }
  }
  YAML::Node doc = YAML::Clone(j);
  doc["jobName"] = name;
  if (const YAML::Node types = config::YamlChild(j, "jobListenerTypes"); types.IsScalar()) {
    doc["jobListenerTypes"] = SplitListenerTypes(types.Scalar());
  }
  YAML::Emitter emit;
  emit << doc;
  if (!emit.good()) {
    return InvalidArgument(
        fmt::format("{}: settings not readable: {}", where, emit.GetLastError()));
  }
  auto config = ConfigFromYaml(emit.c_str());
  if (!config.ok()) {
    std::string message = config.status().message();
    if (message.rfind("config: ", 0) == 0) message.erase(0, 8);
    return InvalidArgument(fmt::format("{}: {}", where, message));
  }
  if (Status s = ValidateJobConfiguration(*config); !s.ok()) {
    return InvalidArgument(fmt::format("{}: {}", where, s.message()));
  }
  std::string type;
  if (Status s = OptionalString(j, "elasticJobType", where + ": ", &type); !s.ok()) return s;
  std::string java_class;
  if (Status s = OptionalString(j, "elasticJobClass", where + ": ", &java_class); !s.ok()) return s;
  if (type.empty() && !java_class.empty()) {
    return InvalidArgument(
        fmt::format("{}: elasticJobClass '{}': Java classes cannot run here; use "
                    "elasticJobType (SCRIPT, HTTP) or a C++ job",
                    where, java_class));
  }
  // Any name: the job types known to the process are checked when the job starts.
  if (type.empty()) {
    return InvalidArgument(
        fmt::format("{}: elasticJobType: missing (built-in types: SCRIPT, HTTP)", where));
  }
  return RunJobSpec{type, *std::move(config)};
}

Result<RunFile> Parse(std::string_view text, std::string_view registry_flag,
                      std::vector<std::string>* warnings) {
  auto root = config::LoadYaml(text);
  if (!root.ok()) return root.status();
  const YAML::Node ej = config::YamlChild(*root, "elasticjob");
  if (!ej.IsMap()) return InvalidArgument("expected a top-level 'elasticjob:' map");
  RunFile file;
  auto url = RegistryUrl(config::YamlChild(ej, "regCenter"), registry_flag);
  if (!url.ok()) return url.status();
  file.registry_url = *std::move(url);
  if (const YAML::Node grace = config::YamlChild(ej, "shutdownGraceMilliseconds");
      grace.IsDefined() && !grace.IsNull()) {
    int64_t ms = -1;
    std::string ms_text = grace.IsScalar() ? config::YamlScalarText(grace) : "";
    auto [end, ec] = std::from_chars(ms_text.data(), ms_text.data() + ms_text.size(), ms);
    if (!grace.IsScalar() || ec != std::errc() || end != ms_text.data() + ms_text.size() ||
        ms < 0) {
      return config::YamlTypeError("elasticjob.shutdownGraceMilliseconds",
                                   "a non-negative number of milliseconds", grace);
    }
    file.shutdown_grace_ms = ms;
  }
  if (const YAML::Node tracing = config::YamlChild(ej, "tracing");
      tracing.IsDefined() && !tracing.IsNull()) {
    if (tracing.IsScalar()) {
      file.tracing_url = config::YamlScalarText(tracing);
    } else if (tracing.IsMap()) {
      const YAML::Node given = config::YamlChild(tracing, "url");
      if (given.IsDefined() && !given.IsNull() && !given.IsScalar()) {
        return config::YamlTypeError("elasticjob.tracing.url", "a database URL", given);
      }
      file.tracing_url = given.IsScalar() ? config::YamlScalarText(given) : kDefaultTracingUrl;
      for (auto k = tracing.begin(); k != tracing.end(); ++k) {
        const std::string key = k->first.IsScalar() ? k->first.Scalar() : "?";
        if (key != "url" && key != "type") {
          warnings->push_back(fmt::format("elasticjob.tracing: unknown key '{}' ignored", key));
        }
      }
    } else {
      return config::YamlTypeError("elasticjob.tracing", "a database URL or a map with url",
                                   tracing);
    }
  }
  std::optional<int> dump_port;
  if (const YAML::Node dump = config::YamlChild(ej, "dump"); !Absent(dump)) {
    if (!dump.IsMap()) return config::YamlTypeError("elasticjob.dump", "a map of settings", dump);
    std::string address;
    if (Status s = OptionalString(dump, "address", "elasticjob.dump.", &address); !s.ok()) return s;
    if (!Absent(config::YamlChild(dump, "address"))) {
      in_addr parsed{};
      if (inet_pton(AF_INET, address.c_str(), &parsed) != 1) {
        return InvalidArgument(fmt::format(
            "elasticjob.dump.address: expected an IPv4 address (127.0.0.1, 0.0.0.0), got '{}'",
            address));
      }
      file.dump_address = address;
    }
    if (const YAML::Node port = config::YamlChild(dump, "port"); !Absent(port)) {
      int value = -2;
      std::string port_text = port.IsScalar() ? config::YamlScalarText(port) : "";
      auto [end, ec] =
          std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
      if (!port.IsScalar() || ec != std::errc() || end != port_text.data() + port_text.size() ||
          value < -1 || value > 65535) {
        return config::YamlTypeError("elasticjob.dump.port", "a port from -1 (off) to 65535", port);
      }
      dump_port = value;
    }
  }
  const YAML::Node jobs = config::YamlChild(ej, "jobs");
  if (!jobs.IsMap() || jobs.size() == 0) {
    return InvalidArgument("elasticjob.jobs: no jobs declared");
  }
  for (auto it = jobs.begin(); it != jobs.end(); ++it) {
    if (!it->first.IsScalar()) {
      return config::YamlTypeError("elasticjob.jobs", "job names", it->first);
    }
    auto job = ReadJob(it->first.Scalar(), it->second, warnings);
    if (!job.ok()) return job.status();
    if (dump_port && Absent(config::YamlChild(it->second, "monitorPort"))) {
      job->config.monitor_port = *dump_port;
    }
    file.jobs.push_back(*std::move(job));
  }
  return file;
}

}  // namespace

Result<RunFile> ParseRunFile(std::string_view text, std::string_view registry_flag,
                             std::vector<std::string>* warnings) {
  std::vector<std::string> ignored;
  Result<RunFile> file = InvalidArgument("");
  try {
    file = Parse(text, registry_flag, warnings != nullptr ? warnings : &ignored);
  } catch (const std::exception& e) {
    // Every check above comes before the library could throw; this is the last fence.
    file = InvalidArgument(fmt::format("not a valid elasticjob file: {}", e.what()));
  }
  if (file.ok()) return file;
  // Job names and values may hold line breaks: the error stays one line.
  return InvalidArgument(infra::OneLine(file.status().message()));
}

std::string ScheduleWords(const JobConfiguration& config) {
  if (config.fixed_rate.count() > 0) return "fixedRate " + FormatDuration(config.fixed_rate);
  if (config.fixed_delay.count() > 0) return "fixedDelay " + FormatDuration(config.fixed_delay);
  return fmt::format("cron '{}'", config.cron.value_or(""));
}

}  // namespace elasticjob::cli
