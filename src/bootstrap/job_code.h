// JobCode: the one object a job's executor calls for an item's user code, put together when
// the job is scheduled. An item start passes the user-code gate (Gate: nothing of the
// user's is called once Join has closed it), then goes straight to the typed job (the
// user's job or job type, with its error handler), with the state the run pinned at its
// preparation when that is still current (executor::PinningJob). Only a workflow node's run
// (its parameter is a workflow envelope) goes through workflow::NodeJob, which gives each
// item the node's parameter and records its outcome for the workflow.
//
// Before, each start went through three wrappers (the gate's, the node's, then the typed
// job under its lock): three objects to read and two virtual calls for every job, whether
// or not it ever runs a workflow node, and a lock and a count written per start.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_BOOTSTRAP_JOB_CODE_H_
#define ELASTICJOB_BOOTSTRAP_JOB_CODE_H_

#include <memory>
#include <utility>

#include "bootstrap/user_code.h"
#include "executor/pinning_job.h"
#include "executor/typed_job.h"
#include "workflow/node_job.h"

namespace elasticjob::bootstrap {

class JobCode final : public executor::PinningJob {
 public:
  // `node`: the workflow node's wrapper around `typed`, for an envelope's items.
  // REQUIRES: none null.
  JobCode(std::shared_ptr<executor::TypedJob> typed, std::shared_ptr<workflow::NodeJob> node,
          std::shared_ptr<Gate> gate)
      : gate_(std::move(gate)), typed_(std::move(typed)), node_(std::move(node)) {}

  std::shared_ptr<const void> Pin() override { return typed_->Pin(); }
  void ExecutePinned(const ShardingContext& context, const void* pin) override {
    // An item that starts once Join has closed the gate (one queued behind the job's item
    // limit, say) does not call the job; one that started before runs on.
    if (gate_->closed()) return;
    if (workflow::IsEnvelope(context.job_parameter)) return node_->Execute(context);
    typed_->ExecutePinned(context, pin);
  }

 private:
  // What a start reads first, next to the vtable pointer (the board prefetches the object's
  // first 64 bytes): the gate, then the typed job.
  const std::shared_ptr<Gate> gate_;
  const std::shared_ptr<executor::TypedJob> typed_;
  const std::shared_ptr<workflow::NodeJob> node_;  // only for a workflow envelope's items
};

}  // namespace elasticjob::bootstrap

#endif  // ELASTICJOB_BOOTSTRAP_JOB_CODE_H_
