#include <fmt/format.h>

#include "elasticjob/sharding/job_sharding_strategy.h"
#include "sharding/strategy/builtin_strategies.h"

namespace elasticjob {

JobShardingStrategyRegistry JobShardingStrategyRegistry::WithBuiltins(Clock& clock) {
  JobShardingStrategyRegistry r;
  Status s;
  s = r.Register(std::make_unique<sharding::AverageAllocationStrategy>());
  s = r.Register(std::make_unique<sharding::OdevitySortByNameStrategy>());
  s = r.Register(std::make_unique<sharding::RotateServerByNameStrategy>());
  s = r.Register(std::make_unique<sharding::SingleShardingBalanceStrategy>(clock));
  (void)s;  // names are distinct constants
  return r;
}

Status JobShardingStrategyRegistry::Register(std::unique_ptr<JobShardingStrategy> strategy) {
  if (strategy == nullptr) return InvalidArgument("sharding strategy: null");
  std::string type = strategy->type();
  if (type.empty()) return InvalidArgument("jobShardingStrategyType: empty type name");
  if (strategies_.count(type) != 0) {
    return Status(StatusCode::kAlreadyExists,
                  fmt::format("jobShardingStrategyType: '{}' is already registered", type));
  }
  strategies_.emplace(std::move(type), std::move(strategy));
  return Status::Ok();
}

Result<const JobShardingStrategy*> JobShardingStrategyRegistry::Find(std::string_view type) const {
  if (type.empty()) type = "AVG_ALLOCATION";
  auto it = strategies_.find(type);
  if (it == strategies_.end()) {
    return InvalidArgument(fmt::format("jobShardingStrategyType: unknown strategy '{}' (known: {})",
                                       type, fmt::join(types(), ", ")));
  }
  return static_cast<const JobShardingStrategy*>(it->second.get());
}

std::vector<std::string> JobShardingStrategyRegistry::types() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : strategies_) out.push_back(name);
  return out;
}

}  // namespace elasticjob
