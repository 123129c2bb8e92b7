// PinningJob: a job whose item start can read state pinned ahead, at a prepared run's
// preparation, in place of reading (and locking, and counting a hold on) the job's current
// state at the start itself. A prepared run's items start at the fire time on a launch
// board's drainer, a thousand of them one after another: each lock and each count there
// writes a cache line that the preparation wrote last on another core (docs/runtime.md
// "Order of the work at a fire").
//
// The JobExecutor pins once per prepared run (Pin) and holds the pin until the run's items
// have ended; each item then calls ExecutePinned with it. The job decides at each start
// whether the pinned state is still the current one: a pin never makes an item run with a
// state the job has replaced since (a configuration change in between).
//
// Thread safety: implementations are safe for concurrent use (as SimpleJob::Execute).
#ifndef ELASTICJOB_EXECUTOR_PINNING_JOB_H_
#define ELASTICJOB_EXECUTOR_PINNING_JOB_H_

#include <memory>

#include "elasticjob/api/sharding_context.h"
#include "elasticjob/api/simple_job.h"

namespace elasticjob::executor {

class PinningJob : public SimpleJob {
 public:
  // The state an item's start reads, as it is now, held by the caller for the starts that
  // follow (null: nothing to pin; ExecutePinned then reads the current state).
  virtual std::shared_ptr<const void> Pin() = 0;
  // As Execute(context), reading `pin` (Pin's, still held by the caller; may be null) when it
  // is still the job's current state, and the current state otherwise.
  virtual void ExecutePinned(const ShardingContext& context, const void* pin) = 0;
  void Execute(const ShardingContext& context) override { ExecutePinned(context, nullptr); }
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_PINNING_JOB_H_
