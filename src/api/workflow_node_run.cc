#include "elasticjob/api/workflow_node_run.h"

#include <nlohmann/json.hpp>

#include "elasticjob/workflow/workflow_definition.h"

namespace elasticjob {

namespace {

nlohmann::json ParseOr(const std::string& text, nlohmann::json fallback) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence.
std::string Cut(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

}  // namespace

std::string WorkflowNodeRun::ToJson() const {
  nlohmann::json j = {{"name", workflow_name_},
                      {"instanceId", instance_id_},
                      {"node", node_id_},
                      {"upstream", ParseOr(upstream_results_json_, nlohmann::json::object())},
                      {"context", ParseOr(context_json_, nlohmann::json::object())}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void WorkflowNodeRun::SetResult(std::string_view result) {
  MutexLock lock(&mu_);
  result_ = Cut(result, kWorkflowResultLimit);
}

Status WorkflowNodeRun::PutContext(std::string_view key, std::string_view json_value) {
  if (key.empty()) return InvalidArgument("workflow context: an empty key");
  auto j = nlohmann::json::parse(json_value, nullptr, /*allow_exceptions=*/false);
  std::string value = j.is_discarded()
                          ? nlohmann::json(std::string(json_value))
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                          : j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  MutexLock lock(&mu_);
  size_t bytes = context_bytes_ + key.size() + value.size();
  auto it = context_.find(std::string(key));
  if (it != context_.end()) bytes -= it->first.size() + it->second.size();
  if (bytes > kWorkflowContextLimit) {
    return InvalidArgument("workflow context: key '" + std::string(key) +
                           "': the item's keys would pass the limit of " +
                           std::to_string(kWorkflowContextLimit) + " bytes");
  }
  context_bytes_ = bytes;
  context_[std::string(key)] = std::move(value);
  return Status::Ok();
}

std::optional<std::string> WorkflowNodeRun::result() const {
  MutexLock lock(&mu_);
  return result_;
}

std::map<std::string, std::string> WorkflowNodeRun::context_additions() const {
  MutexLock lock(&mu_);
  return context_;
}

}  // namespace elasticjob
