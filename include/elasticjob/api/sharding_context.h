// ShardingContext: what one run of one sharding item knows about itself. It is the argument
// of SimpleJob::Execute, and script and HTTP jobs receive it as JSON (the script's last
// argument; the HTTP job's `shardingContext` header), exactly as ElasticJob sends it:
// Gson's output with fields in the order jobName, taskId, shardingTotalCount, jobParameter,
// shardingItem, shardingParameter, nulls left out and Gson's HTML-safe escaping
// (`=` becomes \u003d).
//
// clang-format off
//   {"jobName":"orderSync","taskId":"orderSync@-@0,1@-@READY@-@10.0.0.5@-@4242",
//    "shardingTotalCount":3,"jobParameter":"","shardingItem":0,"shardingParameter":"Beijing"}
// clang-format on
//
// A job logs about its run through `log()` (elasticjob/api/job_log.h): with event tracing on,
// the lines are kept with the execution; off, they go to the job's Logger. The sink and the
// logger behind it are shared by the copies of a context and are not part of its JSON or of ==. So
// is its cancellation (elasticjob/api/cancellation.h): `cancelled()` turns true when the runtime
// asks the run to stop (its instance's registry session expired: others may run the item now).
//
// Each item run also carries a fencing token (fencing_token()), outside the JSON too.
//
// Thread safety: plain value type.
#ifndef ELASTICJOB_API_SHARDING_CONTEXT_H_
#define ELASTICJOB_API_SHARDING_CONTEXT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/cancellation.h"
#include "elasticjob/api/job_log.h"
#include "elasticjob/api/workflow_node_run.h"
#include "elasticjob/status.h"

namespace elasticjob {

struct ShardingContext {
  std::string job_name;
  std::string task_id;
  int sharding_total_count = 0;
  std::string job_parameter;
  int sharding_item = 0;
  std::optional<std::string> sharding_parameter;  // unset when the item has no parameter
  // Where log() writes: the execution's log when tracing is on; null: the process log.
  std::shared_ptr<JobLogSink> log_sink = nullptr;
  // Where log() writes when log_sink is null: the job's Logger (BootstrapOptions::logger),
  // borrowed for the run; null: the process default (elasticjob/logger.h).
  Logger* logger = nullptr;
  // The run's cancellation, shared by its items (null: the run cannot be cancelled).
  std::shared_ptr<Cancellation> cancellation = nullptr;
  // The run's fencing token (fencing_token()).
  int64_t fencing = 0;
  // This item's attempt, from 1, of at most max_attempts (maxRetries + 1: docs/scheduling.md).
  int attempt = 1;
  int max_attempts = 1;
  // The moment (monotonic clock) after which this item must not start: the end of the
  // registry session's lease as the runtime found it just before calling the job
  // (docs/runtime.md, "The session lease"). The runtime's SCRIPT spawn checks it in the new
  // process just before its exec, HTTP jobs before sending; a C++ job may check it before
  // effects that must not happen after a pause. max(): no bound.
  std::chrono::steady_clock::time_point start_deadline =
      std::chrono::steady_clock::time_point::max();
  // The workflow this item runs for (elasticjob/api/workflow_node_run.h: its data, and where
  // the item sets its result and context keys); null when no workflow started the run.
  // Outside the JSON and ==, like log_sink.
  std::shared_ptr<WorkflowNodeRun> workflow = nullptr;

  // This run's log (see above).
  JobLog log() const { return JobLog(*this); }
  // Whether the runtime asked this run to stop (see above): return soon when it did.
  bool cancelled() const { return cancellation != nullptr && cancellation->requested(); }
  // The fencing token of this item run (docs/runtime.md "Fencing tokens"): the zxid of the
  // registry transaction that claimed the item (wrote its running mark) for this run. Every
  // later claim of the item, by any instance, has a larger one, so a resource that remembers
  // the largest token it accepted for the item and refuses smaller ones refuses a writer
  // whose claim others have since replaced (an instance resumed from a pause, a run cut off
  // by a session expiry). SCRIPT items get it as ELASTICJOB_FENCING_TOKEN, HTTP jobs as the
  // `fencingToken` header. 0: no token (monitorExecution off: items are not claimed).
  int64_t fencing_token() const { return fencing; }

  // The fields above but log_sink and cancellation.
  friend bool operator==(const ShardingContext& a, const ShardingContext& b) {
    return a.job_name == b.job_name && a.task_id == b.task_id &&
           a.sharding_total_count == b.sharding_total_count && a.job_parameter == b.job_parameter &&
           a.sharding_item == b.sharding_item && a.sharding_parameter == b.sharding_parameter;
  }
};

// Where a SCRIPT item finds its fencing token (decimal), and the header an HTTP job's
// request carries it in.
inline constexpr std::string_view kFencingTokenVariable = "ELASTICJOB_FENCING_TOKEN";
inline constexpr std::string_view kFencingTokenHeader = "fencingToken";

// ElasticJob's task id: `jobName@-@items@-@READY@-@instanceId`, items comma-separated in the
// given order, the instance id being `ip@-@pid`.
std::string BuildTaskId(std::string_view job_name, const std::vector<int>& items,
                        std::string_view instance_id);

// The JSON ElasticJob's Gson writes for `context` (compact, one line).
std::string ShardingContextToJson(const ShardingContext& context);

// Reads that JSON back (any field order, unknown fields ignored). Fails naming the field
// when a required field is missing or has the wrong type (an integer outside int included).
Result<ShardingContext> ShardingContextFromJson(std::string_view json);

}  // namespace elasticjob

#endif  // ELASTICJOB_API_SHARDING_CONTEXT_H_
