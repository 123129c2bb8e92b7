#include <chrono>

#include "infra/java_string.h"
#include "sharding/strategy/builtin_strategies.h"

namespace elasticjob::sharding {

std::vector<ShardingAssignment> SingleShardingBalanceStrategy::Sharding(
    const std::vector<std::string>& instances, std::string_view job_name,
    int sharding_total_count) const {
  if (instances.empty()) return {};
  int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  // Java: jobName.hashCode() + ((Long) now).intValue(), an int addition that wraps.
  uint32_t sum = static_cast<uint32_t>(infra::JavaStringHashCode(job_name)) +
                 static_cast<uint32_t>(static_cast<uint64_t>(now_ms));
  int offset = infra::JavaAbsMod(static_cast<int32_t>(sum), static_cast<int>(instances.size()));
  return AverageAllocationStrategy().Sharding(RotateLeft(instances, offset), job_name,
                                              sharding_total_count);
}

}  // namespace elasticjob::sharding
