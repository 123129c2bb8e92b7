// The public bootstraps: thin handles over a JobRuntime (bootstrap/job_runtime.h).
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

#include "bootstrap/job_runtime.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"

namespace elasticjob {

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
