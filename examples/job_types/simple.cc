// A SimpleJob: each of its three items prints its region every two seconds, for ten seconds.
// Run (after `cmake --build --preset debug --target example_type_simple`):
//   build/debug/examples/example_type_simple [REGISTRY_URL]
// REGISTRY_URL defaults to memory://examples; give zookeeper://127.0.0.1:2181/demo and start
// it several times to see the items shared.
#include <elasticjob/bootstrap/schedule_job_bootstrap.h>

#include <iostream>
#include <thread>

class RegionJob : public elasticjob::SimpleJob {
 public:
  void Execute(const elasticjob::ShardingContext& ctx) override {
    std::cout << "item " << ctx.sharding_item << ": syncing "
              << ctx.sharding_parameter.value_or("?") << std::endl;
  }
};

int main(int argc, char** argv) {
  auto reg = elasticjob::NewRegistryCenter(argc > 1 ? argv[1] : "memory://examples");
  if (!reg.ok() || !(*reg)->Init().ok()) {
    std::cerr << "registry: " << reg.status() << "\n";
    return 1;
  }
  auto config = elasticjob::JobConfiguration::Builder("regionSync", 3)
                    .Cron("0/2 * * * * ?")
                    .ShardingItemParameters("0=Beijing,1=Shanghai,2=Guangzhou")
                    .Build();
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 1;
  }
  elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<RegionJob>(), *config);
  if (auto s = job.Schedule(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::seconds(10));
  job.Shutdown();
  return 0;
}
