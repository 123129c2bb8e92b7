// The `/{job}/config` YAML: written with YamlWriter (SnakeYAML's output, byte for byte),
// read with yaml-cpp (any valid YAML, `!!` class tags ignored).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <functional>
#include <map>
#include <sstream>

#include "config/yaml_node.h"
#include "config/yaml_scalar.h"
#include "elasticjob/config/job_configuration.h"
#include "infra/java_string.h"
#include "infra/printable.h"

namespace elasticjob {
namespace {

std::string Bool(bool v) { return v ? "true" : "false"; }

// The `jobExtraConfigurations` entry as written: the text exactly as read.
std::string ExtraConfigurationsEntry(std::string text) {
  if (text.back() != '\n') text += '\n';
  const bool inline_value = text[0] != '\n';
  return std::string("jobExtraConfigurations:") + (inline_value ? " " : "") + text;
}

}  // namespace

std::string ConfigToYaml(const JobConfiguration& c, ConfigYamlVersion version) {
  // One entry per key; written in alphabetical key order as SnakeYAML's bean
  // introspection orders JobConfigurationPOJO's properties.
  std::vector<std::pair<std::string, std::function<void(config::YamlWriter&)>>> entries;
  auto str = [&](const char* key, const std::string& v) {
    entries.emplace_back(key, [key, &v](config::YamlWriter& w) { w.StringEntry(0, key, v); });
  };
  auto opt = [&](const char* key, const std::optional<std::string>& v) {
    if (v.has_value()) str(key, *v);
  };
  auto raw = [&](const char* key, std::string v) {
    entries.emplace_back(key, [key, v](config::YamlWriter& w) { w.RawEntry(0, key, v); });
  };
  opt("cron", c.cron);
  str("description", c.description);
  raw("disabled", Bool(c.disabled));
  raw("failover", Bool(c.failover));
  opt("jobErrorHandlerType", c.job_error_handler_type);
  opt(version == ConfigYamlVersion::kV3_0_4 ? "jobExecutorServiceHandlerType"
                                            : "jobExecutorThreadPoolSizeProviderType",
      c.job_executor_thread_pool_size_provider_type);
  if (!c.job_extra_configurations.empty()) {
    entries.emplace_back("jobExtraConfigurations", [&c](config::YamlWriter& w) {
      w.Verbatim(ExtraConfigurationsEntry(c.job_extra_configurations));
    });
  }
  if (!c.job_listener_types.empty()) {
    entries.emplace_back("jobListenerTypes", [&c](config::YamlWriter& w) {
      w.StringList(0, "jobListenerTypes", c.job_listener_types);
    });
  }
  str("jobName", c.job_name);
  str("jobParameter", c.job_parameter);
  opt("jobShardingStrategyType", c.job_sharding_strategy_type);
  opt("label", c.label);
  raw("maxTimeDiffSeconds", std::to_string(c.max_time_diff_seconds));
  raw("misfire", Bool(c.misfire));
  raw("monitorExecution", Bool(c.monitor_execution));
  raw("overwrite", Bool(c.overwrite));
  // The execution-control settings ride in props (ElasticJob's SnakeYAML refuses unknown
  // top-level keys), merged with the user's in alphabetical order.
  std::map<std::string, std::string> props = c.props;
  const std::string prefix(kExecutionControlPropsPrefix);
  if (c.fixed_rate.count() > 0) props[prefix + "fixedRate"] = FormatDuration(c.fixed_rate);
  if (c.fixed_delay.count() > 0) props[prefix + "fixedDelay"] = FormatDuration(c.fixed_delay);
  if (c.timeout_ms > 0) props[prefix + "timeoutMs"] = std::to_string(c.timeout_ms);
  if (c.max_retries > 0) props[prefix + "maxRetries"] = std::to_string(c.max_retries);
  if (c.retry_interval_ms > 0) {
    props[prefix + "retryIntervalMs"] = std::to_string(c.retry_interval_ms);
  }
  if (!props.empty()) {
    entries.emplace_back("props", [props = std::move(props)](config::YamlWriter& w) {
      w.MapStart(0, "props");
      for (const auto& [k, v] : props) w.StringEntry(1, k, v);
    });
  }
  raw("reconcileIntervalMinutes", std::to_string(c.reconcile_interval_minutes));
  str("shardingItemParameters", c.sharding_item_parameters);
  raw("shardingTotalCount", std::to_string(c.sharding_total_count));
  raw("staticSharding", Bool(c.static_sharding));
  opt("timeZone", c.time_zone);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  config::YamlWriter w;
  for (auto& [key, write] : entries) write(w);
  return w.str();
}

namespace {

bool IsNullValue(const YAML::Node& n) {
  return !n.IsDefined() || n.IsNull() ||
         (n.IsScalar() && n.Tag() != "!" &&
          (n.Scalar() == "~" || n.Scalar() == "null" || n.Scalar() == "Null" ||
           n.Scalar() == "NULL"));
}

Status ReadBool(const YAML::Node& n, const std::string& key, bool* out) {
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No",
                                       "NO",    "off",   "Off",   "OFF"};
  if (n.IsScalar()) {
    for (const char* t : kTrue)
      if (n.Scalar() == t) return *out = true, Status::Ok();
    for (const char* f : kFalse)
      if (n.Scalar() == f) return *out = false, Status::Ok();
  }
  return config::YamlTypeError(key, "true or false", n);
}

Status ReadInt(const YAML::Node& n, const std::string& key, int* out) {
  if (n.IsScalar()) {
    std::string s;
    for (char ch : n.Scalar())
      if (ch != '_') s += ch;  // YAML 1.1 digit separators
    const char* b = s.data() + (!s.empty() && s[0] == '+');
    const char* e = s.data() + s.size();
    int v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (!s.empty() && ec == std::errc() && p == e) return *out = v, Status::Ok();
  }
  return config::YamlTypeError(key, "an integer", n);
}

// The text of the value of top-level key `key`, from just after its ':' to the line before
// the next top-level key, exactly as written.
std::string RawValueText(std::string_view doc, const YAML::Node& root, const std::string& key) {
  int key_line = -1;
  int next_line = -1;
  for (auto it = root.begin(); it != root.end(); ++it) {
    int line = it->first.Mark().line;
    if (it->first.Scalar() == key) key_line = line;
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    int line = it->first.Mark().line;
    if (line > key_line && (next_line == -1 || line < next_line)) next_line = line;
  }
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos <= doc.size()) {
    size_t nl = doc.find('\n', pos);
    if (nl == std::string_view::npos) nl = doc.size();
    lines.push_back(doc.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (key_line < 0 || key_line >= static_cast<int>(lines.size())) return "";
  std::string_view first = lines[static_cast<size_t>(key_line)];
  size_t colon = first.find(':', first.find(key) + key.size());
  std::string text(colon == std::string_view::npos ? "" : first.substr(colon + 1));
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  int end = next_line == -1 ? static_cast<int>(lines.size()) : next_line;
  // Leave out trailing blank lines, comments at column 0 and document markers.
  while (end - 1 > key_line) {
    std::string_view l = lines[static_cast<size_t>(end - 1)];
    if (l.empty() || l[0] == '#' || l == "..." || l == "---") {
      --end;
    } else {
      break;
    }
  }
  std::string out = text;
  for (int i = key_line + 1; i < end; ++i) {
    out += '\n';
    out += lines[static_cast<size_t>(i)];
  }
  return out;
}

// Whether `entry` followed by another top-level key reads as exactly those two keys.
bool EndsWhereItEnds(const std::string& entry) {
  auto doc = config::LoadYaml(entry + "zzz: end\n");
  return doc.ok() && doc->IsMap() && doc->size() == 2 &&
         config::YamlChild(*doc, "zzz").IsScalar() &&
         config::YamlChild(*doc, "zzz").Scalar() == "end";
}

// SnakeYAML's StreamReader: a YAML stream holds only printable characters (YAML 1.1: tab,
// line breaks, U+0020-U+007E, U+0085, U+00A0-U+D7FF, U+E000-U+FFFD, and beyond the BMP).
// ElasticJob refuses a node with any other; so do we (yaml-cpp reads some, such as a NUL,
// into bytes that are not UTF-8).
Status CheckPrintable(std::u16string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char16_t c = text[i];
    const bool printable = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0x7E) ||
                           c == 0x85 || (c >= 0xA0 && c <= 0xFFFD);  // surrogates: pairs
    if (!printable) {
      return InvalidArgument(fmt::format(
          "config: not valid YAML: special character U+{:04X} (character {}) is not allowed",
          static_cast<unsigned>(c), i + 1));
    }
  }
  return Status::Ok();
}

