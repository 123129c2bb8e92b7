#include "sharding/strategy/builtin_strategies.h"

namespace elasticjob::sharding {

std::vector<ShardingAssignment> AverageAllocationStrategy::Sharding(
    const std::vector<std::string>& instances, std::string_view /*job_name*/,
    int sharding_total_count) const {
  std::vector<ShardingAssignment> result;
  if (instances.empty()) return result;
  const int n = static_cast<int>(instances.size());
  const int per = sharding_total_count / n;
  result.reserve(instances.size());
  for (int k = 0; k < n; ++k) {
    ShardingAssignment a{instances[static_cast<size_t>(k)], {}};
    a.items.reserve(static_cast<size_t>(per) + 1);
    for (int i = k * per; i < (k + 1) * per; ++i) a.items.push_back(i);
    result.push_back(std::move(a));
  }
  const int aliquant = sharding_total_count % n;
  for (int k = 0; k < aliquant; ++k) result[static_cast<size_t>(k)].items.push_back(per * n + k);
  return result;
}

}  // namespace elasticjob::sharding
