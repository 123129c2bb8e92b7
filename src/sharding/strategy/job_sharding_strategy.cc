#include "elasticjob/sharding/job_sharding_strategy.h"

#include <algorithm>

#include "infra/java_string.h"

namespace elasticjob {

std::vector<std::string> SortInstancesAsLeader(std::vector<std::string> instance_ids) {
  std::sort(instance_ids.begin(), instance_ids.end(),
            [](const std::string& a, const std::string& b) { return infra::JavaStringLess(b, a); });
  return instance_ids;
}

}  // namespace elasticjob
