// The task models' part of the bootstraps (component elasticjob::tasks): the TaskJob
// constructors of ScheduleJobBootstrap and OneOffJobBootstrap, and the broadcast of a
// SimpleJob or a job by type name by the prop `task.broadcast` (GrpcTaskModels). The core
// library (bootstrap/schedule_job_bootstrap.cc) has no gRPC in it.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "bootstrap/lifecycle.h"
#include "elasticjob/bootstrap/task_models.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/mutex.h"
#include "executor/typed_job.h"
#include "infra/log.h"
#include "metrics/metrics_impl.h"
#include "task/task_runtime.h"

namespace elasticjob {
namespace {

// A task job's endpoint and worker node, started before its runtime, stopped after it.
class TaskCompanion final : public bootstrap::Companion {
 public:
  explicit TaskCompanion(std::shared_ptr<task::TaskRuntime> task) : task_(std::move(task)) {}
  Status Start() override { return task_->Start(); }
  void Stop() override { task_->Stop(); }
  void Join(std::chrono::steady_clock::time_point deadline) override { task_->Join(deadline); }

 private:
  const std::shared_ptr<task::TaskRuntime> task_;
};

// A task job: its TaskRuntime is the SimpleJob the runtime runs, and shards with TASK_LEADER
// unless the configuration names a strategy.
std::shared_ptr<bootstrap::Lifecycle> NewTaskLifecycle(RegistryCenter& registry,
                                                       std::shared_ptr<TaskJob> job,
                                                       JobConfiguration config,
                                                       BootstrapOptions options) {
  auto task = std::make_shared<task::TaskRuntime>(
      registry, std::move(job), config, options.server_ip, options.task_rpc_address,
      options.task_store, metrics::JobMetricsOf(options.metrics, config.job_name),
      infra::JobLogger(options.logger, config.job_name));
  if (!config.job_sharding_strategy_type && options.sharding_strategy == nullptr) {
    options.sharding_strategy = task->strategy();
  }
  if (options.job_type_name.empty()) options.job_type_name = "CPP_TASK";
  const auto timeout = options.shutdown_timeout;
  return std::make_shared<bootstrap::Lifecycle>(
      std::make_shared<bootstrap::JobRuntime>(registry, task, "", std::move(config),
                                              std::move(options)),
      timeout, std::make_shared<TaskCompanion>(task));
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
                        std::shared_ptr<JobItemExecutor> executor, JobConfiguration config,
                        std::shared_ptr<Logger> logger)
      : registry_(registry),
        factory_(std::move(factory)),
        logger_(std::move(logger)),
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
    MutexLock lock(&mu_);
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
          logger_.get(), "WARN", {.job = job_name, .item = std::nullopt, .instance = {}},
          fmt::format("job '{}': {} (keeping the last good job type settings)", job_name,
                      made.ok() ? "the factory returned null" : made.status().ToString()));
      return current_;
    }
    text_ = *text;
    current_ = {std::make_shared<const JobConfiguration>(*std::move(config)), *std::move(made)};
    return current_;
  }

  RegistryCenter& registry_;
  const JobItemExecutorFactory factory_;
  const std::shared_ptr<Logger> logger_;  // the job's (null: the process default)
  Mutex mu_;
  std::string text_ ELASTICJOB_GUARDED_BY(mu_);     // the text current_ was made from ("" at first)
  std::string refused_ ELASTICJOB_GUARDED_BY(mu_);  // the last text refused
  Current current_ ELASTICJOB_GUARDED_BY(mu_);
};

class GrpcModels final : public TaskModels {
 public:
  std::shared_ptr<bootstrap::Lifecycle> NewBroadcast(RegistryCenter& registry,
                                                     std::shared_ptr<SimpleJob> job,
                                                     std::string job_type, JobConfiguration config,
                                                     BootstrapOptions options) const override {
    if (job == nullptr && !job_type.empty()) {
      // SCRIPT, HTTP or a type given by name: its executor, made here from the configuration
      // given (a bad prop fails Start as without the broadcast), then from the registry's.
      auto factory = executor::FindJobType(job_type, options.job_types);
      if (factory.ok()) {
        auto made = (*factory)(config);
        if (made.ok() && *made != nullptr) {
          job = std::make_shared<TypeByNameAsSimpleJob>(
              registry, *std::move(factory), std::move(made).value(), config, options.logger);
        }
      }
    }
    if (job == nullptr) {
      return bootstrap::NewLifecycle(registry, nullptr, std::move(job_type), std::move(config),
                                     std::move(options));
    }
    if (options.job_type_name.empty()) options.job_type_name = job_type;
    return NewTaskLifecycle(registry, std::make_shared<SimpleBroadcast>(std::move(job)),
                            std::move(config), std::move(options));
  }
};

}  // namespace

std::shared_ptr<const TaskModels> GrpcTaskModels() {
  static const auto* const models =
      new std::shared_ptr<const TaskModels>(std::make_shared<GrpcModels>());
  return *models;
}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<TaskJob> job,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(Impl{
          NewTaskLifecycle(registry, std::move(job), std::move(config), std::move(options))})) {}

OneOffJobBootstrap::OneOffJobBootstrap(RegistryCenter& registry, std::shared_ptr<TaskJob> job,
                                       JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_unique<Impl>(Impl{
          NewTaskLifecycle(registry, std::move(job), std::move(config), std::move(options))})) {}

}  // namespace elasticjob
