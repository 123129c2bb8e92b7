// Embedding the web console (docs/console.md): an application that schedules a C++ job
// serves the console from its own process with StartConsole.
//
//   ./example_console_embedded [REGISTRY_URL] [LISTEN]
//
// REGISTRY_URL defaults to memory://console-demo (this process alone), LISTEN to
// 127.0.0.1:8899. Open the printed URL; Ctrl-C stops the job and the console.
#include <elasticjob/bootstrap/schedule_job_bootstrap.h>
#include <elasticjob/console/console_server.h>
#include <elasticjob/reg/registry_center.h>
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <string>

namespace {

class ReportJob : public elasticjob::SimpleJob {
 public:
  void Execute(const elasticjob::ShardingContext& context) override {
    context.log().Log(elasticjob::LogLevel::kInfo,
                      "report item " + std::to_string(context.sharding_item));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string url = argc > 1 ? argv[1] : "memory://console-demo";
  const std::string listen = argc > 2 ? argv[2] : "127.0.0.1:8899";
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto registry = elasticjob::NewRegistryCenter(url);
  if (!registry.ok() || !(*registry)->Init().ok()) {
    std::cerr << "cannot connect to " << url << "\n";
    return 1;
  }
  auto config = elasticjob::JobConfiguration::Builder("report", 2)
                    .Cron("0/10 * * * * ?")
                    .Description("a job of this process, shown by its own console")
                    .Build();
  if (!config.ok()) return 2;
  elasticjob::ScheduleJobBootstrap job(**registry, std::make_shared<ReportJob>(), *config);
  if (auto s = job.Schedule(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }

  elasticjob::ConsoleOptions options;
  options.registry_urls = {url};  // the console opens its own session
  options.listen = listen;
  auto console = elasticjob::StartConsole(options);
  if (!console.ok()) {
    std::cerr << console.status() << "\n";
    return 1;
  }
  std::cout << "console at " << (*console)->url() << " (read-only: no users file)" << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  console->reset();  // stops the server
  job.Shutdown();
  (*registry)->Close();
  return 0;
}
