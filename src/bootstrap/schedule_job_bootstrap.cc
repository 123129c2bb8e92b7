// The public bootstraps: thin handles over a JobRuntime (bootstrap/job_runtime.h).
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "bootstrap/job_runtime.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"

namespace elasticjob {

namespace {

// Calls fn(i) for every i in [0, n), up to `parallelism` at a time: the caller's thread and
// helpers that end with the call. Not a pool: the calls block on registry round trips, not
// on the CPU, and start-up is the only user.
template <typename Fn>
void ForEachOverlapping(size_t n, int parallelism, Fn fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t width = std::min(n, static_cast<size_t>(std::max(1, parallelism)));
  std::vector<std::jthread> helpers;
  for (size_t t = 1; t < width; ++t) helpers.emplace_back(work);
  work();
}

}  // namespace

struct ScheduleJobBootstrap::Impl {
  std::shared_ptr<bootstrap::JobRuntime> runtime;
};

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{std::make_shared<bootstrap::JobRuntime>(
          registry, std::move(job), "", std::move(config), std::move(options))})) {}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::string job_type,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{std::make_shared<bootstrap::JobRuntime>(
          registry, nullptr, std::move(job_type), std::move(config), std::move(options))})) {}

ScheduleJobBootstrap::~ScheduleJobBootstrap() { Shutdown(); }

Status ScheduleJobBootstrap::Schedule() { return impl_->runtime->Start(/*scheduled=*/true); }

void ScheduleJobBootstrap::Shutdown() { impl_->runtime->Shutdown(); }

std::vector<Status> ScheduleJobBootstrap::ScheduleAll(std::span<ScheduleJobBootstrap* const> jobs,
                                                      int parallelism) {
  std::vector<Status> statuses(jobs.size());
  ForEachOverlapping(jobs.size(), parallelism,
                     [&](size_t i) { statuses[i] = jobs[i]->Schedule(); });
  return statuses;
}

void ScheduleJobBootstrap::ShutdownAll(std::span<ScheduleJobBootstrap* const> jobs,
                                       int parallelism) {
  ForEachOverlapping(jobs.size(), parallelism, [&](size_t i) { jobs[i]->Shutdown(); });
}

struct OneOffJobBootstrap::Impl {
  std::shared_ptr<bootstrap::JobRuntime> runtime;
  std::once_flag started;
  Status start_status;
};

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->runtime = std::make_shared<bootstrap::JobRuntime>(registry, std::move(job), "",
                                                           std::move(config), std::move(options));
}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::string job_type,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->runtime = std::make_shared<bootstrap::JobRuntime>(registry, nullptr, std::move(job_type),
                                                           std::move(config), std::move(options));
}

OneOffJobBootstrap::~OneOffJobBootstrap() { Shutdown(); }

Status OneOffJobBootstrap::Start() {
  std::call_once(impl_->started,
                 [&] { impl_->start_status = impl_->runtime->Start(/*scheduled=*/false); });
  return impl_->start_status;
}

Status OneOffJobBootstrap::Execute() {
  if (Status s = Start(); !s.ok()) return s;
  return impl_->runtime->TriggerCluster();
}

void OneOffJobBootstrap::Shutdown() { impl_->runtime->Shutdown(); }

}  // namespace elasticjob
