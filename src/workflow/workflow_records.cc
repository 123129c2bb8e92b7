#include "workflow/workflow_records.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace elasticjob::workflow {

namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json ObjectOr(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() || !j.is_object() ? json::object() : j;
}

Result<json> Object(const std::string& text, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(fmt::format("{}: not a JSON object", what));
  }
  return j;
}

template <typename T>
void Take(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
  }
}

std::string SubObject(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? Dump(*it) : "{}";
}

}  // namespace

bool IsTerminalInstanceStatus(const std::string& s) {
  return s == "SUCCEEDED" || s == "FAILED" || s == "TIMEOUT" || s == "STOPPED" || s == "SKIPPED";
}

std::string ToJson(const InstanceHeader& h) {
  json j{{"created", h.created_ms},
         {"trigger", h.trigger},
         {"context", ObjectOr(h.context_json)},
         {"definition", h.definition_yaml}};
  if (!h.parent.empty()) j["parent"] = h.parent;
  return Dump(j);
}

std::string ToJson(const InstanceState& s) {
  json j{{"status", s.status}, {"context", ObjectOr(s.context_json)}, {"started", s.started_ms}};
  if (!s.message.empty()) j["message"] = s.message;
  if (s.ended_ms > 0) j["ended"] = s.ended_ms;
  return Dump(j);
}

std::string ToJson(const NodeRecord& r) {
  json j{{"state", r.state}, {"attempt", r.attempt}};
  if (r.retries_used > 0) j["retriesUsed"] = r.retries_used;
  if (r.lost > 0) j["lost"] = r.lost;
  if (!r.expected.empty()) j["expected"] = r.expected;
  if (r.started_ms > 0) j["started"] = r.started_ms;
  if (r.ended_ms > 0) j["ended"] = r.ended_ms;
  if (r.retry_at_ms > 0) j["retryAt"] = r.retry_at_ms;
  if (!r.result.empty()) j["result"] = r.result;
  if (!r.error.empty()) j["error"] = r.error;
  json c = ObjectOr(r.context_json);
  if (!c.empty()) j["context"] = c;
  if (!r.skip.empty()) j["skip"] = r.skip;
  return Dump(j);
}

Result<InstanceHeader> HeaderFromJson(const std::string& text) {
  auto j = Object(text, "workflow instance");
  if (!j.ok()) return j.status();
  InstanceHeader h;
  Take(*j, "created", h.created_ms);
  Take(*j, "trigger", h.trigger);
  h.context_json = SubObject(*j, "context");
  Take(*j, "definition", h.definition_yaml);
  Take(*j, "parent", h.parent);
  return h;
}

Result<InstanceState> StateFromJson(const std::string& text) {
  auto j = Object(text, "workflow instance state");
  if (!j.ok()) return j.status();
  InstanceState s;
  Take(*j, "status", s.status);
  Take(*j, "message", s.message);
  s.context_json = SubObject(*j, "context");
  Take(*j, "started", s.started_ms);
  Take(*j, "ended", s.ended_ms);
  return s;
}

Result<NodeRecord> NodeFromJson(const std::string& text) {
  auto j = Object(text, "workflow node");
  if (!j.ok()) return j.status();
  NodeRecord r;
  Take(*j, "state", r.state);
  Take(*j, "attempt", r.attempt);
  Take(*j, "retriesUsed", r.retries_used);
  Take(*j, "lost", r.lost);
  Take(*j, "expected", r.expected);
  Take(*j, "started", r.started_ms);
  Take(*j, "ended", r.ended_ms);
  Take(*j, "retryAt", r.retry_at_ms);
  Take(*j, "result", r.result);
  Take(*j, "error", r.error);
  r.context_json = SubObject(*j, "context");
  Take(*j, "skip", r.skip);
  return r;
}

Result<RunReport> ReportFromJson(const std::string& text) {
  auto j = Object(text, "workflow report");
  if (!j.ok()) return j.status();
  RunReport r;
  Take(*j, "ok", r.ok);
  Take(*j, "error", r.error);
  Take(*j, "items", r.items);
  auto ran = j->find("ran");
  if (ran != j->end() && ran->is_array()) {
    for (const auto& item : *ran) {
      if (item.is_number_integer()) r.ran.push_back(item.get<int>());
    }
  }
  auto it = j->find("results");
  if (it != j->end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      try {
        r.results[std::stoi(k)] = v.is_string() ? v.get<std::string>() : Dump(v);
      } catch (const std::exception&) {
      }
    }
  }
  r.context_json = SubObject(*j, "context");
  return r;
}

std::string MergeContext(const std::string& base, const std::string& added) {
  json b = ObjectOr(base);
  const json a = ObjectOr(added);
  for (const auto& [k, v] : a.items()) b[k] = v;
  return Dump(b);
}

std::string ContextFromParameter(const std::string& parameter) {
  if (parameter.empty()) return "{}";
  json j = json::parse(parameter, nullptr, false);
  if (!j.is_discarded() && j.is_object()) return Dump(j);
  return Dump(json{{"param", parameter}});
}

}  // namespace elasticjob::workflow
