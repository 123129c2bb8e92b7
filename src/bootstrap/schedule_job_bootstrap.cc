// The public bootstraps: thin handles over a JobRuntime (bootstrap/job_runtime.h).
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "bootstrap/job_runtime.h"
#include "bootstrap/lifecycle.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "infra/free_memory.h"
#include "infra/log.h"

namespace elasticjob {

namespace {

// Calls fn(i) for every i in [0, n), up to `parallelism` at a time: the caller's thread and
// helpers that end with the call. Not a pool: the calls block on registry round trips, not
// on the CPU, and start-up is the only user.
template <typename Fn>
void ForEachOverlapping(size_t n, int parallelism, Fn fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    infra::ScopedNoThreadCache compact;  // what the jobs keep, packed (free_memory.h)
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t width = std::min(n, static_cast<size_t>(std::max(1, parallelism)));
  std::vector<std::jthread> helpers;
  for (size_t t = 1; t < width; ++t) helpers.emplace_back(work);
  work();
}

}  // namespace

namespace bootstrap {

std::shared_ptr<Lifecycle> NewLifecycle(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                        std::string job_type, JobConfiguration config,
                                        BootstrapOptions options,
                                        std::shared_ptr<JobItemExecutor> executor) {
  const auto timeout = options.shutdown_timeout;
  return std::make_shared<Lifecycle>(
      std::make_shared<JobRuntime>(registry, std::move(job), std::move(job_type), std::move(config),
                                   std::move(options), std::move(executor)),
      timeout);
}

}  // namespace bootstrap

namespace {

using bootstrap::NewLifecycle;

bool BroadcastByProp(const JobConfiguration& config) {
  auto it = config.props.find("task.broadcast");
  return it != config.props.end() && it->second == "true";
}

// A SimpleJob or a job by type name: broadcast by the prop `task.broadcast` on the task
// models of the options, else a plain job.
std::shared_ptr<bootstrap::Lifecycle> NewSimpleLifecycle(RegistryCenter& registry,
                                                         std::shared_ptr<SimpleJob> job,
                                                         std::string job_type,
                                                         JobConfiguration config,
                                                         BootstrapOptions options) {
  if (!BroadcastByProp(config)) {
    return NewLifecycle(registry, std::move(job), std::move(job_type), std::move(config),
                        std::move(options));
  }
  if (options.task_models != nullptr) {
    auto models = options.task_models;
    return models->NewBroadcast(registry, std::move(job), std::move(job_type), std::move(config),
                                std::move(options));
  }
  Status refused = InvalidArgument(fmt::format(
      "job '{}': props: task.broadcast 'true' needs the task models: link elasticjob::tasks "
      "and set BootstrapOptions::task_models = GrpcTaskModels() "
      "(elasticjob/bootstrap/task_models.h)",
      config.job_name));
  const auto timeout = options.shutdown_timeout;
  return std::make_shared<bootstrap::Lifecycle>(
      std::make_shared<bootstrap::JobRuntime>(registry, std::move(job), std::move(job_type),
                                              std::move(config), std::move(options)),
      timeout, nullptr, std::move(refused));
}

}  // namespace

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{NewSimpleLifecycle(
          registry, std::move(job), "", std::move(config), std::move(options))})) {}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::string job_type,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{NewSimpleLifecycle(
          registry, nullptr, std::move(job_type), std::move(config), std::move(options))})) {}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry,
                                           std::shared_ptr<JobItemExecutor> executor,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{NewLifecycle(registry, nullptr, "", std::move(config),
                                                     std::move(options), std::move(executor))})) {}

ScheduleJobBootstrap::~ScheduleJobBootstrap() { Shutdown(); }

Status ScheduleJobBootstrap::Schedule() & {
  return impl_->life->Start(/*scheduled=*/true, /*again_ok=*/false);
}

void ScheduleJobBootstrap::Stop() { impl_->life->Stop(); }

Status ScheduleJobBootstrap::Join(std::chrono::milliseconds timeout) {
  return impl_->life->Join(std::chrono::steady_clock::now() + timeout);
}

