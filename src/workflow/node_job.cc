#include "workflow/node_job.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "elasticjob/api/workflow_node_run.h"
#include "infra/log.h"
#include "workflow/workflow_node.h"

namespace elasticjob::workflow {

namespace {

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string EncodeEnvelope(const Envelope& e) {
  nlohmann::json j = {
      {"workflow", e.workflow}, {"instance", e.instance}, {"node", e.node}, {"attempt", e.attempt}};
  if (e.param) j["param"] = *e.param;
  j["upstream"] = nlohmann::json::parse(e.upstream_json, nullptr, false);
  if (j["upstream"].is_discarded()) j["upstream"] = nlohmann::json::object();
  j["context"] = nlohmann::json::parse(e.context_json, nullptr, false);
  if (j["context"].is_discarded()) j["context"] = nlohmann::json::object();
  return std::string(kEnvelopePrefix) + Dump(j);
}

std::string EncodeCancel(const Envelope& e) {
  nlohmann::json j = {
      {"workflow", e.workflow}, {"instance", e.instance}, {"node", e.node}, {"attempt", e.attempt}};
  return std::string(kCancelPrefix) + Dump(j);
}

Result<Envelope> DecodeEnvelope(std::string_view parameter) {
  if (parameter.starts_with(kCancelPrefix)) {
    parameter.remove_prefix(kCancelPrefix.size());
  } else if (IsEnvelope(parameter)) {
    parameter.remove_prefix(kEnvelopePrefix.size());
  } else {
    return InvalidArgument("not a workflow trigger");
  }
  auto j = nlohmann::json::parse(parameter, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("workflow trigger: the envelope is not a JSON object");
  }
  Envelope e;
  try {
    e.workflow = j.at("workflow").get<std::string>();
    e.instance = j.at("instance").get<std::string>();
    e.node = j.at("node").get<std::string>();
    e.attempt = j.at("attempt").get<int>();
    if (j.contains("param") && j["param"].is_string()) e.param = j["param"].get<std::string>();
    if (j.contains("upstream")) e.upstream_json = Dump(j["upstream"]);
    if (j.contains("context")) e.context_json = Dump(j["context"]);
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(fmt::format("workflow trigger: {}", ex.what()));
  }
  if (e.workflow.empty() || e.instance.empty() || e.node.empty() || e.attempt < 1 ||
      e.workflow.find('/') != std::string::npos || e.instance.find('/') != std::string::npos ||
      e.node.find('/') != std::string::npos) {
    return InvalidArgument("workflow trigger: a bad workflow, instance, node or attempt");
  }
  return e;
}

void NodeRuns::Take(const std::string& name, const std::string& value,
                    const std::string& instance_id, Start start) {
  const std::string request = RunRequestsPath(job_name_) + "/" + name;
  auto decoded = DecodeEnvelope(value);
  if (!decoded.ok() || value.starts_with(kCancelPrefix)) {
    if (!decoded.ok()) {
      log_("WARN", fmt::format("job '{}': workflowRuns/{}: {} (removed)", job_name_, name,
                               decoded.status().message()));
    } else {
      Cancel(*decoded);
    }
    registry_.ExecuteInTransactionAsync({TransactionOp::Delete(request)}, executor_, [](Status) {});
    return;
  }
  auto envelope = std::make_shared<const Envelope>(*std::move(decoded));
  const std::string mark =
      fmt::format("{}/{}@{}", RunsPath(envelope->workflow, envelope->instance, envelope->node),
                  envelope->attempt, instance_id);
  registry_.ExecuteInTransactionAsync(
      {TransactionOp::Delete(request), TransactionOp::Create(mark, "", CreateMode::kEphemeral)},
      executor_, [this, name, value, instance_id, envelope, start = std::move(start)](Status s) {
        if (!s.ok()) {
          // Gone (the coordinator withdrew it, the instance was cleaned up) or taken: not ours.
          log_("WARN", fmt::format("job '{}': workflow run request {} not taken: {}", job_name_,
                                   name, s.ToString()));
          return;
        }
        {
          MutexLock lock(&mu_);
          Entry& entry = runs_[value];
          if (entry.envelope == nullptr) entry.envelope = envelope;
          ++entry.refs;
        }
        start(value, [this, value, instance_id](bool ran, const std::string& error) {
          Finish(value, instance_id, ran, error);
        });
      });
}

void NodeRuns::Cancel(const Envelope& target) {
  std::vector<std::shared_ptr<Cancellation>> requests;
  {
    MutexLock lock(&mu_);
    for (auto& [key, entry] : runs_) {
      const Envelope& e = *entry.envelope;
      if (e.workflow != target.workflow || e.instance != target.instance || e.node != target.node ||
          e.attempt != target.attempt) {
        continue;
      }
      entry.cancelled = true;
      if (entry.cancellation != nullptr) requests.push_back(entry.cancellation);
    }
  }
  const std::string reason = fmt::format("workflow instance {} stopped", target.instance);
  for (const auto& c : requests) c->Request(reason);
  log_("INFO", fmt::format("job '{}': {} (node {} attempt {}): its run here is "
                           "cancelled",
                           job_name_, reason, target.node, target.attempt));
}

std::shared_ptr<const Envelope> NodeRuns::Find(const std::string& parameter,
                                               const std::shared_ptr<Cancellation>& cancellation,
                                               bool* cancelled) {
  std::shared_ptr<const Envelope> envelope;
  {
    MutexLock lock(&mu_);
    auto it = runs_.find(parameter);
    if (it == runs_.end()) return nullptr;
    if (it->second.cancellation == nullptr) it->second.cancellation = cancellation;
    *cancelled = it->second.cancelled;
    envelope = it->second.envelope;
  }
  return envelope;
}

void NodeRuns::RecordItem(const std::string& parameter, int item, bool ok, std::string error,
                          std::optional<std::string> result,
                          std::map<std::string, std::string> context) {
  MutexLock lock(&mu_);
  auto it = runs_.find(parameter);
  if (it == runs_.end()) return;
  Entry& e = it->second;
  ++e.items;
  e.ran.insert(item);
  if (!ok) e.failures[item] = std::move(error);
  if (result) e.results[item] = std::move(*result);
  for (auto& [k, v] : context) e.context[k] = std::move(v);
}

void NodeRuns::Finish(const std::string& parameter, const std::string& instance_id, bool ran,
                      const std::string& error) {
  Entry entry;
  {
    MutexLock lock(&mu_);
    auto it = runs_.find(parameter);
    if (it == runs_.end()) return;
    entry = it->second;
    if (--it->second.refs <= 0) runs_.erase(it);
  }
  const Envelope& env = *entry.envelope;
  nlohmann::json report = {
      {"instance", instance_id}, {"ok", ran && entry.failures.empty()}, {"items", entry.items}};
  if (!ran) report["error"] = error;
  nlohmann::json failures = nlohmann::json::object();
  for (const auto& [item, why] : entry.failures) failures[std::to_string(item)] = why;
  if (!entry.failures.empty()) {
    report["failed"] = failures;
    report["error"] =
        fmt::format("item {}: {}", entry.failures.begin()->first, entry.failures.begin()->second);
  }
  nlohmann::json results = nlohmann::json::object();
  for (const auto& [item, r] : entry.results) results[std::to_string(item)] = r;
  report["results"] = results;
  report["ran"] = entry.ran;
  nlohmann::json context = nlohmann::json::object();
  for (const auto& [k, v] : entry.context) {
    auto value = nlohmann::json::parse(v, nullptr, false);
    context[k] = value.is_discarded() ? nlohmann::json(v) : value;
  }
  report["context"] = context;
  const std::string name = fmt::format("{}@{}", env.attempt, instance_id);
  const std::string report_key = ReportsPath(env.workflow, env.instance, env.node) + "/" + name;
  const std::string mark_key = RunsPath(env.workflow, env.instance, env.node) + "/" + name;
  std::string value = Dump(report);
  // The report and the mark's end in one multi-op; without the mark (its write failed),
  // the report alone.
  registry_.ExecuteInTransactionAsync(
      {TransactionOp::Create(report_key, value), TransactionOp::Delete(mark_key)}, executor_,
      [this, report_key, value, job = job_name_, log = log_](Status s) {
        if (s.ok()) return;
        registry_.ExecuteInTransactionAsync(
            {TransactionOp::Create(report_key, value)}, executor_,
            [report_key, job, log](Status s2) {
              if (!s2.ok() && s2.code() != StatusCode::kAlreadyExists) {
                log("WARN", fmt::format("job '{}': workflow report {}: {}", job, report_key,
                                        s2.ToString()));
              }
            });
      });
}

void NodeJob::Execute(const ShardingContext& context) {
  if (!IsEnvelope(context.job_parameter)) return inner_->Execute(context);
  bool cancelled = false;
  std::shared_ptr<const Envelope> env =
      runs_->Find(context.job_parameter, context.cancellation, &cancelled);
  if (cancelled) {
    runs_->RecordItem(context.job_parameter, context.sharding_item, false,
                      "cancelled: the workflow instance was stopped", std::nullopt, {});
    throw std::runtime_error("cancelled: the workflow instance was stopped");
  }
  if (env == nullptr) {
    auto decoded = DecodeEnvelope(context.job_parameter);
    if (!decoded.ok()) return inner_->Execute(context);
    env = std::make_shared<const Envelope>(*std::move(decoded));
  }
  ShardingContext item = context;
  if (env->param) {
    item.job_parameter = *env->param;
  } else {
    item.job_parameter = configured_parameter_ ? configured_parameter_() : std::string();
  }
  item.workflow = std::make_shared<WorkflowNodeRun>(env->workflow, env->instance, env->node,
                                                    env->upstream_json, env->context_json);
  // With tracing on, the execution's log names the workflow run it belongs to.
  if (item.log_sink != nullptr) {
    item.log().Log(LogLevel::kInfo,
                   fmt::format("workflow {} instance {} node {} attempt {}", env->workflow,
                               env->instance, env->node, env->attempt));
  }
  try {
    inner_->Execute(item);
  } catch (const std::exception& e) {
    runs_->RecordItem(context.job_parameter, context.sharding_item, false, e.what(),
                      item.workflow->result(), item.workflow->context_additions());
    throw;
  } catch (...) {
    runs_->RecordItem(context.job_parameter, context.sharding_item, false, "unknown exception",
                      item.workflow->result(), item.workflow->context_additions());
    throw;
  }
  runs_->RecordItem(context.job_parameter, context.sharding_item, true, "", item.workflow->result(),
                    item.workflow->context_additions());
}

}  // namespace elasticjob::workflow
