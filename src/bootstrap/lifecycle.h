// The lifecycle the public bootstraps share (elasticjob/bootstrap/*_job_bootstrap.h), and
// what the task models' component (src/task/task_bootstrap.cc) needs of it: the bootstraps'
// insides, the core's lifecycle of a plain job, and the hook by which a job broadcast by the
// prop `task.broadcast` reaches the task models (BootstrapOptions::task_models).
#ifndef ELASTICJOB_BOOTSTRAP_LIFECYCLE_H_
#define ELASTICJOB_BOOTSTRAP_LIFECYCLE_H_

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "bootstrap/job_runtime.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "infra/log.h"

namespace elasticjob {
namespace bootstrap {

// What starts before a job's runtime and stops with it: a task job's endpoint and worker
// node (task::TaskRuntime).
class Companion {
 public:
  virtual ~Companion() = default;
  // Fails naming what could not start; nothing stays started then.
  virtual Status Start() = 0;
  virtual void Stop() = 0;
  // Waits for what is left, until `deadline` (a default time point: the companion's own
  // bound).
  virtual void Join(std::chrono::steady_clock::time_point deadline) = 0;
};

// The lifecycle both bootstraps share (see schedule_job_bootstrap.h): one Start, then Stop
// and Join; nothing is ever rebuilt. Thread-safe: transitions under mu_, Join outside it.
class Lifecycle {
 public:
  enum class State { kNew, kScheduled, kFailed, kStopped };

  // `companion`: started before the runtime, stopped and joined after it (null: none).
  // `refused`: not OK, what Start returns without starting anything (a job its options
  // cannot run, found when the bootstrap was made).
  explicit Lifecycle(std::shared_ptr<JobRuntime> runtime, std::chrono::milliseconds timeout,
                     std::shared_ptr<Companion> companion = nullptr, Status refused = Status::Ok())
      : runtime_(std::move(runtime)),
        timeout_(timeout),
        task_(std::move(companion)),
        refused_(std::move(refused)) {}

  // Starts the runtime once. `again_ok`: a later call returns the first one's result (a
  // one-off job's Start); else it is FAILED_PRECONDITION. `hints`: JobRuntime::Start's.
  Status Start(bool scheduled, bool again_ok, StartHints hints = {}) {
    MutexLock lock(&mu_);
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
    if (!refused_.ok()) {
      state_ = State::kFailed;
      first_ = refused_;
      return first_;
    }
    // A task job's endpoint and worker node first: the job's first trigger may use them.
    first_ = task_ != nullptr ? task_->Start() : Status::Ok();
    if (first_.ok()) first_ = runtime_->Start(scheduled, hints);
    if (first_.ok()) {
      state_ = State::kScheduled;
      return first_;
    }
    // Nothing left behind: what was registered goes, what was started stops.
    state_ = State::kFailed;
    (void)runtime_->Join(std::chrono::steady_clock::now() + timeout_);
    if (task_ != nullptr) task_->Join({});
    return first_;
  }

  // Whether started and not stopped.
  bool running() {
    MutexLock lock(&mu_);
    return state_ == State::kScheduled;
  }

  void Stop() {
    MutexLock lock(&mu_);
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
  const std::shared_ptr<Companion> task_;  // a task job's endpoint, else null
  const Status refused_;
  Mutex mu_;
  State state_ ELASTICJOB_GUARDED_BY(mu_) = State::kNew;
  Status first_ ELASTICJOB_GUARDED_BY(mu_);  // the Start's result
  std::atomic<bool> logged_{false};  // a TIMEOUT was logged (set once, read by any Shutdown)
};

// A job's lifecycle over a JobRuntime: a SimpleJob, a job by type name or an item executor
// (one of them), without broadcast.
std::shared_ptr<Lifecycle> NewLifecycle(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                        std::string job_type, JobConfiguration config,
                                        BootstrapOptions options,
                                        std::shared_ptr<JobItemExecutor> executor = nullptr);

}  // namespace bootstrap

// The task models (component elasticjob::tasks): what a job broadcast by the prop
// `task.broadcast: "true"` runs on (BootstrapOptions::task_models; GrpcTaskModels() makes
// the one there is).
class TaskModels {
 public:
  virtual ~TaskModels() = default;
  // The lifecycle of `job` (a SimpleJob), or of the job type `job_type` when `job` is null,
  // broadcast: each trigger runs it once on every live instance.
  virtual std::shared_ptr<bootstrap::Lifecycle> NewBroadcast(RegistryCenter& registry,
                                                             std::shared_ptr<SimpleJob> job,
                                                             std::string job_type,
                                                             JobConfiguration config,
                                                             BootstrapOptions options) const = 0;
};

struct ScheduleJobBootstrap::Impl {
  std::shared_ptr<bootstrap::Lifecycle> life;
};

struct OneOffJobBootstrap::Impl {
  std::shared_ptr<bootstrap::Lifecycle> life;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_BOOTSTRAP_LIFECYCLE_H_