// ConfigFromYaml without its last step.
// One execution-control setting from its text (a top-level key of a run file, or a props
// entry of the registry's node) into `c`. `field` names it in errors.
Status ReadExecutionControl(const std::string& name, const std::string& text,
                            const std::string& field, JobConfiguration* c) {
  auto integer = [&](int64_t max, int64_t* out) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > max) {
      return InvalidArgument(fmt::format("{}: expected a non-negative integer, got '{}'", field,
                                         infra::Printable(text, 60)));
    }
    *out = v;
    return Status::Ok();
  };
  if (name == "fixedRate" || name == "fixedDelay") {
    auto d = ParseDuration(text, field);
    if (!d.ok()) return d.status();
    (name == "fixedRate" ? c->fixed_rate : c->fixed_delay) = *d;
    return Status::Ok();
  }
  if (name == "timeoutMs") return integer(INT64_MAX, &c->timeout_ms);
  if (name == "retryIntervalMs") return integer(INT64_MAX, &c->retry_interval_ms);
  if (name == "maxRetries") {
    int64_t v = 0;
    Status s = integer(INT32_MAX, &v);
    c->max_retries = static_cast<int>(v);
    return s;
  }
  return Status::Ok();  // a props key of a newer release: kept as a property
}

bool IsExecutionControlKey(const std::string& name) {
  return name == "fixedRate" || name == "fixedDelay" || name == "timeoutMs" ||
         name == "maxRetries" || name == "retryIntervalMs";
}

