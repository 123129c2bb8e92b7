// The JSON values of the workflow subtree (docs/workflows.md "Registry layout"): an
// instance's header (written once, at its request), its state, each node's record, and the
// reports the instances running a node write. Parsing is lenient: a missing field keeps
// its default; a value that is not a JSON object is an error naming the key.
//
// Thread safety: value types and pure functions.
#ifndef ELASTICJOB_WORKFLOW_WORKFLOW_RECORDS_H_
#define ELASTICJOB_WORKFLOW_WORKFLOW_RECORDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob::workflow {

struct InstanceHeader {
  int64_t created_ms = 0;
  std::string trigger = "operator";  // cron | operator | workflow
  std::string context_json = "{}";   // the context it starts from
  std::string definition_yaml;       // the definition as it was when the instance was asked
  std::string parent;                // a nested instance's: "{workflow}/{instance id}"
};

struct InstanceState {
  std::string status = "RUNNING";  // RUNNING SUCCEEDED FAILED TIMEOUT STOPPED SKIPPED
  std::string message;
  std::string context_json = "{}";
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
};

struct NodeRecord {
  std::string state = "WAITING";  // WAITING RUNNING SUCCEEDED FAILED SKIPPED
  int attempt = 0;
  int retries_used = 0;
  int lost = 0;                       // attempts restarted because a runner's instance went
  std::vector<std::string> expected;  // the job instances triggered for `attempt`
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
  int64_t retry_at_ms = 0;  // > 0: the next attempt starts then
  std::string result;
  std::string error;
  std::string context_json = "{}";  // the keys this node added
  std::string skip;                 // SKIPPED: "disabled" (passes on) or "branch"
};

struct RunReport {
  bool ok = false;
  std::string error;
  int items = 0;
  std::vector<int> ran;                // the items run (absent in reports of older versions)
  std::map<int, std::string> results;  // item -> result
  std::string context_json = "{}";
};

bool IsTerminalInstanceStatus(const std::string& status);

std::string ToJson(const InstanceHeader& header);
std::string ToJson(const InstanceState& state);
std::string ToJson(const NodeRecord& record);
Result<InstanceHeader> HeaderFromJson(const std::string& text);
Result<InstanceState> StateFromJson(const std::string& text);
Result<NodeRecord> NodeFromJson(const std::string& text);
Result<RunReport> ReportFromJson(const std::string& text);

// `base` with the keys of `added` set (both JSON objects; a bad one counts as {}).
std::string MergeContext(const std::string& base, const std::string& added);
// The context an instance starts from: a JSON object parameter as it is, other non-empty
// text as {"param": text}, nothing as {}.
std::string ContextFromParameter(const std::string& parameter);

}  // namespace elasticjob::workflow

#endif  // ELASTICJOB_WORKFLOW_WORKFLOW_RECORDS_H_
