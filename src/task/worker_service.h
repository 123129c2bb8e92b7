// WorkerService: an instance's TaskWorker RPC endpoint for one task job (task_worker.proto).
// It runs the tasks of a batch one after another on the gRPC handler's thread and replies
// with each outcome and the sub-tasks it mapped. Serves until Shutdown.
//
// Thread safety: concurrent RPCs run concurrently (Process must allow it).
#ifndef ELASTICJOB_TASK_WORKER_SERVICE_H_
#define ELASTICJOB_TASK_WORKER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "elasticjob/api/task_job.h"
#include "task/task_settings.h"
#include "task/task_worker.grpc.pb.h"

namespace elasticjob::task {

class WorkerService final : public rpc::TaskWorker::Service {
 public:
  WorkerService(std::shared_ptr<TaskJob> job, std::string job_name, std::string instance_id,
                TaskSettings settings)
      : job_(std::move(job)),
        job_name_(std::move(job_name)),
        instance_id_(std::move(instance_id)),
        settings_(settings) {}

  grpc::Status RunTasks(grpc::ServerContext* context, const rpc::RunTasksRequest* request,
                        rpc::RunTasksReply* reply) override;

 private:
  const std::shared_ptr<TaskJob> job_;
  const std::string job_name_;
  const std::string instance_id_;
  const TaskSettings settings_;
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
