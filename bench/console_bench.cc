// The web console's API under a large namespace (docs/benchmarks.md): writes `--jobs` jobs
// into the registry (config, a server, a live instance and its items, as a running instance
// leaves them), starts a console on it and times GET jobs and GET one job over keep-alive
// connections, printing p50/p99/max in milliseconds (and one JSON line with --json).
//
//   console_bench --registry zookeeper://127.0.0.1:2181/bench --jobs 1000 --requests 300
// bench/console_bench.sh starts a private ZooKeeper and runs it.
#include <fmt/format.h>
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "elasticjob/console/console_server.h"
#include "elasticjob/lifecycle/job_configuration_api.h"
#include "elasticjob/reg/registry_center.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

Figures Summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
  };
  return {at(0.50), at(0.99), ms.back()};
}

// Times `requests` GETs of `path`; fails the run on any answer but 200.
std::vector<double> Time(httplib::Client& client, const std::string& path, int requests,
                         size_t* bytes) {
  std::vector<double> ms;
  for (int i = 0; i < requests; ++i) {
    const auto start = Clock::now();
    auto r = client.Get(path);
    const auto end = Clock::now();
    if (!r || r->status != 200) {
      std::cerr << "console_bench: GET " << path << " failed\n";
      std::exit(1);
    }
    *bytes = r->body.size();
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"console_bench: the console API's latency with many jobs"};
  std::string url;
  int jobs = 1000;
  int requests = 300;
  bool json_out = false;
  app.add_option("--registry", url, "zookeeper://host:port/namespace (emptied first)")->required();
  app.add_option("--jobs", jobs, "jobs written into the namespace");
  app.add_option("--requests", requests, "requests per endpoint");
  app.add_flag("--json", json_out, "also print one JSON line");
  CLI11_PARSE(app, argc, argv);

  auto reg = elasticjob::NewRegistryCenter(url);
  if (!reg.ok() || !(*reg)->Init().ok()) {
    std::cerr << "console_bench: cannot connect to " << url << "\n";
    return 1;
  }
  auto& registry = **reg;
  auto api = elasticjob::NewJobConfigurationAPI(registry);
  const auto write_start = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    const std::string name = fmt::format("job{:05d}", i);
    if (registry.GetDirectly("/" + name + "/config").ok()) continue;  // from an earlier run
    auto config = elasticjob::JobConfiguration::Builder(name, 2)
                      .Cron("0 0/5 * * * ?")
                      .Description("bench job " + std::to_string(i))
                      .Build();
    elasticjob::Status s = config.ok() ? api->AddJob(*config, "SCRIPT") : config.status();
    // What a running instance on 10.3.x.y leaves: its server, its instance, its items.
    const std::string ip = fmt::format("10.3.{}.{}", i / 250, i % 250);
    const std::string id = ip + "@-@" + std::to_string(1000 + i);
    std::vector<elasticjob::TransactionOp> ops = {
        elasticjob::TransactionOp::Create("/" + name + "/servers", ""),
        elasticjob::TransactionOp::Create("/" + name + "/servers/" + ip, "ENABLED"),
        elasticjob::TransactionOp::Create("/" + name + "/instances", ""),
        elasticjob::TransactionOp::Create("/" + name + "/instances/" + id,
                                          "jobInstanceId: " + id + "\nserverIp: " + ip + "\n",
                                          elasticjob::CreateMode::kEphemeral),
        elasticjob::TransactionOp::Create("/" + name + "/sharding", ""),
        elasticjob::TransactionOp::Create("/" + name + "/sharding/0", ""),
        elasticjob::TransactionOp::Create("/" + name + "/sharding/0/instance", id),
        elasticjob::TransactionOp::Create("/" + name + "/sharding/1", ""),
        elasticjob::TransactionOp::Create("/" + name + "/sharding/1/instance", id),
    };
    if (s.ok()) s = registry.ExecuteInTransaction(ops);
    if (!s.ok()) {
      std::cerr << "console_bench: job " << name << ": " << s.message() << "\n";
      return 1;
    }
  }
  const double write_s = std::chrono::duration<double>(Clock::now() - write_start).count();

  elasticjob::ConsoleOptions options;
  options.registry_urls = {url};
  options.listen = "127.0.0.1:0";
  const auto start = Clock::now();
  auto console = elasticjob::StartConsole(options);
  if (!console.ok()) {
    std::cerr << "console_bench: " << console.status().message() << "\n";
    return 1;
  }
  const double start_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  httplib::Client client("127.0.0.1", (*console)->port());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  size_t list_bytes = 0;
  size_t job_bytes = 0;
  Time(client, "/api/v1/registries/0/jobs", 20, &list_bytes);  // warm-up
  auto list = Summarise(Time(client, "/api/v1/registries/0/jobs", requests, &list_bytes));
  auto one = Summarise(Time(client, fmt::format("/api/v1/registries/0/jobs/job{:05d}", jobs / 2),
                            requests, &job_bytes));
  auto listed = nlohmann::json::parse(client.Get("/api/v1/registries/0/jobs")->body);
  std::cout << fmt::format(
      "jobs {} (listed {}), written in {:.1f} s; console start (watch loaded) {:.0f} ms\n"
      "GET jobs     p50 {:.2f} ms  p99 {:.2f} ms  max {:.2f} ms  ({} bytes)\n"
      "GET jobs/{{j}} p50 {:.3f} ms  p99 {:.3f} ms  max {:.3f} ms  ({} bytes)\n",
      jobs, listed.size(), write_s, start_ms, list.p50, list.p99, list.max, list_bytes, one.p50,
      one.p99, one.max, job_bytes);
  if (json_out) {
    nlohmann::json j = {{"jobs", jobs},          {"listed", listed.size()}, {"startMs", start_ms},
                        {"listP50Ms", list.p50}, {"listP99Ms", list.p99},   {"listMaxMs", list.max},
                        {"jobP50Ms", one.p50},   {"jobP99Ms", one.p99},     {"jobMaxMs", one.max}};
    std::cout << j.dump() << "\n";
  }
  return listed.size() == static_cast<size_t>(jobs) ? 0 : 1;
}
