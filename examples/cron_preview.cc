// Embedding example: validate a job configuration, preview its fire times in its zone, see
// how its items would be split over three instances, and print the YAML ElasticJob stores.
#include <elasticjob/config/job_configuration.h>
#include <elasticjob/schedule/cron_expression.h>
#include <elasticjob/sharding/job_sharding_strategy.h>

#include <chrono>
#include <iostream>

int main() {
  auto config = elasticjob::JobConfiguration::Builder("orderSync", 3)
                    .Cron("0 0/15 9-17 ? * MON-FRI")
                    .TimeZone("Asia/Shanghai")
                    .ShardingItemParameters("0=Beijing,1=Shanghai,2=Guangzhou")
                    .Failover(true)
                    .Build();
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 1;
  }
  auto cron = elasticjob::CronExpression::Parse(*config->cron);
  auto zone = elasticjob::TimeZone::Parse(*config->time_zone);
  auto t = std::chrono::system_clock::now();
  for (int i = 0; i < 3; ++i) {
    auto next = cron->NextFireTimeAfter(t, *zone);
    if (!next) break;
    std::cout << "fires at " << zone->FormatIso8601(*next) << "\n";
    t = *next;
  }
  auto registry =
      elasticjob::JobShardingStrategyRegistry::WithBuiltins(elasticjob::Clock::System());
  auto strategy = registry.Find(config->job_sharding_strategy_type.value_or(""));
  auto ids =
      elasticjob::SortInstancesAsLeader({"10.0.0.1@-@100", "10.0.0.2@-@200", "10.0.0.3@-@300"});
  for (const auto& a : (*strategy)->Sharding(ids, config->job_name, config->sharding_total_count)) {
    std::cout << a.instance_id << " runs " << a.items.size() << " item(s)\n";
  }
  std::cout << elasticjob::ConfigToYaml(*config);
  return 0;
}