Result<JobConfiguration> Read(std::string_view text) {
  // As ElasticJob reads the node (Java decodes its bytes with replacement), invalid UTF-8
  // becomes U+FFFD: what is read can be written as YAML and read back the same.
  const std::u16string utf16 = infra::Utf8ToUtf16(text);
  if (Status s = CheckPrintable(utf16); !s.ok()) return s;
  const std::string decoded = infra::Utf16ToUtf8(utf16);
  const std::string_view yaml = decoded;
  auto loaded = config::LoadYaml(yaml);
  if (!loaded.ok()) return loaded.status().WithContext("config");
  const YAML::Node root = *loaded;
  if (!root.IsMap()) return InvalidArgument("config: expected a YAML mapping of job settings");
  JobConfiguration c;
  c.description.clear();
  Status s;
  try {
    for (auto it = root.begin(); it != root.end() && s.ok(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string key = it->first.Scalar();
      const YAML::Node v = it->second;
      bool null = IsNullValue(v);
      auto opt_str = [&](std::optional<std::string>* out) {
        if (null) {
          out->reset();
          return Status::Ok();
        }
        std::string tmp;
        Status st = config::ReadYamlString(v, key, &tmp);
        if (st.ok()) *out = std::move(tmp);
        return st;
      };
      auto str = [&](std::string* out) {
        if (null) {
          out->clear();
          return Status::Ok();
        }
        return config::ReadYamlString(v, key, out);
      };
      auto boolean = [&](bool* out) { return null ? Status::Ok() : ReadBool(v, key, out); };
      auto integer = [&](int* out) { return null ? Status::Ok() : ReadInt(v, key, out); };
      if (key == "jobName") {
        s = str(&c.job_name);
      } else if (key == "cron") {
        s = opt_str(&c.cron);
      } else if (key == "timeZone") {
        s = opt_str(&c.time_zone);
      } else if (key == "shardingTotalCount") {
        s = integer(&c.sharding_total_count);
      } else if (key == "shardingItemParameters") {
        s = str(&c.sharding_item_parameters);
      } else if (key == "jobParameter") {
        s = str(&c.job_parameter);
      } else if (key == "monitorExecution") {
        s = boolean(&c.monitor_execution);
      } else if (key == "failover") {
        s = boolean(&c.failover);
      } else if (key == "misfire") {
        s = boolean(&c.misfire);
      } else if (key == "maxTimeDiffSeconds") {
        s = integer(&c.max_time_diff_seconds);
      } else if (key == "reconcileIntervalMinutes") {
        s = integer(&c.reconcile_interval_minutes);
      } else if (key == "monitorPort") {
        s = integer(&c.monitor_port);
      } else if (key == "jobShardingStrategyType") {
        s = opt_str(&c.job_sharding_strategy_type);
      } else if (key == "jobExecutorThreadPoolSizeProviderType" ||
                 key == "jobExecutorServiceHandlerType") {
        s = opt_str(&c.job_executor_thread_pool_size_provider_type);
      } else if (key == "jobErrorHandlerType") {
        s = opt_str(&c.job_error_handler_type);
      } else if (key == "jobListenerTypes") {
        c.job_listener_types.clear();
        if (!null) {
          if (!v.IsSequence()) {
            s = config::YamlTypeError(key, "a list of type names", v);
          } else {
            for (size_t i = 0; i < v.size() && s.ok(); ++i) {
              std::string item;
              s = config::ReadYamlString(v[i], fmt::format("{}[{}]", key, i), &item);
              c.job_listener_types.push_back(std::move(item));
            }
          }
        }
      } else if (key == "jobExtraConfigurations") {
        bool empty = null || (v.IsSequence() && v.size() == 0);
        c.job_extra_configurations = empty ? "" : RawValueText(yaml, root, key);
        if (!empty && !c.job_extra_configurations.empty() &&
            c.job_extra_configurations.front() != '\n' && v.IsSequence() &&
            v.Style() == YAML::EmitterStyle::Block) {
          c.job_extra_configurations.insert(0, "\n");
        }
        // Written back verbatim, the text must end where it ends here: yaml-cpp accepts a
        // quoted scalar left open at the end of the document, which would swallow every
        // key written after it.
        if (!c.job_extra_configurations.empty() &&
            !EndsWhereItEnds(ExtraConfigurationsEntry(c.job_extra_configurations))) {
          s = InvalidArgument(fmt::format("{}: cannot be carried as written: '{}'", key,
                                          infra::Printable(c.job_extra_configurations, 60)));
        }
      } else if (key == "description") {
        s = str(&c.description);
      } else if (key == "props") {
        c.props.clear();
        if (!null) {
          if (!v.IsMap()) {
            s = config::YamlTypeError(key, "a map of property names to values", v);
          } else {
            for (auto p = v.begin(); p != v.end() && s.ok(); ++p) {
              if (!p->first.IsScalar()) {
                s = config::YamlTypeError(key, "property names", p->first);
                break;
              }
              std::string value;
              if (!IsNullValue(p->second)) {
                s = config::ReadYamlString(p->second, fmt::format("props.{}", p->first.Scalar()),
                                           &value);
              }
              std::string pkey = config::YamlScalarText(p->first);
              if (s.ok() && pkey.rfind(kExecutionControlPropsPrefix, 0) == 0 &&
                  IsExecutionControlKey(pkey.substr(kExecutionControlPropsPrefix.size()))) {
                s = ReadExecutionControl(pkey.substr(kExecutionControlPropsPrefix.size()), value,
                                         "props." + pkey, &c);
                continue;
              }
              c.props[std::move(pkey)] = std::move(value);
            }
          }
        }
      } else if (key == "disabled") {
        s = boolean(&c.disabled);
      } else if (key == "overwrite") {
        s = boolean(&c.overwrite);
      } else if (key == "label") {
        s = opt_str(&c.label);
      } else if (key == "staticSharding") {
        s = boolean(&c.static_sharding);
      } else if (IsExecutionControlKey(key)) {
        // The run files' spelling; the registry's node carries them in props.
        std::string value_text;
        if (!null) s = config::ReadYamlString(v, key, &value_text);
        if (s.ok() && !null) s = ReadExecutionControl(key, value_text, key, &c);
      }
      // Unknown keys (newer ElasticJob releases, extensions) are ignored.
    }
  } catch (const std::exception& e) {  // yaml-cpp's, or any other: never the caller's
    return InvalidArgument(fmt::format("config: {}", e.what()));
  }
  if (!s.ok()) return InvalidArgument("config: " + s.message());
  return c;
}

}  // namespace

Result<JobConfiguration> ConfigFromYaml(std::string_view text) {
  if (text.size() > kMaxConfigYamlBytes) {
    return InvalidArgument(
        fmt::format("config: {} bytes, more than the {} a job's "
                    "configuration may have (kMaxConfigYamlBytes)",
                    text.size(), kMaxConfigYamlBytes));
  }
  Result<JobConfiguration> c = Read(text);
  if (c.ok()) return c;
  return Status(c.status().code(), infra::OneLine(c.status().message()));
}

}  // namespace elasticjob
