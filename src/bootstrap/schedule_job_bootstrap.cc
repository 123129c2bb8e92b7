// The public bootstraps: thin handles over a JobRuntime (bootstrap/job_runtime.h).
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "bootstrap/job_runtime.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "executor/typed_job.h"
#include "infra/log.h"
#include "metrics/metrics_impl.h"
#include "task/task_runtime.h"

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

namespace bootstrap {

// The lifecycle both bootstraps share (see schedule_job_bootstrap.h): one Start, then Stop
// and Join; nothing is ever rebuilt. Thread-safe: transitions under mu_, Join outside it.
class Lifecycle {
 public:
  enum class State { kNew, kScheduled, kFailed, kStopped };

  explicit Lifecycle(std::shared_ptr<JobRuntime> runtime, std::chrono::milliseconds timeout,
                     std::shared_ptr<task::TaskRuntime> task = nullptr)
      : runtime_(std::move(runtime)), timeout_(timeout), task_(std::move(task)) {}

  // Starts the runtime once. `again_ok`: a later call returns the first one's result (a
  // one-off job's Start); else it is FAILED_PRECONDITION.
  Status Start(bool scheduled, bool again_ok) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string& name = runtime_->config().job_name;
    switch (state_) {
      case State::kNew:
        break;
      case State::kScheduled:
        if (again_ok) return Status::Ok();
        return FailedPrecondition(fmt::format(
            "job '{}': Schedule() called twice: a bootstrap schedules its job once", name));
      case State::kFailed:
        if (again_ok) return first_;
        return FailedPrecondition(
            fmt::format("job '{}': Schedule() failed before ({}); make a new bootstrap to try "
                        "again",
                        name, first_.ToString()));
      case State::kStopped:
        return FailedPrecondition(fmt::format(
            "job '{}': {} after Stop()/Shutdown(): a bootstrap that was shut down is never "
            "started again; make a new one",
            name, scheduled ? "Schedule()" : "Start()"));
    }
    // A task job's endpoint and worker node first: the job's first trigger may use them.
    first_ = task_ != nullptr ? task_->Start() : Status::Ok();
    if (first_.ok()) first_ = runtime_->Start(scheduled);
    if (first_.ok()) {
      state_ = State::kScheduled;
      return first_;
    }
    // Nothing left behind: what was registered goes, what was started stops.
    state_ = State::kFailed;
    (void)runtime_->Join(std::chrono::steady_clock::now() + timeout_);
    if (task_ != nullptr) task_->Join();
    return first_;
  }

  // Whether started and not stopped.
  bool running() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_ == State::kScheduled;
  }

  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::kFailed) state_ = State::kStopped;
    runtime_->Stop();
    if (task_ != nullptr) task_->Stop();  // a run in progress is cancelled
  }

  Status Join(std::chrono::steady_clock::time_point deadline) {
    Stop();
    Status s = runtime_->Join(deadline);
    if (task_ != nullptr) task_->Join(deadline);
    return s;
  }

  // Join, logging a TIMEOUT once (Shutdown, the destructor's included).
  void Shutdown(std::chrono::steady_clock::time_point deadline) {
    Status s = Join(deadline);
    if (!s.ok() && !logged_.exchange(true)) infra::LogLine("WARN", s.ToString());
  }

  std::chrono::milliseconds timeout() const { return timeout_; }
  JobRuntime& runtime() { return *runtime_; }

 private:
  const std::shared_ptr<JobRuntime> runtime_;
  const std::chrono::milliseconds timeout_;
  const std::shared_ptr<task::TaskRuntime> task_;  // a task job's, else null
  std::mutex mu_;
  State state_ = State::kNew;        // GUARDED_BY(mu_)
  Status first_;                     // GUARDED_BY(mu_): the Start's result
  std::atomic<bool> logged_{false};  // a TIMEOUT was logged (set once, read by any Shutdown)
};

}  // namespace bootstrap

