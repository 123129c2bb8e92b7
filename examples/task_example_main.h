// The frame the task-model examples share: parse the common flags, connect to the registry,
// schedule the job (cron) or start it one-off (and Execute it once `--execute-when-workers`
// task workers are registered), then serve until SIGINT/SIGTERM.
#ifndef ELASTICJOB_EXAMPLES_TASK_EXAMPLE_MAIN_H_
#define ELASTICJOB_EXAMPLES_TASK_EXAMPLE_MAIN_H_

#include <signal.h>

#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/executor.h"
#include "elasticjob/reg/registry_center.h"

namespace example {

struct Flags {
  std::string registry;
  std::string job;
  std::string cron;
  int execute_when_workers = 0;
  std::map<std::string, std::string> props;
  std::string task_store;  // BootstrapOptions::task_store
};

// Runs `job` as Flags say; returns the process's exit code.
inline int RunTaskJob(const Flags& f, std::shared_ptr<elasticjob::TaskJob> job) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts: sigwait below

  auto reg = elasticjob::NewRegistryCenter(f.registry);
  if (!reg.ok()) {
    std::cerr << "--registry: " << reg.status() << "\n";
    return 2;
  }
  if (auto s = (*reg)->Init(); !s.ok()) {
    std::cerr << "registry: " << s << "\n";
    return 1;
  }
  auto builder = elasticjob::JobConfiguration::Builder(f.job, 1).Overwrite(true);
  if (!f.cron.empty()) builder.Cron(f.cron);
  for (const auto& [k, v] : f.props) builder.SetProperty(k, v);
  auto config = builder.Build();
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 2;
  }
  elasticjob::BootstrapOptions options;
  options.task_store = f.task_store;
  options.on_item_run = [](const elasticjob::ItemRunReport& r) {
    if (!r.success) std::cout << "RUN FAILED " << r.error << std::endl;
  };
  std::unique_ptr<elasticjob::ScheduleJobBootstrap> scheduled;
  std::unique_ptr<elasticjob::OneOffJobBootstrap> one_off;
  if (!f.cron.empty()) {
    scheduled = std::make_unique<elasticjob::ScheduleJobBootstrap>(**reg, job, *config, options);
    if (auto s = scheduled->Schedule(); !s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  } else {
    one_off = std::make_unique<elasticjob::OneOffJobBootstrap>(**reg, job, *config, options);
    if (auto s = one_off->Start(); !s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  std::cout << "scheduled " << f.job << std::endl;
  if (one_off != nullptr && f.execute_when_workers > 0) {
    // Wait (on the registry's events) until enough workers are registered, then run once.
    elasticjob::ThreadPool pool(1);
    elasticjob::SerialExecutor events(pool);
    std::mutex mu;
    std::condition_variable cv;
    int workers = 0;
    const std::string path = "/" + f.job + "/task/workers";
    auto count = [&] {
      auto children = (*reg)->GetChildrenKeysDirectly(path);
      std::lock_guard<std::mutex> lock(mu);
      workers = children.ok() ? static_cast<int>(children->size()) : 0;
      cv.notify_all();
    };
    auto watch = (*reg)->Watch(path, events, [&](const elasticjob::TreeEvent&) { count(); });
    count();
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return workers >= f.execute_when_workers; });
    }
    if (auto s = one_off->Execute(); !s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  int sig = 0;
  sigwait(&set, &sig);
  if (scheduled) scheduled->Shutdown();
  if (one_off) one_off->Shutdown();
  return 0;
}

}  // namespace example

#endif  // ELASTICJOB_EXAMPLES_TASK_EXAMPLE_MAIN_H_
