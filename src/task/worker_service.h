// WorkerService: an instance's TaskWorker RPC endpoint for one task job (task_worker.proto).
// It runs the tasks of a batch one after another on the gRPC handler's thread and replies
// with each outcome and the sub-tasks it mapped. With the shared task store
// (`worker_records`) it writes the outcomes and the mapped sub-tasks into the store itself
// (one transaction per batch, also when the call is cancelled midway: what ran is kept)
// and replies with what the store made of them. AwaitRun answers once no batch of a run is
// running here, and from then on refuses batches of an older coordinator of that run.
// Serves until Shutdown.
//
// Thread safety: concurrent RPCs run concurrently (Process must allow it).
#ifndef ELASTICJOB_TASK_WORKER_SERVICE_H_
#define ELASTICJOB_TASK_WORKER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "elasticjob/api/task_job.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "task/postgresql/pg_task_store.h"
#include "task/task_settings.h"
#include "task/task_worker.grpc.pb.h"

namespace elasticjob::task {

class WorkerService final : public rpc::TaskWorker::Service {
 public:
  // `writer`: the shared task store's (null: none configured; a batch that asks the worker
  // to record fails FAILED_PRECONDITION).
  WorkerService(std::shared_ptr<TaskJob> job, std::string job_name, std::string instance_id,
                TaskSettings settings, std::unique_ptr<PgOutcomeWriter> writer = nullptr)
      : job_(std::move(job)),
        job_name_(std::move(job_name)),
        instance_id_(std::move(instance_id)),
        settings_(settings),
        writer_(std::move(writer)) {}

  grpc::Status RunTasks(grpc::ServerContext* context, const rpc::RunTasksRequest* request,
                        rpc::RunTasksReply* reply) override;
  grpc::Status AwaitRun(grpc::ServerContext* context, const rpc::AwaitRunRequest* request,
                        rpc::AwaitRunReply* reply) override;

 private:
  // The batches of a run running here, and the epoch below which its batches are refused.
  struct RunState {
    int active = 0;
    uint64_t min_epoch = 0;
  };
  // NOT_FOUND: `job_name` is not this endpoint's job.
  grpc::Status NotServed(const std::string& job_name) const;
  // Counts a batch of `run_id` in (false: its coordinator was superseded).
  bool Enter(const std::string& run_id, uint64_t epoch);
  void Leave(const std::string& run_id);
  // Writes the outcomes of `reply` (of `request`'s tasks) into the shared store and
  // replaces the mapped sub-tasks with what the store made of each. REQUIRES: writer_.
  grpc::Status Record(const rpc::RunTasksRequest& request, rpc::RunTasksReply* reply);

  const std::shared_ptr<TaskJob> job_;
  const std::string job_name_;
  const std::string instance_id_;
  const TaskSettings settings_;
  const std::unique_ptr<PgOutcomeWriter> writer_;

  Mutex mu_;
  CondVar idle_{&mu_};  // a run's last batch here ended
  std::map<std::string, RunState> runs_ ELASTICJOB_GUARDED_BY(mu_);
};

// A started gRPC server with one WorkerService.
class WorkerServer {
 public:
  // Listens on `address` ("127.0.0.1:0": a free port). Fails naming the address.
  static Result<std::unique_ptr<WorkerServer>> Start(std::string address,
                                                     std::unique_ptr<WorkerService> service);
  ~WorkerServer();
  // "host:port" actually bound.
  const std::string& address() const { return address_; }
  // Stops accepting; waits up to `grace` for RPCs in progress, then cancels them.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  WorkerServer() = default;
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

// Channel arguments both sides use: messages up to 256 MiB (a batch's payloads are bounded
// by the coordinator, a reply by what the tasks mapped).
constexpr int kMaxMessageBytes = 256 << 20;

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_WORKER_SERVICE_H_
