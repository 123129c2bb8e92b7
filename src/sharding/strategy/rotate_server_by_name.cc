#include "infra/java_string.h"
#include "sharding/strategy/builtin_strategies.h"

namespace elasticjob::sharding {

std::vector<std::string> RotateLeft(const std::vector<std::string>& instances, int offset) {
  std::vector<std::string> out;
  out.reserve(instances.size());
  const size_t n = instances.size();
  for (size_t i = 0; i < n; ++i) out.push_back(instances[(i + static_cast<size_t>(offset)) % n]);
  return out;
}

std::vector<ShardingAssignment> RotateServerByNameStrategy::Sharding(
    const std::vector<std::string>& instances, std::string_view job_name,
    int sharding_total_count) const {
  if (instances.empty()) return {};
  int offset =
      infra::JavaAbsMod(infra::JavaStringHashCode(job_name), static_cast<int>(instances.size()));
  return AverageAllocationStrategy().Sharding(RotateLeft(instances, offset), job_name,
                                              sharding_total_count);
}

}  // namespace elasticjob::sharding
