#include <fmt/format.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/sharding/job_sharding_strategy.h"

namespace elasticjob::cli {
namespace {

struct PlanOptions {
  std::string job;
  int items = 0;
  std::string strategy = "AVG_ALLOCATION";
  std::vector<std::string> instances;
};

int RunPlan(const PlanOptions& o) {
  if (o.job.empty()) {
    std::cerr << "elasticjob: --job: must not be empty\n";
    return kExitBadInput;
  }
  if (o.items <= 0) {
    std::cerr << "elasticjob: --items: must be greater than 0, got " << o.items << "\n";
    return kExitBadInput;
  }
  if (o.items > kMaxShardingTotalCount) {
    std::cerr << "elasticjob: --items: must be at most " << kMaxShardingTotalCount << ", got "
              << o.items << "\n";
    return kExitBadInput;
  }
  std::set<std::string> seen;
  for (const auto& id : o.instances) {
    if (id.empty() || !seen.insert(id).second) {
      std::cerr << "elasticjob: instance id '" << id << "' is empty or given twice\n";
      return kExitBadInput;
    }
  }
  auto registry = JobShardingStrategyRegistry::WithBuiltins(Clock::System());
  auto strategy = registry.Find(o.strategy);
  if (!strategy.ok()) {
    std::cerr << "elasticjob: --strategy: " << strategy.status().message() << "\n";
    return kExitBadInput;
  }
  std::vector<std::string> sorted = SortInstancesAsLeader(o.instances);
  std::vector<ShardingAssignment> plan = (*strategy)->Sharding(sorted, o.job, o.items);
  std::string out;
  for (const std::string& id : sorted) {  // the leader's order, whatever the strategy's
    for (const auto& a : plan) {
      if (a.instance_id == id) out += fmt::format("{}\t{}\n", id, fmt::join(a.items, ","));
    }
  }
  std::cout << out << std::flush;
  return kExitOk;
}

}  // namespace

void AddShardingCommand(CLI::App& app, int* exit_code) {
  CLI::App* sharding = app.add_subcommand("sharding", "Inspect sharding");
  sharding->require_subcommand(1);
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* plan = sharding->add_subcommand(
      "plan", "Show which instance gets which items, as the leader would assign them");
  plan->add_option("--job", opts->job, "Job name (ODEVITY and ROUND_ROBIN hash it)")->required();
  plan->add_option("--items", opts->items, "shardingTotalCount")->required();
  plan->add_option("--strategy", opts->strategy,
                   "AVG_ALLOCATION, ODEVITY, ROUND_ROBIN or SINGLE_SHARDING_BALANCE")
      ->default_val("AVG_ALLOCATION");
  plan->add_option("instances", opts->instances, "Instance ids (ip@-@pid)")->required();
  plan->callback([opts, exit_code] { *exit_code = RunPlan(*opts); });
}

}  // namespace elasticjob::cli
