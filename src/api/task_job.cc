#include "elasticjob/api/task_job.h"

#include <fmt/format.h>

#include <stdexcept>

namespace elasticjob {

void BroadcastJob::PostProcess(TaskContext& /*ctx*/, const std::vector<InstanceResult>& results) {
  std::string failed;
  for (const InstanceResult& r : results) {
    if (!r.success) {
      failed += fmt::format("{}{} ({})", failed.empty() ? "" : ", ", r.instance_id, r.data);
    }
  }
  if (!failed.empty()) throw std::runtime_error("instances failed: " + failed);
}

}  // namespace elasticjob
