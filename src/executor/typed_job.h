// TypedJob: the job the executor runs for every job, whatever its kind (a C++ SimpleJob, a
// DataflowJob, a job by type name: SCRIPT, HTTP, a registered type), with its error handler.
// Each item: the current item executor's Process with the current configuration; an
// exception goes to the current error handler (jobErrorHandlerType), then on to the executor,
// which reports the item failed. Update rebuilds both from a new configuration (a config
// change in the registry); a configuration they reject leaves the last good ones in place.
//
// Also where job types are looked up by name: the built-in ones (SCRIPT, HTTP), those
// registered process-wide (RegisterJobType) and a bootstrap's own (BootstrapOptions::job_types).
//
// An item's start reads the current executor without a lock when the caller pinned it (Pin,
// at a prepared run's preparation) and it is still current: one atomic load, no count.
//
// Thread safety: Execute, ExecutePinned and Update may be called concurrently.
#ifndef ELASTICJOB_EXECUTOR_TYPED_JOB_H_
#define ELASTICJOB_EXECUTOR_TYPED_JOB_H_

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "elasticjob/api/job_item_executor.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "error_handler/job_error_handler.h"

namespace elasticjob::executor {

// The factory of job type `type`: `extra` (a bootstrap's own) first, then the built-in and the
// process-wide ones. INVALID_ARGUMENT listing the known types when none has that name, or
// when `extra` takes a built-in name.
Result<JobItemExecutorFactory> FindJobType(
    const std::string& type, const std::map<std::string, JobItemExecutorFactory>& extra);

// A SimpleJob as an item executor.
class SimpleJobExecutor final : public JobItemExecutor {
 public:
  explicit SimpleJobExecutor(std::shared_ptr<SimpleJob> job) : job_(std::move(job)) {}
  void Process(const JobConfiguration&, const ShardingContext& context, JobRunState&) override {
    job_->Execute(context);
  }
  std::string type_name() const override { return "CPP_SIMPLE"; }
  // The user's job: an item's start calls it (its vtable is the start's last read).
  const SimpleJob* job() const { return job_.get(); }

 private:
  const std::shared_ptr<SimpleJob> job_;
};

class TypedJob final : public SimpleJob {
 public:
  // `factory` makes the item executor from each configuration; when null, `fixed` is the
  // executor (a C++ object; its Validate checks each configuration). `eligible` answers
  // JobRunState::IsEligibleForJobRunning. Fails as the factory, Validate or the error
  // handler's props do (the error names the prop and the value).
  static Result<std::shared_ptr<TypedJob>> Create(
      JobItemExecutorFactory factory, std::shared_ptr<JobItemExecutor> fixed,
      const JobConfiguration& config, std::string instance_id, std::function<bool()> eligible,
      error_handler::NotificationSender& sender, std::shared_ptr<Logger> logger = nullptr);

  // What an item's start reads (the current state's pointer, the state, its executor and,
  // for a C++ SimpleJob, the user's object), for a launch board unit's prefetch
  // (LaunchBoard::Unit::touch); stale addresses are harmless.
  std::array<const void*, 4> StartTouches();
  void Execute(const ShardingContext& context) override;
  // The current state (executor, error handler, configuration), for ExecutePinned; never
  // null once Create has returned.
  std::shared_ptr<const void> Pin();
  // Execute, with `pin` (Pin's, held by the caller; may be null) when it is still the
  // current state: no lock and no count; else as Execute.
  void ExecutePinned(const ShardingContext& context, const void* pin);
  // Passes an item failure the runtime decided (an execution timeout, an operator's stop) to
  // the job's error handler; never throws.
  void HandleFailure(const ShardingContext& context, const std::string& cause);
  // Rebuilds the executor and the error handler from `config`; on failure keeps the last good
  // ones and returns why.
  Status Update(const JobConfiguration& config);
  // The error handler's type now (for tests and logs).
  std::string error_handler_type();

 private:
  struct Current {
    std::shared_ptr<const JobConfiguration> config;
    std::shared_ptr<JobItemExecutor> executor;
    std::shared_ptr<error_handler::JobErrorHandler> handler;
    // The user's object the executor calls, when it is a SimpleJobExecutor (else null).
    const void* user = nullptr;
  };
  class State final : public JobRunState {
   public:
    explicit State(std::function<bool()> eligible) : eligible_(std::move(eligible)) {}
    bool IsEligibleForJobRunning() override { return eligible_ ? eligible_() : true; }

   private:
    const std::function<bool()> eligible_;
  };
  TypedJob(JobItemExecutorFactory factory, std::shared_ptr<JobItemExecutor> fixed,
           std::string instance_id, std::function<bool()> eligible,
           error_handler::NotificationSender& sender, std::shared_ptr<Logger> logger)
      : factory_(std::move(factory)),
        fixed_(std::move(fixed)),
        instance_id_(std::move(instance_id)),
        state_(std::move(eligible)),
        sender_(sender),
        logger_(std::move(logger)) {}
  Result<Current> Build(const JobConfiguration& config);
  // One item with `now`'s executor and error handler.
  void Run(const Current& now, const ShardingContext& context);

  const JobItemExecutorFactory factory_;
  const std::shared_ptr<JobItemExecutor> fixed_;
  const std::string instance_id_;
  State state_;
  error_handler::NotificationSender& sender_;
  const std::shared_ptr<Logger> logger_;  // the job's, for its error handler (null: default)
  Mutex mu_;
  // Immutable once built: an item's start copies one pointer (one count on one line),
  // not the three parts.
  std::shared_ptr<const Current> current_ ELASTICJOB_GUARDED_BY(mu_);
  // current_.get(), stored under mu_ after current_ (release): ExecutePinned compares its
  // pin with it. A pin is held by its caller, so no later state can take its address: equal
  // means current.
  std::atomic<const Current*> latest_{nullptr};
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_TYPED_JOB_H_
