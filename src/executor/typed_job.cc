#include "executor/typed_job.h"

#include <fmt/format.h>

#include <set>

#include "executor/http/http_job.h"
#include "executor/script/script_job.h"

namespace elasticjob {
namespace {

using Factories = std::map<std::string, JobItemExecutorFactory>;

Result<std::shared_ptr<JobItemExecutor>> ScriptFactory(const JobConfiguration& config) {
  // Made again at every configuration change (the registry's command wins), its scripts
  // always under the process's ScriptProcesses.
  auto script =
      executor::ScriptJob::FromProps(config.props, executor::ScriptProcesses::SharedPtr());
  if (!script.ok()) return script.status();
  return std::shared_ptr<JobItemExecutor>(
      std::make_shared<executor::SimpleJobExecutor>(*std::move(script)));
}

const Factories& Builtins() {
  static const auto* builtins =
      new Factories{{"SCRIPT", ScriptFactory}, {"HTTP", executor::HttpJob::Create}};
  return *builtins;
}

// The process-wide registrations (RegisterJobType): plugins named at start-up, no job state.
struct Registered {
  Mutex mu;
  Factories factories ELASTICJOB_GUARDED_BY(mu);
};

Registered& Process() {
  static auto* registered = new Registered;
  return *registered;
}

}  // namespace

Status RegisterJobType(const std::string& type, JobItemExecutorFactory factory) {
  if (type.empty()) return InvalidArgument("job type: the name must not be empty");
  if (!factory) return InvalidArgument(fmt::format("job type '{}': null factory", type));
  if (Builtins().count(type) != 0) {
    return Status(StatusCode::kAlreadyExists,
                  fmt::format("job type '{}': taken by a built-in type", type));
  }
  Registered& r = Process();
  MutexLock lock(&r.mu);
  if (!r.factories.emplace(type, std::move(factory)).second) {
    return Status(StatusCode::kAlreadyExists, fmt::format("job type '{}': registered twice", type));
  }
  return Status::Ok();
}

std::vector<std::string> RegisteredJobTypes() {
  std::set<std::string> names;
  for (const auto& [name, factory] : Builtins()) names.insert(name);
  Registered& r = Process();
  MutexLock lock(&r.mu);
  for (const auto& [name, factory] : r.factories) names.insert(name);
  return {names.begin(), names.end()};
}

namespace executor {

Result<JobItemExecutorFactory> FindJobType(const std::string& type, const Factories& extra) {
  for (const auto& [name, factory] : extra) {
    if (Builtins().count(name) != 0) {
      return InvalidArgument(
          fmt::format("job_types: '{}' is a built-in job type and cannot be replaced", name));
    }
    if (name.empty() || !factory) {
      return InvalidArgument(fmt::format("job_types: '{}': empty name or null factory", name));
    }
  }
  if (auto it = extra.find(type); it != extra.end()) return it->second;
  if (auto it = Builtins().find(type); it != Builtins().end()) return it->second;
  {
    Registered& r = Process();
    MutexLock lock(&r.mu);
    if (auto it = r.factories.find(type); it != r.factories.end()) return it->second;
  }
  std::set<std::string> known;
  for (const auto& name : RegisteredJobTypes()) known.insert(name);
  for (const auto& [name, factory] : extra) known.insert(name);
  std::string list;
  for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
  return InvalidArgument(fmt::format("unknown job type '{}' (known: {})", type, list));
}

Result<std::shared_ptr<TypedJob>> TypedJob::Create(
    JobItemExecutorFactory factory, std::shared_ptr<JobItemExecutor> fixed,
    const JobConfiguration& config, std::string instance_id, std::function<bool()> eligible,
    error_handler::NotificationSender& sender, std::shared_ptr<Logger> logger) {
  std::shared_ptr<TypedJob> job(new TypedJob(std::move(factory), std::move(fixed),
                                             std::move(instance_id), std::move(eligible), sender,
                                             std::move(logger)));
  if (Status s = job->Update(config); !s.ok()) return s;
  return job;
}

Result<TypedJob::Current> TypedJob::Build(const JobConfiguration& config) {
  Current next;
  next.config = std::make_shared<const JobConfiguration>(config);
  try {
    if (factory_) {
      auto made = factory_(config);
      if (!made.ok()) return made.status();
      if (*made == nullptr) return Internal("the job type's factory returned null");
      next.executor = *std::move(made);
    } else {
      if (Status s = fixed_->Validate(config); !s.ok()) return s;
      next.executor = fixed_;
    }
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("the job type's factory threw: {}", e.what()));
  } catch (...) {
    return InvalidArgument("the job type's factory threw an unknown exception");
  }
  auto handler = error_handler::NewJobErrorHandler(config, sender_, logger_);
  if (!handler.ok()) return handler.status();
  next.handler = *std::move(handler);
  if (const auto* simple = dynamic_cast<const SimpleJobExecutor*>(next.executor.get())) {
    next.user = simple->job();
  }
  return next;
}

Status TypedJob::Update(const JobConfiguration& config) {
  {
    MutexLock lock(&mu_);
    if (current_ != nullptr && current_->config != nullptr && *current_->config == config) {
      return Status::Ok();
    }
  }
  auto next = Build(config);
  if (!next.ok()) return next.status();
  MutexLock lock(&mu_);
  current_ = std::make_shared<const Current>(*std::move(next));
  latest_.store(current_.get(), std::memory_order_release);
  return Status::Ok();
}

std::string TypedJob::error_handler_type() {
  MutexLock lock(&mu_);
  return current_ != nullptr && current_->handler != nullptr ? current_->handler->type() : "";
}

std::array<const void*, 4> TypedJob::StartTouches() {
  MutexLock lock(&mu_);
  const Current* now = current_.get();
  if (now == nullptr) return {&latest_, nullptr, nullptr, nullptr};
  return {&latest_, now, now->executor.get(), now->user};
}

std::shared_ptr<const void> TypedJob::Pin() {
  MutexLock lock(&mu_);
  return current_;
}

void TypedJob::Execute(const ShardingContext& context) {
  std::shared_ptr<const Current> current;
  {
    MutexLock lock(&mu_);
    current = current_;
  }
  Run(*current, context);
}

void TypedJob::ExecutePinned(const ShardingContext& context, const void* pin) {
  if (pin == nullptr || pin != latest_.load(std::memory_order_acquire)) return Execute(context);
  Run(*static_cast<const Current*>(pin), context);
}

void TypedJob::Run(const Current& now, const ShardingContext& context) {
  std::string cause;
  try {
    now.executor->Process(*now.config, context, state_);
    return;
  } catch (const std::exception& e) {
    cause = e.what();
  } catch (...) {
    cause = "unknown exception";
  }
  // A failure a retry follows, or one the runtime ended (a timeout, a stop: it reports that
  // to the handler itself, with its cause), is not the handler's yet.
  const bool retried = context.attempt < context.max_attempts && !context.cancelled();
  const bool runtime_ended = context.cancelled() && context.cancellation->grace().count() > 0;
  if (!retried && !runtime_ended) {
    try {
      now.handler->Handle(
          {context.job_name, context.sharding_item, instance_id_, cause, context.logger});
    } catch (...) {
      // A handler never turns a failed item into a crash; the item is reported failed below.
    }
  }
  throw std::runtime_error(cause);
}

void TypedJob::HandleFailure(const ShardingContext& context, const std::string& cause) {
  std::shared_ptr<const Current> now;
  {
    MutexLock lock(&mu_);
    now = current_;
  }
  if (now == nullptr || now->handler == nullptr) return;
  try {
    now->handler->Handle(
        {context.job_name, context.sharding_item, instance_id_, cause, context.logger});
  } catch (...) {
    // As in Execute: never a crash.
  }
}

}  // namespace executor
}  // namespace elasticjob
