// The task models' component (elasticjob::tasks): a BroadcastJob run once by this process
// (its own registry, memory://): Process on every live instance (here, this one), then
// PostProcess with their results. Prints "broadcast ran on 1 instance(s)" (exit 0).
#include <elasticjob/api/task_job.h>
#include <elasticjob/bootstrap/one_off_job_bootstrap.h>
#include <elasticjob/reg/registry_center.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <vector>

namespace {

class HelloBroadcast : public elasticjob::BroadcastJob {
 public:
  elasticjob::TaskResult Process(elasticjob::TaskContext&) override { return {true, "hello"}; }
  void PostProcess(elasticjob::TaskContext&,
                   const std::vector<elasticjob::InstanceResult>& results) override {
    instances = static_cast<int>(results.size());
  }
  std::atomic<int> instances{0};
};

}  // namespace

int main() {
  auto registry = elasticjob::NewRegistryCenter("memory://broadcast");
  if (!registry.ok() || !(*registry)->Init().ok()) return 1;
  auto config = elasticjob::JobConfiguration::Builder("hello", 1)
                    .JobErrorHandlerType("THROW")  // Execute() waits for the run
                    .Build();
  if (!config.ok()) return 1;
  elasticjob::BootstrapOptions options;
  options.task_rpc_address = "127.0.0.1:0";
  options.server_ip = "127.0.0.1";
  auto job = std::make_shared<HelloBroadcast>();
  elasticjob::OneOffJobBootstrap bootstrap(**registry, job, *config, options);
  if (auto s = bootstrap.Execute(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  bootstrap.Shutdown();
  std::cout << "broadcast ran on " << job->instances.load() << " instance(s)" << std::endl;
  return job->instances.load() == 1 ? 0 : 1;
}
