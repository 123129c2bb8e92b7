// JobListeners: runs a job's listeners around each execution, as ElasticJob's
// LiteJobFacade.beforeJobExecuted / afterJobExecuted and AbstractDistributeOnceElasticJob-
// Listener do, but without blocking a thread while a distribute-once listener waits for the
// rest of the cluster:
//
//   ElasticJobListener           called at once, on the calling thread;
//   DistributeOnceElasticJobListener (for a phase, started or completed)
//     1. register this instance's items under `guarantee/{phase}` (GuaranteeService);
//     2. all items of the job registered: under the phase's latch, run the hook if still
//        all there, and clear the phase;
//     3. else wait for the phase to be cleared (OnPhaseCleared, from the job's Watch; woken
//        only once this instance's own node is gone from the server) or for the listener's
//        timeout (the shared timer): a timeout clears the phase and is logged.
//   The pass then goes on with the next listener; `next` is called after the last one, on
//   the calling thread when nothing waited, else on `executor`.
//
// Listeners run in ascending order() (stable). A hook that throws is logged and the pass
// goes on, as ElasticJob's error handler does.
//
// Thread safety: safe for concurrent use. Owned by shared_ptr (timer tasks hold it).
#ifndef ELASTICJOB_EXECUTOR_JOB_LISTENERS_H_
#define ELASTICJOB_EXECUTOR_JOB_LISTENERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/api/job_listener.h"
#include "elasticjob/clock.h"
#include "elasticjob/executor.h"
#include "elasticjob/logger.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "guarantee/guarantee_service.h"
#include "trigger/timer_scheduler.h"

namespace elasticjob::executor {

// The built-in jobListenerTypes: LOG and DISTRIBUTE_ONCE_LOG (docs/runtime.md), whose INFO
// lines go to `logger` (null: the process default).
std::map<std::string, JobListenerFactory> BuiltinJobListenerTypes(
    std::shared_ptr<Logger> logger = nullptr);

// `listeners` then one listener per name in `config.job_listener_types`, made by `types`.
// Fails naming the unknown type (ElasticJob: "Can not find job listener type") or the
// factory's error.
Result<std::vector<JobListener>> ResolveJobListeners(
    std::vector<JobListener> listeners, const JobConfiguration& config,
    const std::map<std::string, JobListenerFactory>& types);

class JobListeners : public std::enable_shared_from_this<JobListeners> {
 public:
  // REQUIRES: every reference outlives this object. `logger`: where the warnings go (the
  // job's; null: the process default).
  JobListeners(std::vector<JobListener> listeners, guarantee::GuaranteeService& guarantee,
               trigger::TimerScheduler& timer, Executor& executor, Clock& clock,
               std::string job_name, std::shared_ptr<Logger> logger = nullptr);

  bool empty() const { return listeners_.empty(); }
  void Before(const ShardingContexts& contexts, std::function<void()> next) {
    Start(guarantee::Phase::kStarted, contexts, std::move(next));
  }
  void After(const ShardingContexts& contexts, std::function<void()> next) {
    Start(guarantee::Phase::kCompleted, contexts, std::move(next));
  }
  // `guarantee/{phase}` was deleted: waits whose own node is gone go on.
  void OnPhaseCleared(guarantee::Phase phase);
  // Shutdown: every wait ends now (its hook does not run here); later ones do not wait.
  void Cancel();

 private:
  struct Pass;
  struct Waiter {
    std::shared_ptr<Pass> pass;
    int probe = 0;  // one of this instance's items
    trigger::TimerScheduler::TaskId timer = 0;
  };
  void Start(guarantee::Phase phase, const ShardingContexts& contexts, std::function<void()> next);
  // Runs the pass's listeners from where it stopped; returns when one waits or all ran.
  void Continue(const std::shared_ptr<Pass>& pass);
  // Steps 1 to 3 for one listener; returns true if the pass goes on now, false if it waits.
  bool DistributeOnce(const std::shared_ptr<Pass>& pass,
                      DistributeOnceElasticJobListener& listener);
  // Removes the waiter `token`; whoever gets it resumes its pass.
  bool Take(uint64_t token, Waiter* waiter);
  void Resume(std::shared_ptr<Pass> pass);
  void Warn(const std::string& what);

  const std::vector<JobListener> listeners_;
  guarantee::GuaranteeService& guarantee_;
  trigger::TimerScheduler& timer_;
  Executor& executor_;
  Clock& clock_;
  const std::string job_name_;
  const std::shared_ptr<Logger> logger_;

  Mutex mu_;
  bool cancelled_ ELASTICJOB_GUARDED_BY(mu_) = false;
  uint64_t next_token_ ELASTICJOB_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Waiter> waiters_ ELASTICJOB_GUARDED_BY(mu_);
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_JOB_LISTENERS_H_
