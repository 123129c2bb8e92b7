// The built-in sharding strategies (ElasticJob 3.0.5's, same names, same results).
//
// Thread safety: stateless (SingleShardingBalance reads its clock, which is thread-safe).
#ifndef ELASTICJOB_SHARDING_STRATEGY_BUILTIN_STRATEGIES_H_
#define ELASTICJOB_SHARDING_STRATEGY_BUILTIN_STRATEGIES_H_

#include "elasticjob/sharding/job_sharding_strategy.h"

namespace elasticjob::sharding {

// Items split into equal runs in list order; the remainder goes one each to the first
// instances: 3 instances, 8 items -> [0,1,6] [2,3,7] [4,5].
class AverageAllocationStrategy final : public JobShardingStrategy {
 public:
  std::string type() const override { return "AVG_ALLOCATION"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view job_name,
                                           int sharding_total_count) const override;
};

// Reverses the list when String.hashCode(jobName) is even, then AVG_ALLOCATION.
class OdevitySortByNameStrategy final : public JobShardingStrategy {
 public:
  std::string type() const override { return "ODEVITY"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view job_name,
                                           int sharding_total_count) const override;
};

// Rotates the list left by |hashCode(jobName)| % n, then AVG_ALLOCATION.
class RotateServerByNameStrategy final : public JobShardingStrategy {
 public:
  std::string type() const override { return "ROUND_ROBIN"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view job_name,
                                           int sharding_total_count) const override;
};

// Rotates the list left by |hashCode(jobName) + (int) nowMillis| % n, then AVG_ALLOCATION,
// so single-item jobs move around the cluster from one resharding to the next.
class SingleShardingBalanceStrategy final : public JobShardingStrategy {
 public:
  explicit SingleShardingBalanceStrategy(Clock& clock) : clock_(clock) {}
  std::string type() const override { return "SINGLE_SHARDING_BALANCE"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view job_name,
                                           int sharding_total_count) const override;

 private:
  Clock& clock_;
};

// `instances` rotated left by `offset`.  REQUIRES: 0 <= offset < instances.size().
std::vector<std::string> RotateLeft(const std::vector<std::string>& instances, int offset);

}  // namespace elasticjob::sharding

#endif  // ELASTICJOB_SHARDING_STRATEGY_BUILTIN_STRATEGIES_H_
