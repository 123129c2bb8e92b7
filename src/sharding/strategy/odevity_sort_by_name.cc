#include <algorithm>

#include "infra/java_string.h"
#include "sharding/strategy/builtin_strategies.h"

namespace elasticjob::sharding {

std::vector<ShardingAssignment> OdevitySortByNameStrategy::Sharding(
    const std::vector<std::string>& instances, std::string_view job_name,
    int sharding_total_count) const {
  std::vector<std::string> list = instances;
  if (infra::JavaStringHashCode(job_name) % 2 == 0) std::reverse(list.begin(), list.end());
  return AverageAllocationStrategy().Sharding(list, job_name, sharding_total_count);
}

}  // namespace elasticjob::sharding
