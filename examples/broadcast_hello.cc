// broadcast_hello: a BroadcastJob. PreProcess prints `PRE <instance>` on the job's leader,
// Process prints `PROCESS <instance>` on every live instance, PostProcess prints
// `POST results=<n> ok=<k> instances=<id,...>` on the leader.
//
//   broadcast_hello --registry zookeeper://127.0.0.1:2181/demo [--cron EXPR]
//                   [--execute-when-workers K] [--fail-on-pid PID]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>
#include <string>

#include "elasticjob/api/task_job.h"
#include "task_example_main.h"

namespace {

class HelloJob final : public elasticjob::BroadcastJob {
 public:
  long fail_on_pid = 0;

  void PreProcess(elasticjob::TaskContext& ctx) override {
    std::cout << "PRE " << ctx.instance_id() << std::endl;
  }
  elasticjob::TaskResult Process(elasticjob::TaskContext& ctx) override {
    std::cout << "PROCESS " << ctx.instance_id() << " run=" << ctx.run_id() << std::endl;
    if (getpid() == fail_on_pid) throw std::runtime_error("asked to fail");
    return {true, ctx.instance_id()};
  }
  void PostProcess(elasticjob::TaskContext&,
                   const std::vector<elasticjob::InstanceResult>& results) override {
    int ok = 0;
    std::string ids;
    for (const auto& r : results) {
      ok += r.success ? 1 : 0;
      ids += (ids.empty() ? "" : ",") + r.instance_id;
    }
    std::cout << "POST results=" << results.size() << " ok=" << ok << " instances=" << ids
              << std::endl;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"broadcast_hello: a broadcast task job"};
  example::Flags f;
  f.job = "broadcast_hello";
  auto job = std::make_shared<HelloJob>();
  app.add_option("--registry", f.registry, "registry URL")->required();
  app.add_option("--cron", f.cron, "cron expression (default: one-off)");
  app.add_option("--job", f.job, "job name");
  app.add_option("--execute-when-workers", f.execute_when_workers,
                 "one-off: run once this many task workers are registered");
  app.add_option("--fail-on-pid", job->fail_on_pid, "Process throws in this process");
  CLI11_PARSE(app, argc, argv);
  return example::RunTaskJob(f, job);
}
