// A custom job type by name, as ElasticJob's typed-executor SPI: the process registers "ECHO"
// (its factory checks the props), and a job names it as it would name SCRIPT or HTTP. The
// second job's props are wrong: its Schedule() fails naming the prop.
// Run (after `cmake --build --preset debug --target example_type_custom_type`):
//   build/debug/examples/example_type_custom_type [REGISTRY_URL]
#include <elasticjob/api/job_item_executor.h>
#include <elasticjob/bootstrap/schedule_job_bootstrap.h>

#include <iostream>
#include <thread>

class EchoExecutor : public elasticjob::JobItemExecutor {
 public:
  explicit EchoExecutor(std::string prefix) : prefix_(std::move(prefix)) {}
  void Process(const elasticjob::JobConfiguration& config, const elasticjob::ShardingContext& ctx,
               elasticjob::JobRunState&) override {
    std::cout << prefix_ << " job " << config.job_name << " item " << ctx.sharding_item
              << std::endl;
  }

 private:
  const std::string prefix_;
};

elasticjob::Result<std::shared_ptr<elasticjob::JobItemExecutor>> MakeEcho(
    const elasticjob::JobConfiguration& config) {
  auto it = config.props.find("echo.prefix");
  if (it == config.props.end()) return elasticjob::InvalidArgument("props.echo.prefix: missing");
  return std::shared_ptr<elasticjob::JobItemExecutor>(std::make_shared<EchoExecutor>(it->second));
}

int main(int argc, char** argv) {
  // Once, at start-up, before the bootstraps that name it.
  if (auto s = elasticjob::RegisterJobType("ECHO", MakeEcho); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  auto reg = elasticjob::NewRegistryCenter(argc > 1 ? argv[1] : "memory://examples");
  if (!reg.ok() || !(*reg)->Init().ok()) {
    std::cerr << "registry: " << reg.status() << "\n";
    return 1;
  }
  auto good = elasticjob::JobConfiguration::Builder("echo", 2)
                  .Cron("0/2 * * * * ?")
                  .SetProperty("echo.prefix", "hello from")
                  .Build();
  auto bad =
      elasticjob::JobConfiguration::Builder("echoWithoutPrefix", 1).Cron("0/2 * * * * ?").Build();
  elasticjob::ScheduleJobBootstrap job(**reg, "ECHO", *good);
  elasticjob::ScheduleJobBootstrap wrong(**reg, "ECHO", *bad);
  if (auto s = job.Schedule(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::cout << "as expected: " << wrong.Schedule() << std::endl;
  std::this_thread::sleep_for(std::chrono::seconds(6));
  job.Shutdown();
  return 0;
}