namespace {

std::shared_ptr<bootstrap::Lifecycle> NewLifecycle(
    RegistryCenter& registry, std::shared_ptr<SimpleJob> job, std::string job_type,
    JobConfiguration config, BootstrapOptions options,
    std::shared_ptr<JobItemExecutor> executor = nullptr) {
  const auto timeout = options.shutdown_timeout;
  return std::make_shared<bootstrap::Lifecycle>(
      std::make_shared<bootstrap::JobRuntime>(registry, std::move(job), std::move(job_type),
                                              std::move(config), std::move(options),
                                              std::move(executor)),
      timeout);
}

// A task job: its TaskRuntime is the SimpleJob the runtime runs, and shards with TASK_LEADER
// unless the configuration names a strategy.
std::shared_ptr<bootstrap::Lifecycle> NewTaskLifecycle(RegistryCenter& registry,
                                                       std::shared_ptr<TaskJob> job,
                                                       JobConfiguration config,
                                                       BootstrapOptions options) {
  auto task = std::make_shared<task::TaskRuntime>(
      registry, std::move(job), config, options.server_ip, options.task_rpc_address,
      options.task_store, metrics::JobMetricsOf(options.metrics, config.job_name));
  if (!config.job_sharding_strategy_type && options.sharding_strategy == nullptr) {
    options.sharding_strategy = task->strategy();
  }
  if (options.job_type_name.empty()) options.job_type_name = "CPP_TASK";
  const auto timeout = options.shutdown_timeout;
  return std::make_shared<bootstrap::Lifecycle>(
      std::make_shared<bootstrap::JobRuntime>(registry, task, "", std::move(config),
                                              std::move(options)),
      timeout, task);
}

// A SimpleJob (a script, a C++ job) broadcast by the prop `task.broadcast: true`: each
// trigger runs it once on every live instance, as item 0 of a one-item job.
class SimpleBroadcast final : public BroadcastJob {
 public:
  explicit SimpleBroadcast(std::shared_ptr<SimpleJob> job) : job_(std::move(job)) {}
  TaskResult Process(TaskContext& ctx) override {
    job_->Execute(ShardingContext{ctx.job_name(), ctx.run_id(), 1, ctx.job_parameter(), 0,
                                  std::nullopt});  // throws when it fails
    return {true, ""};
  }

 private:
  const std::shared_ptr<SimpleJob> job_;
};

// A job by type name (SCRIPT, HTTP, a registered type) as the SimpleJob a broadcast runs
// once per instance. Each run takes the executor made from the registry's configuration
// now (the registry's wins, as for a job that is not broadcast): rebuilt when its text
// changed; one the factory refuses is logged once and the last good executor runs.
class TypeByNameAsSimpleJob final : public SimpleJob {
 public:
  // REQUIRES: `registry` outlives this job; `executor` is `factory`'s for `config`.
  TypeByNameAsSimpleJob(RegistryCenter& registry, JobItemExecutorFactory factory,
                        std::shared_ptr<JobItemExecutor> executor, JobConfiguration config)
      : registry_(registry),
        factory_(std::move(factory)),
        current_{std::make_shared<const JobConfiguration>(std::move(config)), std::move(executor)} {
  }
  void Execute(const ShardingContext& context) override {
    Current now = Follow(context.job_name);
    Eligible state;
    now.executor->Process(*now.config, context, state);  // throws when it fails
  }

