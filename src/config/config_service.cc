#include "config/config_service.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>

#include "infra/log.h"

namespace elasticjob::config {

Result<JobConfiguration> ConfigService::SetUp(std::string_view job_type_name,
                                              const JobConfiguration& config, bool seen_absent,
                                              bool* created) {
  if (created != nullptr) *created = false;
  const std::string& job = config.job_name;
  if (Status s = ValidateJobConfiguration(config); !s.ok()) {
    return s.WithContext(fmt::format("job '{}'", job));
  }
  if (job_type_name.empty()) {
    return InvalidArgument(fmt::format("job '{}': the job type name must not be empty", job));
  }
  if (seen_absent) {
    // What the path below writes for a job without a root node (config, then the root's
    // type name), as one transaction that fails if either node is there by now.
    std::string yaml = ConfigToYaml(config, version_);
    Status created_now =
        storage_.ExecuteInTransactionGrouped({TransactionOp::Create("", std::string(job_type_name)),
                                              TransactionOp::Create("config", yaml)});
    if (created_now.ok()) {
      if (created != nullptr) *created = true;
      MutexLock lock(&mu_);
      written_yaml_ = std::move(yaml);
      return config;
    }
  }
  auto root_exists = storage_.IsJobRootNodeExisted();
  if (!root_exists.ok()) return root_exists.status();
  if (*root_exists) {
    auto registered = storage_.GetJobRootNodeData();
    if (!registered.ok() && registered.status().code() != StatusCode::kNotFound) {
      return registered.status();
    }
    if (registered.ok() && !registered->empty() && *registered != job_type_name) {
      return FailedPrecondition(fmt::format(
          "Job conflict with register center. The job '{}' in register center's class is '{}', "
          "your job class is '{}'",
          job, *registered, job_type_name));
    }
  }
  auto config_exists = storage_.IsJobNodeExisted("config");
  if (!config_exists.ok()) return config_exists.status();
  if (!*config_exists || config.overwrite) {
    if (Status s = storage_.ReplaceJobNode("config", ConfigToYaml(config, version_)); !s.ok())
      return s;
    if (Status s = storage_.ReplaceJobRootNode(job_type_name); !s.ok()) return s;
    return config;
  }
  auto registered = Load(false);
  if (registered.ok()) {
    if (std::string fields = DifferingFields(config, *registered); !fields.empty()) {
      log_("WARN", fmt::format("job '{}': the registry's configuration differs from "
                               "the one given here in {}: the registry's wins (set "
                               "overwrite: true to replace it)",
                               job, fields));
    }
  }
  return registered;
}

namespace {

// A configuration's YAML as its entries: "cron" -> its text, "props.<key>" -> its text.
std::map<std::string, std::string> YamlEntries(const std::string& yaml) {
  std::map<std::string, std::string> entries;
  std::string key;
  size_t pos = 0;
  while (pos < yaml.size()) {
    size_t end = yaml.find('\n', pos);
    if (end == std::string::npos) end = yaml.size();
    std::string_view line(yaml.data() + pos, end - pos);
    pos = end + 1;
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    const size_t colon = line.find(':');
    if (indent == 0 && colon != std::string_view::npos) {
      key = std::string(line.substr(0, colon));
    } else if (indent == 2 && key.rfind("props", 0) == 0 && colon != std::string_view::npos) {
      key = "props." + std::string(line.substr(2, colon - 2));
    }
    entries[key].append(line).push_back('\n');
  }
  return entries;
}

}  // namespace

std::string ConfigService::DifferingFields(const JobConfiguration& given,
                                           const JobConfiguration& registered) {
  JobConfiguration a = given, b = registered;
  a.overwrite = b.overwrite = false;  // how it was written, not what runs
  auto ours = YamlEntries(ConfigToYaml(a, version_));
  auto theirs = YamlEntries(ConfigToYaml(b, version_));
  std::string fields;
  auto add = [&](const std::string& key) {
    if (key == "props") return;  // the props' own entries name what differs
    fields += (fields.empty() ? "" : ", ") + key;
  };
  for (const auto& [key, text] : ours) {
    auto it = theirs.find(key);
    if (it == theirs.end() || it->second != text) add(key);
  }
  for (const auto& [key, text] : theirs) {
    if (ours.count(key) == 0) add(key);
  }
  return fields;
}

void ConfigService::SetRunnableCheck(RunnableCheck check) {
  MutexLock lock(&mu_);
  check_ = std::move(check);
}

Status ConfigService::Check(const JobConfiguration& config) {
  if (Status s = ValidateJobConfiguration(config); !s.ok()) return s;
  RunnableCheck check;
  {
    MutexLock lock(&mu_);
    check = check_;
  }
  return check ? check(config) : Status::Ok();
}

Result<JobConfiguration> ConfigService::Load(bool from_cache) {
  const std::string& job = storage_.path().job_name();
  auto yaml =
      from_cache ? storage_.GetJobNodeData("config") : storage_.GetJobNodeDataDirectly("config");
  if (from_cache && !yaml.ok() && yaml.status().code() == StatusCode::kNotFound) {
    yaml = storage_.GetJobNodeDataDirectly("config");  // the cache may not have seen it yet
  }
  if (!yaml.ok()) return yaml.status().WithContext(fmt::format("job '{}': config", job));
  return Parse(*std::move(yaml));
}

Result<JobConfiguration> ConfigService::Parse(std::string yaml) {
  const std::string& job = storage_.path().job_name();
  {
    MutexLock lock(&mu_);
    if (parsed_.has_value() && parsed_yaml_ == yaml) return *parsed_;
    // A text refused once is refused again without parsing it (a hostile value of a megabyte
    // took a Debug build over a second to parse, on the trigger's path).
    if (!refused_.ok() && refused_yaml_ == yaml) return refused_;
    ++parses_;
  }
  auto config = ConfigFromYaml(yaml);
  Status refused = Status::Ok();
  if (!config.ok()) {
    refused = config.status().WithContext(fmt::format("job '{}'", job));
  } else if (Status s = Check(*config); !s.ok()) {
    refused = s.WithContext(fmt::format("job '{}': config", job));
  }
  MutexLock lock(&mu_);
  if (!refused.ok()) {
    // Only what the text itself decides is kept: an INVALID_ARGUMENT.
    if (refused.code() == StatusCode::kInvalidArgument) {
      refused_yaml_ = std::move(yaml);
      refused_ = refused;
    }
    return refused;
  }
  parsed_yaml_ = std::move(yaml);
  parsed_ = *config;
  return config;
}

uint64_t ConfigService::parses() {
  MutexLock lock(&mu_);
  return parses_;
}

std::optional<JobConfiguration> ConfigService::ParsedBefore(std::string_view yaml) {
  MutexLock lock(&mu_);
  if (!parsed_.has_value() || parsed_yaml_ != yaml) return std::nullopt;
  return parsed_;
}

Result<JobConfiguration> ConfigService::LoadLastGood(bool from_cache) {
  return LastGood(Load(from_cache));
}

Result<JobConfiguration> ConfigService::AdoptWritten() {
  std::string written;
  {
    MutexLock lock(&mu_);
    if (!written_yaml_.has_value()) return FailedPrecondition("no configuration written by SetUp");
    written = *std::move(written_yaml_);
    written_yaml_.reset();
  }
  return LastGood(Parse(std::move(written)));
}

Result<JobConfiguration> ConfigService::LastGood(Result<JobConfiguration> config) {
  MutexLock lock(&mu_);
  if (config.ok()) {
    last_good_ = *config;
    last_bad_.clear();
    return config;
  }
  if (!last_good_.has_value() || config.status().code() != StatusCode::kInvalidArgument) {
    return config;
  }
  if (std::string error = config.status().ToString(); error != last_bad_) {
    log_("WARN", error + " (keeping the last good configuration)");
    last_bad_ = std::move(error);
  }
  return *last_good_;
}

Status ConfigService::CheckMaxTimeDiffSecondsTolerable() {
  auto config = Load(true);
  if (!config.ok()) return config.status();
  return CheckMaxTimeDiffSecondsTolerable(config->max_time_diff_seconds);
}

Status ConfigService::CheckMaxTimeDiffSecondsTolerable(int max_diff) {
  if (max_diff < 0) return Status::Ok();
  auto registry_time = storage_.GetRegistryCenterTime();
  if (!registry_time.ok()) return registry_time.status();
  int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  int64_t diff = std::llabs(now - *registry_time);
  if (diff > int64_t{max_diff} * 1000) {
    return FailedPrecondition(fmt::format(
        "Time different between job server and register center exceed '{}' seconds, max time "
        "different is '{}' seconds.",
        diff / 1000, max_diff));
  }
  return Status::Ok();
}

}  // namespace elasticjob::config
