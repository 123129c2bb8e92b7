// A streaming DataflowJob: each item drains its queue of orders in batches (fetch, process,
// fetch again until a fetch comes back empty), every three seconds, for ten seconds.
// Run (after `cmake --build --preset debug --target example_type_dataflow`):
//   build/debug/examples/example_type_dataflow [REGISTRY_URL]
#include <elasticjob/api/dataflow_job.h>
#include <elasticjob/bootstrap/schedule_job_bootstrap.h>

#include <iostream>
#include <map>
#include <mutex>
#include <thread>

struct Order {
  int id;
};

class OrderFeed : public elasticjob::DataflowJob<Order> {
 public:
  std::vector<Order> FetchData(const elasticjob::ShardingContext& ctx) override {
    std::lock_guard<std::mutex> lock(mu_);
    int& next = next_[ctx.sharding_item];
    std::vector<Order> batch;
    // Ten orders per item per run, in batches of four; then an empty fetch ends the item.
    for (int i = 0; i < 4 && next % 10 != 9; ++i)
      batch.push_back({ctx.sharding_item * 1000 + next++});
    if (batch.empty()) ++next;  // the next run has ten more
    return batch;
  }
  void ProcessData(const elasticjob::ShardingContext& ctx, std::vector<Order> orders) override {
    std::cout << "item " << ctx.sharding_item << ": processed " << orders.size() << " orders from "
              << orders.front().id << std::endl;
  }

 private:
  std::mutex mu_;
  std::map<int, int> next_;
};

int main(int argc, char** argv) {
  auto reg = elasticjob::NewRegistryCenter(argc > 1 ? argv[1] : "memory://examples");
  if (!reg.ok() || !(*reg)->Init().ok()) {
    std::cerr << "registry: " << reg.status() << "\n";
    return 1;
  }
  auto config = elasticjob::JobConfiguration::Builder("orderFeed", 2)
                    .Cron("0/3 * * * * ?")
                    .SetProperty("streaming.process", "true")
                    .Build();
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 1;
  }
  elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<OrderFeed>(), *config);
  if (auto s = job.Schedule(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::seconds(10));
  job.Shutdown();
  return 0;
}
