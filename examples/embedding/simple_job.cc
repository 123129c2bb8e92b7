// Embedding example: a C++ SimpleJob scheduled across a cluster on ZooKeeper, the way
// ElasticJob's Java docs show it:
//
//   new ScheduleJobBootstrap(regCenter, new MyJob(), jobConfig).schedule();
//
// Start a ZooKeeper (scripts/zk-server.sh start /tmp/zk prints its port), then run two
// copies and watch the three items split between them:
//
//   ./example_simple_job zookeeper://127.0.0.1:PORT/demo
//
// Arguments: [REGISTRY_URL] [SECONDS] [METRICS_ADDRESS]: the registry (default
// zookeeper://127.0.0.1:2181/elasticjob-demo; memory://NAME for one process alone), how
// long to run (default: until Ctrl-C; 0 too) and, when given, where to serve Prometheus
// metrics, /healthz and /readyz (host:port; docs/metrics.md). Built by the project (target
// example_simple_job) and, as a separate project against an installed copy, by
// examples/embedding/CMakeLists.txt.
#include <elasticjob/bootstrap/schedule_job_bootstrap.h>
#include <elasticjob/metrics/metrics.h>
#include <elasticjob/reg/registry_center.h>
#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

namespace {

class OrderSyncJob : public elasticjob::SimpleJob {
 public:
  // Called for each item this instance owns, items in parallel: keep it thread-safe.
  void Execute(const elasticjob::ShardingContext& context) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::cout << "orderSync item " << context.sharding_item << " ("
              << context.sharding_parameter.value_or("") << ") of " << context.sharding_total_count
              << std::endl;
  }

 private:
  std::mutex mu_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string url = argc > 1 ? argv[1] : "zookeeper://127.0.0.1:2181/elasticjob-demo";
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::string metrics_address = argc > 3 ? argv[3] : "";
  // Ctrl-C is taken by sigwait below: blocked before the library starts its threads, which
  // inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto registry = elasticjob::NewRegistryCenter(url);
  if (!registry.ok()) {
    std::cerr << registry.status() << "\n";
    return 2;
  }
  if (auto s = (*registry)->Init(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  auto config = elasticjob::JobConfiguration::Builder("orderSync", 3)
                    .Cron("0/2 * * * * ?")
                    .ShardingItemParameters("0=Beijing,1=Shanghai,2=Guangzhou")
                    .Failover(true)
                    .Build();
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 2;
  }
  elasticjob::BootstrapOptions options;
  // Metrics: the job records into them, the registry's session counts for /readyz.
  auto metrics = elasticjob::Metrics::Create();
  metrics->AddRegistry(**registry);
  options.metrics = metrics;
  std::unique_ptr<elasticjob::MetricsServer> metrics_server;
  if (!metrics_address.empty()) {
    auto served = elasticjob::ServeMetrics(metrics, {.listen = metrics_address});
    if (!served.ok()) {
      std::cerr << served.status() << "\n";
      return 2;
    }
    metrics_server = std::move(served).value();
    std::cout << "metrics at " << metrics_server->url() << "/metrics" << std::endl;
  }
  elasticjob::ScheduleJobBootstrap job(**registry, std::make_shared<OrderSyncJob>(), *config,
                                       options);
  if (auto s = job.Schedule(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::cout << "orderSync scheduled on " << url << std::endl;

  // Until Ctrl-C (or SECONDS), then leave the cluster: the others take over the items.
  if (seconds > 0) {
    timespec wait{seconds, 0};
    sigtimedwait(&signals, nullptr, &wait);
  } else {
    int sig = 0;
    sigwait(&signals, &sig);
  }
  job.Shutdown();
  (*registry)->Close();
  return 0;
}
