#include "executor/http/http_job.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "elasticjob/api/job_log.h"
#include "infra/log.h"
#include "infra/printable.h"
#include "infra/props.h"

namespace elasticjob::executor {

Result<HttpJobProps> ParseHttpJobProps(const JobConfiguration& config) {
  const auto& props = config.props;
  HttpJobProps p;
  auto uri = infra::RequiredProp(props, "http.uri");
  if (!uri.ok()) return uri.status();
  p.uri = *uri;
  if (p.uri.rfind("http://", 0) != 0 && p.uri.rfind("https://", 0) != 0) {
    return InvalidArgument(
        fmt::format("props.http.uri: expected an http:// or https:// URL, got '{}'", p.uri));
  }
  auto method = infra::RequiredProp(props, "http.method");
  if (!method.ok()) return method.status();
  p.method = *method;
  static constexpr std::array<const char*, 6> kMethods = {"GET",    "POST",  "PUT",
                                                          "DELETE", "PATCH", "HEAD"};
  if (std::find(kMethods.begin(), kMethods.end(), p.method) == kMethods.end()) {
    return InvalidArgument(fmt::format(
        "props.http.method: unknown method '{}' (known: GET, POST, PUT, DELETE, PATCH, HEAD)",
        p.method));
  }
  p.data = infra::PropOr(props, "http.data", "");
  auto connect = infra::MillisProp(props, "http.connect.timeout.milliseconds", 3000);
  if (!connect.ok()) return connect.status();
  p.connect_timeout = *connect;
  auto read = infra::MillisProp(props, "http.read.timeout.milliseconds", 5000);
  if (!read.ok()) return read.status();
  p.read_timeout = *read;
  p.content_type = infra::PropOr(props, "http.content.type", "");
  auto fail = infra::BoolProp(props, "http.fail.on.error.status", true);
  if (!fail.ok()) return fail.status();
  p.fail_on_error_status = *fail;
  p.ca_file = infra::PropOr(props, "http.ssl.ca.file", "");
  return p;
}

Result<std::shared_ptr<JobItemExecutor>> HttpJob::Create(const JobConfiguration& config) {
  auto props = ParseHttpJobProps(config);
  if (!props.ok()) return props.status();
  return std::shared_ptr<JobItemExecutor>(std::make_shared<HttpJob>(*std::move(props)));
}

void HttpJob::Process(const JobConfiguration&, const ShardingContext& context, JobRunState&) {
  infra::HttpRequest request;
  request.method = props_.method;
  request.url = props_.uri;
  request.connect_timeout = props_.connect_timeout;
  request.read_timeout = props_.read_timeout;
  request.ca_file = props_.ca_file;
  request.max_body_bytes = kHttpJobMaxBodyBytes;
  // A timeout or an operator's stop aborts the request (docs/scheduling.md).
  request.cancellation = context.cancellation.get();
  request.headers.emplace_back("shardingContext", ShardingContextToJson(context));
  request.headers.emplace_back(std::string(kFencingTokenHeader),
                               std::to_string(context.fencing_token()));
  // A workflow node (docs/workflows.md): the workflow's data in a header.
  if (context.workflow != nullptr)
    request.headers.emplace_back("workflow", context.workflow->ToJson());
  if (!props_.content_type.empty())
    request.headers.emplace_back("Content-Type", props_.content_type);
  if (props_.method == "POST" || props_.method == "PUT" || props_.method == "PATCH") {
    request.body = props_.data;
  }
  // A pause since the runtime's lease check (ShardingContext::start_deadline): not sent.
  if (std::chrono::steady_clock::now() > context.start_deadline) {
    throw std::runtime_error(
        "not sent: the start deadline (the registry session's lease) passed before the request "
        "could leave");
  }
  auto response = infra::SendHttp(request);
  if (!response.ok()) throw std::runtime_error(response.status().message());
  OnResponse(context, *response);
  if (context.workflow != nullptr) {
    // The node's result is the body (cut to the limit); a JSON body's `workflowContext`
    // object adds its keys to the workflow context.
    context.workflow->SetResult(response->body);
    auto body = nlohmann::json::parse(response->body, nullptr, false);
    if (!body.is_discarded() && body.is_object() && body.contains("workflowContext") &&
        body["workflowContext"].is_object()) {
      for (const auto& [key, value] : body["workflowContext"].items()) {
        (void)context.workflow->PutContext(
            key, value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      }
    }
  }
  if (response->status >= 400 && props_.fail_on_error_status) {
    throw std::runtime_error(fmt::format("{} {}: status {}: {}", props_.method, props_.uri,
                                         response->status,
                                         infra::OneLine(response->body.substr(0, 200))));
  }
}

void HttpJob::OnResponse(const ShardingContext& context, const infra::HttpResponse& response) {
  // The execution's log (JOB_EXECUTION_LOG_LINE with tracing on, stderr off): the status, then
  // the body as it came, line by line (kept up to kHttpJobMaxBodyBytes).
  const LogLevel level = response.status >= 400 ? LogLevel::kWarn : LogLevel::kInfo;
  RecordExecutionOutput(
      context,
      fmt::format("{} {} -> status {}{}", props_.method, props_.uri, response.status,
                  response.truncated ? " (body cut at 64 KiB)" : ""),
      level);
  if (!response.body.empty()) RecordExecutionOutput(context, response.body, level);
  if (response.status >= 400 && !props_.fail_on_error_status) {
    infra::LogLine(context.logger, LogLevel::kWarn,
                   {.job = context.job_name, .item = std::nullopt, .instance = {}},
                   fmt::format("job '{}' item {}: {} {} answered status {} (ignored: "
                               "http.fail.on.error.status is false)",
                               context.job_name, context.sharding_item, props_.method, props_.uri,
                               response.status));
  }
}

}  // namespace elasticjob::executor
