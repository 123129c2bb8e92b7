// Footprint of the runtime: N no-op SimpleJobs with an every-second cron in one process on
// the embedded registry. Reports time to Schedule() all jobs, item runs seen in the
// following seconds, threads and RSS. Usage: runtime_footprint [JOBS] [SECONDS]
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/reg/registry_center.h"

namespace {

class NoopJob final : public elasticjob::SimpleJob {
 public:
  void Execute(const elasticjob::ShardingContext&) override {}
};

std::string ProcStatus(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size() + 1);
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::stoi(argv[1]) : 1000;
  const int seconds = argc > 2 ? std::stoi(argv[2]) : 3;
  auto reg = elasticjob::NewRegistryCenter("memory://footprint");
  if (!reg.ok() || !(*reg)->Init().ok()) return 1;
  std::atomic<long> runs{0};
  elasticjob::BootstrapOptions options;
  options.server_ip = "10.0.0.1";
  options.on_item_run = [&](const elasticjob::ItemRunReport&) { ++runs; };
  std::vector<std::unique_ptr<elasticjob::ScheduleJobBootstrap>> all;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < jobs; ++i) {
    auto config = elasticjob::JobConfiguration::Builder("job" + std::to_string(i), 1)
                      .Cron("* * * * * ?")
                      .Build();
    all.push_back(std::make_unique<elasticjob::ScheduleJobBootstrap>(
        **reg, std::make_shared<NoopJob>(), *config, options));
    if (auto s = all.back()->Schedule(); !s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  auto scheduled = std::chrono::steady_clock::now() - start;
  std::this_thread::sleep_for(std::chrono::seconds(seconds));  // a benchmark's measuring window
  long seen = runs.load();
  std::cout << fmt::format("jobs={} schedule_all_ms={} item_runs_in_{}s={} threads={} rss={}\n",
                           jobs,
                           std::chrono::duration_cast<std::chrono::milliseconds>(scheduled).count(),
                           seconds, seen, ProcStatus("Threads:"), ProcStatus("VmRSS:"));
  for (auto& b : all) b->Shutdown();
  return seen > 0 ? 0 : 1;
}
