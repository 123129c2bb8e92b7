// Job sharding strategies: who runs which sharding item.
//
// The leader hands a strategy the job's available instances (instance ids sorted in
// descending order, only those whose server is ENABLED; see SortInstancesAsLeader) and the
// total item count; the strategy returns, for every instance in that order or a permutation
// of it, the items it owns. The built-in strategies reproduce ElasticJob 3.0.5's results bit
// for bit (docs/sharding.md):
//   AVG_ALLOCATION (default), ODEVITY, ROUND_ROBIN, SINGLE_SHARDING_BALANCE.
// Users add their own by implementing JobShardingStrategy and giving it to the bootstrap
// (BootstrapOptions::sharding_strategy, or sharding_strategies for jobShardingStrategyType to
// name): registered explicitly, never by static self-registration. The leader checks a plan
// before committing it: an exception or an inconsistent plan (an item out of range, given
// twice or to nobody, an unknown instance) fails that sharding, naming the strategy.
//
// Thread safety: strategies must be stateless or internally synchronised; the registry is
// safe for concurrent Find() once registration is done (register at start-up).
//
// clang-format off
//   auto registry =
//       elasticjob::JobShardingStrategyRegistry::WithBuiltins(elasticjob::Clock::System());
//   auto strategy = registry.Find("ROUND_ROBIN");
//   if (!strategy.ok()) { std::cerr << strategy.status() << "\n"; }
//   std::vector<elasticjob::ShardingAssignment> plan =
//       (*strategy)->Sharding(elasticjob::SortInstancesAsLeader(ids), "orderJob", 10);
// clang-format on
#ifndef ELASTICJOB_SHARDING_JOB_SHARDING_STRATEGY_H_
#define ELASTICJOB_SHARDING_JOB_SHARDING_STRATEGY_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/status.h"

namespace elasticjob {

// One instance's share: its instance id (`ip@-@pid`) and its items in ascending order.
struct ShardingAssignment {
  std::string instance_id;
  std::vector<int> items;
  friend bool operator==(const ShardingAssignment&, const ShardingAssignment&) = default;
};

class JobShardingStrategy {
 public:
  virtual ~JobShardingStrategy() = default;

  // The type name configured in `jobShardingStrategyType`, e.g. "AVG_ALLOCATION".
  virtual std::string type() const = 0;

  // Splits items [0, sharding_total_count) among `instances`. Returns one entry per instance
  // (empty items allowed), or nothing when `instances` is empty.
  // REQUIRES: sharding_total_count > 0; `instances` has no duplicates.
  virtual std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                                   std::string_view job_name,
                                                   int sharding_total_count) const = 0;
};

// Sorts instance ids as ElasticJob's leader lists them: descending by Java string order.
std::vector<std::string> SortInstancesAsLeader(std::vector<std::string> instance_ids);

// Named strategies. Find("") gives AVG_ALLOCATION, as an unset type does in ElasticJob.
class JobShardingStrategyRegistry {
 public:
  JobShardingStrategyRegistry() = default;
  JobShardingStrategyRegistry(JobShardingStrategyRegistry&&) = default;
  JobShardingStrategyRegistry& operator=(JobShardingStrategyRegistry&&) = default;

  // A registry holding the four built-in strategies. `clock` (borrowed, must outlive the
  // registry) drives SINGLE_SHARDING_BALANCE's time-based rotation.
  static JobShardingStrategyRegistry WithBuiltins(Clock& clock);

  // Adds `strategy` under its type(). Fails with ALREADY_EXISTS for a taken name and
  // INVALID_ARGUMENT for an empty one.
  Status Register(std::unique_ptr<JobShardingStrategy> strategy);

  // The strategy named `type`, or INVALID_ARGUMENT listing the known names.
  Result<const JobShardingStrategy*> Find(std::string_view type) const;

  // The registered type names, sorted.
  std::vector<std::string> types() const;

 private:
  std::map<std::string, std::unique_ptr<JobShardingStrategy>, std::less<>> strategies_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_SHARDING_JOB_SHARDING_STRATEGY_H_