 private:
  struct Current {
    std::shared_ptr<const JobConfiguration> config;
    std::shared_ptr<JobItemExecutor> executor;
  };
  struct Eligible final : JobRunState {
    bool IsEligibleForJobRunning() override { return true; }
  };
  // The executor of the registry's configuration now, or the last good one.
  Current Follow(const std::string& job_name) {
    auto text = registry_.Get("/" + job_name + "/config");
    std::lock_guard<std::mutex> lock(mu_);
    if (!text.ok() || *text == text_ || *text == refused_) return current_;
    auto config = ConfigFromYaml(*text);
    Status s = config.ok() ? ValidateJobConfiguration(*config) : config.status();
    Result<std::shared_ptr<JobItemExecutor>> made = s.ok() ? Internal("not made") : s;
    if (s.ok()) {
      try {
        made = factory_(*config);
      } catch (const std::exception& e) {
        made = InvalidArgument(fmt::format("the job type's factory threw: {}", e.what()));
      } catch (...) {
        made = InvalidArgument("the job type's factory threw");
      }
    }
    if (!made.ok() || *made == nullptr) {
      refused_ = *text;
      infra::LogLine(
          "WARN", fmt::format("job '{}': {} (keeping the last good job type settings)", job_name,
                              made.ok() ? "the factory returned null" : made.status().ToString()));
      return current_;
    }
    text_ = *text;
    current_ = {std::make_shared<const JobConfiguration>(*std::move(config)), *std::move(made)};
    return current_;
  }

  RegistryCenter& registry_;
  const JobItemExecutorFactory factory_;
  std::mutex mu_;
  std::string text_;     // GUARDED_BY(mu_): the text current_ was made from ("" at first)
  std::string refused_;  // GUARDED_BY(mu_): the last text refused
  Current current_;      // GUARDED_BY(mu_)
};

bool BroadcastByProp(const JobConfiguration& config) {
  auto it = config.props.find("task.broadcast");
  return it != config.props.end() && it->second == "true";
}

std::shared_ptr<bootstrap::Lifecycle> NewSimpleLifecycle(RegistryCenter& registry,
                                                         std::shared_ptr<SimpleJob> job,
                                                         std::string job_type,
                                                         JobConfiguration config,
                                                         BootstrapOptions options) {
  if (BroadcastByProp(config)) {
    if (job == nullptr && !job_type.empty()) {
      // SCRIPT, HTTP or a type given by name: its executor, made here from the configuration
      // given (a bad prop fails Start as without the broadcast), then from the registry's.
      auto factory = executor::FindJobType(job_type, options.job_types);
      if (factory.ok()) {
        auto made = (*factory)(config);
        if (made.ok() && *made != nullptr) {
          job = std::make_shared<TypeByNameAsSimpleJob>(registry, *std::move(factory),
                                                        std::move(made).value(), config);
        }
      }
    }
    if (job != nullptr) {
      if (options.job_type_name.empty()) options.job_type_name = job_type;
      return NewTaskLifecycle(registry, std::make_shared<SimpleBroadcast>(std::move(job)),
                              std::move(config), std::move(options));
    }
  }
  return NewLifecycle(registry, std::move(job), std::move(job_type), std::move(config),
                      std::move(options));
}

}  // namespace

struct ScheduleJobBootstrap::Impl {
  std::shared_ptr<bootstrap::Lifecycle> life;
};

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{NewSimpleLifecycle(
          registry, std::move(job), "", std::move(config), std::move(options))})) {}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::string job_type,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{NewSimpleLifecycle(
          registry, nullptr, std::move(job_type), std::move(config), std::move(options))})) {}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<TaskJob> job,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{
          NewTaskLifecycle(registry, std::move(job), std::move(config), std::move(options))})) {}

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
  std::vector<Status> statuses(jobs.size());
  ForEachOverlapping(jobs.size(), parallelism,
                     [&](size_t i) { statuses[i] = jobs[i]->Schedule(); });
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

struct OneOffJobBootstrap::Impl {
  std::shared_ptr<bootstrap::Lifecycle> life;
};

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{NewSimpleLifecycle(
          registry, std::move(job), "", std::move(config), std::move(options))})) {}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::string job_type,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{NewSimpleLifecycle(
          registry, nullptr, std::move(job_type), std::move(config), std::move(options))})) {}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<TaskJob> job,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{
          NewTaskLifecycle(registry, std::move(job), std::move(config), std::move(options))})) {}

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
