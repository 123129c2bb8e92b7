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
    // Ten new orders per item per run, fetched in batches of four; the empty fetch after them
    // ends the item (and ten more arrive for the next run).
    auto queued = queued_.try_emplace(ctx.sharding_item, 10).first;
    std::vector<Order> batch;
    for (int i = 0; i < 4 && queued->second > 0; ++i, --queued->second) {
      batch.push_back({ctx.sharding_item * 1000 + next_id_++});
    }
    if (batch.empty()) queued->second = 10;
    return batch;
  }
  void ProcessData(const elasticjob::ShardingContext& ctx, std::vector<Order> orders) override {
    std::cout << "item " << ctx.sharding_item << ": processed " << orders.size() << " orders from "
              << orders.front().id << std::endl;
  }

 private:
  std::mutex mu_;
  std::map<int, int> queued_;  // item -> orders waiting
  int next_id_ = 0;
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
