// CheckedSharding: a strategy's plan, fenced and checked before the leader commits it. A
// strategy is user code (BootstrapOptions::sharding_strategy): an exception from it, an item
// outside [0, total), an item given twice or to nobody, or an instance it was not given, is an
// error naming the strategy, never a crash or a corrupt assignment.
//
// Thread safety: as the strategy.
#ifndef ELASTICJOB_SHARDING_STRATEGY_CHECKED_SHARDING_H_
#define ELASTICJOB_SHARDING_STRATEGY_CHECKED_SHARDING_H_

#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/sharding/job_sharding_strategy.h"
#include "elasticjob/status.h"

namespace elasticjob::sharding {

// strategy.Sharding(instances, job_name, total), or INTERNAL naming the strategy and what is
// wrong with its plan. REQUIRES: total > 0; `instances` not empty.
Result<std::vector<ShardingAssignment>> CheckedSharding(const JobShardingStrategy& strategy,
                                                        const std::vector<std::string>& instances,
                                                        std::string_view job_name, int total);

}  // namespace elasticjob::sharding

#endif  // ELASTICJOB_SHARDING_STRATEGY_CHECKED_SHARDING_H_
