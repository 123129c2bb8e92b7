#include "task/worker_service.h"

#include <fmt/format.h>

#include "task/task_context_impl.h"

namespace elasticjob::task {

grpc::Status WorkerService::RunTasks(grpc::ServerContext* context,
                                     const rpc::RunTasksRequest* request,
                                     rpc::RunTasksReply* reply) {
  if (request->job_name() != job_name_) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        fmt::format("job '{}' is not served here (this endpoint serves '{}')",
                                    request->job_name(), job_name_));
  }
  reply->set_instance_id(instance_id_);
  auto* broadcast = dynamic_cast<BroadcastJob*>(job_.get());
  auto* map = dynamic_cast<MapJob*>(job_.get());
  if (request->broadcast() ? broadcast == nullptr : map == nullptr) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        fmt::format("job '{}' is not a {} job here", job_name_,
                                    request->broadcast() ? "broadcast" : "map"));
  }
  // One context for the batch: the run's fields once, the task's fields per task.
  TaskContextImpl ctx;
  ctx.job_name_ = job_name_;
  ctx.job_parameter_ = request->job_parameter();
  ctx.run_id_ = request->run_id();
  ctx.instance_id_ = instance_id_;
  ctx.max_payload_bytes_ = settings_.max_payload_bytes;
  rpc::TaskOutcome* outcome = nullptr;
  if (!request->broadcast()) {
    ctx.sink_ = [&outcome](std::vector<Subtask> subtasks, std::string_view name) {
      rpc::MappedTasks* mapped = outcome->add_mapped();
      mapped->set_name(std::string(name));
      for (Subtask& s : subtasks) mapped->add_payloads(std::move(s.payload));
      return Status::Ok();
    };
  }
  reply->mutable_outcomes()->Reserve(request->tasks_size());
  for (const rpc::Task& task : request->tasks()) {
    if (context->IsCancelled()) return grpc::Status::CANCELLED;
    outcome = reply->add_outcomes();
    outcome->set_id(task.id());
    ctx.task_id_ = task.id();
    ctx.task_name_ = task.name();
    ctx.payload_ = task.payload();
    ctx.attempt_ = static_cast<int>(task.attempt());
    TaskResult r = CallFenced(
        [&] { return request->broadcast() ? broadcast->Process(ctx) : map->Process(ctx); });
    if (r.data.size() > settings_.max_payload_bytes) {
      r = TaskResult{false, fmt::format("result of {} bytes is over task.max.payload.bytes ({})",
                                        r.data.size(), settings_.max_payload_bytes)};
    }
    outcome->set_success(r.success);
    outcome->set_data(std::move(r.data));
    if (!r.success) outcome->clear_mapped();  // a failed task's sub-tasks are dropped
  }
  return grpc::Status::OK;
}

Result<std::unique_ptr<WorkerServer>> WorkerServer::Start(std::string address,
                                                          std::unique_ptr<WorkerService> service) {
  auto out = std::unique_ptr<WorkerServer>(new WorkerServer());
  out->service_ = std::move(service);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(out->service_.get());
  out->server_ = builder.BuildAndStart();
  if (out->server_ == nullptr || port == 0) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("task worker: cannot listen on '{}' (task_rpc_address)", address));
  }
  std::string host = address.substr(0, address.rfind(':'));
  out->address_ = fmt::format("{}:{}", host, port);
  return out;
}

WorkerServer::~WorkerServer() { Shutdown(std::chrono::milliseconds(0)); }

void WorkerServer::Shutdown(std::chrono::milliseconds grace) {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
  server_.reset();
}

}  // namespace elasticjob::task