void ScheduleJobBootstrap::Shutdown() {
  impl_->life->Shutdown(std::chrono::steady_clock::now() + impl_->life->timeout());
}

std::vector<Status> ScheduleJobBootstrap::ScheduleAll(std::span<ScheduleJobBootstrap* const> jobs,
                                                      int parallelism) {
  // One listing of each registry's namespace tells which jobs are not registered at all:
  // their config set-up creates without asking first. Every job's writes go grouped.
  std::map<RegistryCenter*, std::optional<std::set<std::string>>> listed;
  std::vector<bootstrap::StartHints> hints(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    bootstrap::JobRuntime& runtime = jobs[i]->impl_->life->runtime();
    RegistryCenter* registry = &runtime.registry();
    auto it = listed.find(registry);
    if (it == listed.end()) {
      auto names = registry->GetChildrenKeysDirectly("/");
      std::optional<std::set<std::string>> jobs_there;  // nullopt: not known
      if (names.ok()) jobs_there.emplace(names->begin(), names->end());
      it = listed.emplace(registry, std::move(jobs_there)).first;
    }
    hints[i].grouped = true;
    hints[i].seen_absent =
        it->second.has_value() && it->second->count(runtime.config().job_name) == 0;
  }
  std::vector<Status> statuses(jobs.size());
  ForEachOverlapping(jobs.size(), parallelism, [&](size_t i) {
    statuses[i] = jobs[i]->impl_->life->Start(/*scheduled=*/true, /*again_ok=*/false, hints[i]);
  });
  // What the registrations freed (their threads' caches, the loads' buffers) goes back to
  // the kernel now, not after the allocator's decay time: the process's RSS from here on is
  // what the jobs hold (docs/benchmarks.md: 1,000 jobs on ZooKeeper, 91 MB -> 60 MB).
  infra::ReleaseFreeMemory();
  return statuses;
}

void ScheduleJobBootstrap::ShutdownAll(std::span<ScheduleJobBootstrap* const> jobs,
                                       int parallelism) {
  // Every job stops first, so that none runs on while the others are joined; each then has
  // its own timeout from now.
  const auto start = std::chrono::steady_clock::now();
  for (auto* job : jobs) job->Stop();
  ForEachOverlapping(jobs.size(), parallelism, [&](size_t i) {
    jobs[i]->impl_->life->Shutdown(start + jobs[i]->impl_->life->timeout());
  });
}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{NewSimpleLifecycle(
          registry, std::move(job), "", std::move(config), std::move(options))})) {}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::string job_type,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{NewSimpleLifecycle(
          registry, nullptr, std::move(job_type), std::move(config), std::move(options))})) {}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry,
                                       std::shared_ptr<JobItemExecutor> executor,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{NewLifecycle(registry, nullptr, "", std::move(config),
                                                     std::move(options), std::move(executor))})) {}

OneOffJobBootstrap::~OneOffJobBootstrap() { Shutdown(); }

Status OneOffJobBootstrap::Start() & {
  return impl_->life->Start(/*scheduled=*/false, /*again_ok=*/true);
}

Status OneOffJobBootstrap::Execute() & {
  if (Status s = Start(); !s.ok()) return s;
  if (!impl_->life->running()) {
    return FailedPrecondition(fmt::format("job '{}': Execute() after Stop()/Shutdown()",
                                          impl_->life->runtime().config().job_name));
  }
  bootstrap::JobRuntime& runtime = impl_->life->runtime();
  if (runtime.error_handler_type() == "THROW") return runtime.TriggerClusterAndWait();
  return runtime.TriggerCluster();
}

void OneOffJobBootstrap::Stop() { impl_->life->Stop(); }

Status OneOffJobBootstrap::Join(std::chrono::milliseconds timeout) {
  return impl_->life->Join(std::chrono::steady_clock::now() + timeout);
}

void OneOffJobBootstrap::Shutdown() {
  impl_->life->Shutdown(std::chrono::steady_clock::now() + impl_->life->timeout());
}

}  // namespace elasticjob
