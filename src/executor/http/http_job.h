// HttpJob: ElasticJob's HTTP job type (`elasticJobType: HTTP`). Each item sends one request,
// on the item pool (never on a trigger thread), with the request header `shardingContext`
// holding the item's sharding context JSON (ShardingContextToJson, what a SCRIPT job gets).
// Props, as ElasticJob 3.0.5's (docs/job-types.md):
//   http.uri                          required
//   http.method                       required: GET, POST, PUT, DELETE, PATCH or HEAD
//   http.data                         the body of a POST, PUT or PATCH
//   http.connect.timeout.milliseconds default 3000
//   http.read.timeout.milliseconds    default 5000 (after connecting)
//   http.content.type                 the Content-Type header, when set
// and ours:
//   http.fail.on.error.status         default true: a status >= 400 fails the item (so the
//                                     error handler sees it); false: logged only, as
//                                     ElasticJob does
//   http.ssl.ca.file                  PEM file of CA certificates trusted for HTTPS (default:
//                                     the system's)
//
// Thread safety: Process may run concurrently for several items.
#ifndef ELASTICJOB_EXECUTOR_HTTP_HTTP_JOB_H_
#define ELASTICJOB_EXECUTOR_HTTP_HTTP_JOB_H_

#include <chrono>
#include <memory>
#include <string>

#include "elasticjob/api/job_item_executor.h"
#include "http/http_client.h"

namespace elasticjob::executor {

struct HttpJobProps {
  std::string uri;
  std::string method;
  std::string data;
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds read_timeout{5000};
  std::string content_type;
  bool fail_on_error_status = true;
  std::string ca_file;
};

// Reads the props of `config`. INVALID_ARGUMENT naming the prop and the value: a missing or
// empty http.uri or http.method, a URI that is not http:// or https://, an unknown method, a
// timeout that is not a positive integer, a http.fail.on.error.status other than true or false.
Result<HttpJobProps> ParseHttpJobProps(const JobConfiguration& config);

// How much of a response body is kept.
inline constexpr size_t kHttpJobMaxBodyBytes = 64 * 1024;

class HttpJob final : public JobItemExecutor {
 public:
  static Result<std::shared_ptr<JobItemExecutor>> Create(const JobConfiguration& config);

  explicit HttpJob(HttpJobProps props) : props_(std::move(props)) {}
  // Sends the item's request. Throws std::runtime_error naming the method, the URI and the
  // reason when no response came within the timeouts, or the status when it is >= 400 and
  // http.fail.on.error.status is true.
  void Process(const JobConfiguration& config, const ShardingContext& context,
               JobRunState& state) override;
  std::string type_name() const override { return "HTTP"; }

 private:
  // Where every response ends: the status line and the body go to the execution's job log
  // (elasticjob/api/job_log.h: JOB_EXECUTION_LOG_LINE with tracing on, stderr off), at WARN
  // for a status >= 400; such a status that does not fail the item is also a WARN line.
  void OnResponse(const ShardingContext& context, const infra::HttpResponse& response);

  const HttpJobProps props_;
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_HTTP_HTTP_JOB_H_
