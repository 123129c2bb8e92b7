// The console component (elasticjob::console): the web console served from this process on
// its own registry (memory://), on a free port; prints its URL and stops (exit 0).
#include <elasticjob/console/console_server.h>
#include <elasticjob/reg/registry_center.h>

#include <iostream>

int main() {
  auto registry = elasticjob::NewRegistryCenter("memory://console");
  if (!registry.ok() || !(*registry)->Init().ok()) return 1;
  elasticjob::ConsoleOptions options;
  options.registry_urls = {"memory://console"};
  options.listen = "127.0.0.1:0";
  auto console = elasticjob::StartConsole(options);
  if (!console.ok()) {
    std::cerr << console.status() << "\n";
    return 1;
  }
  std::cout << "console at " << (*console)->url() << std::endl;
  console->reset();  // stops the server
  return 0;
}
