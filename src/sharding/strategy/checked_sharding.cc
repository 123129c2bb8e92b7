#include "sharding/strategy/checked_sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <set>

namespace elasticjob::sharding {

namespace {

std::string TypeOf(const JobShardingStrategy& strategy) {
  try {
    return strategy.type();
  } catch (...) {
    return "?";
  }
}

}  // namespace

Result<std::vector<ShardingAssignment>> CheckedSharding(const JobShardingStrategy& strategy,
                                                        const std::vector<std::string>& instances,
                                                        std::string_view job_name, int total) {
  auto fail = [&](const std::string& what) {
    return Internal(fmt::format("sharding strategy '{}' for {} items among {} instances: {}",
                                TypeOf(strategy), total, instances.size(), what));
  };
  std::vector<ShardingAssignment> plan;
  try {
    plan = strategy.Sharding(instances, job_name, total);
  } catch (const std::exception& e) {
    return fail(fmt::format("threw: {}", e.what()));
  } catch (...) {
    return fail("threw an unknown exception");
  }
  const std::set<std::string> known(instances.begin(), instances.end());
  std::set<std::string> owners;
  std::vector<bool> given(static_cast<size_t>(total), false);
  for (const auto& a : plan) {
    if (known.count(a.instance_id) == 0) {
      return fail(fmt::format("instance '{}' was not among the available ones", a.instance_id));
    }
    if (!owners.insert(a.instance_id).second) {
      return fail(fmt::format("instance '{}' appears twice", a.instance_id));
    }
    for (int item : a.items) {
      if (item < 0 || item >= total) return fail(fmt::format("item {} is out of range", item));
      if (given[static_cast<size_t>(item)]) return fail(fmt::format("item {} given twice", item));
      given[static_cast<size_t>(item)] = true;
    }
  }
  if (auto it = std::find(given.begin(), given.end(), false); it != given.end()) {
    return fail(fmt::format("item {} given to nobody", it - given.begin()));
  }
  return plan;
}

}  // namespace elasticjob::sharding
