// The task models (docs/task-models.md) as a component of their own: elasticjob::tasks, the
// one that links gRPC. Task jobs (BroadcastJob, MapJob, MapReduceJob) need it linked: their
// bootstrap constructors are defined there. A SimpleJob or a job by type name broadcast by the
// prop `task.broadcast: "true"` also needs it set in its options:
//
//   BootstrapOptions options;
//   options.task_models = elasticjob::GrpcTaskModels();
//
// (without it such a job fails Schedule() saying so). The `elasticjob` command sets it.
#ifndef ELASTICJOB_BOOTSTRAP_TASK_MODELS_H_
#define ELASTICJOB_BOOTSTRAP_TASK_MODELS_H_

#include <memory>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

namespace elasticjob {

// The task models over gRPC: each instance's TaskWorker endpoint (BootstrapOptions::
// task_rpc_address), the run's task store (BootstrapOptions::task_store). One object for the
// process; thread-safe.
std::shared_ptr<const TaskModels> GrpcTaskModels();

}  // namespace elasticjob

#endif  // ELASTICJOB_BOOTSTRAP_TASK_MODELS_H_
