// Paths of the task models' registry subtree (docs/task-models.md; an extension Java
// ElasticJob ignores): `/{job}/task/workers/{instanceId}` (ephemeral, value `host:port` of
// the instance's TaskWorker RPC endpoint) and `/{job}/task/run` (persistent, the run in
// progress: `{runId}` written by its coordinator, removed when the run ends).
#ifndef ELASTICJOB_TASK_TASK_NODE_H_
#define ELASTICJOB_TASK_TASK_NODE_H_

#include <string>
#include <string_view>

namespace elasticjob::task {

inline std::string WorkersPath(std::string_view job) {
  return "/" + std::string(job) + "/task/workers";
}
inline std::string WorkerPath(std::string_view job, std::string_view instance_id) {
  return WorkersPath(job) + "/" + std::string(instance_id);
}
inline std::string RunPath(std::string_view job) { return "/" + std::string(job) + "/task/run"; }
inline std::string InstancesPath(std::string_view job) {
  return "/" + std::string(job) + "/instances";
}

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_TASK_NODE_H_
