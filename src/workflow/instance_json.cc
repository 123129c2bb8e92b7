#include "workflow/instance_json.h"

namespace elasticjob::workflow {

nlohmann::json InstanceStatusJson(const WorkflowInstanceStatus& s) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const WorkflowNodeStatus& n : s.nodes) {
    nodes.push_back({{"id", n.id},
                     {"state", n.state},
                     {"attempt", n.attempt},
                     {"result", n.result},
                     {"error", n.error},
                     {"startedMs", n.started_ms},
                     {"endedMs", n.ended_ms}});
  }
  nlohmann::json context = nlohmann::json::parse(s.context_json, nullptr, false);
  if (context.is_discarded()) context = nlohmann::json::object();
  return {{"id", s.id},
          {"workflow", s.workflow},
          {"status", s.status},
          {"trigger", s.trigger},
          {"message", s.message},
          {"createdMs", s.created_ms},
          {"endedMs", s.ended_ms},
          {"context", context},
          {"nodes", nodes}};
}

}  // namespace elasticjob::workflow
