#include "task/worker_service.h"

#include <fmt/format.h>

#include "task/task_context_impl.h"

namespace elasticjob::task {

namespace {

// Runs kept only to refuse an old coordinator's batches (AwaitRun's): at most this many.
constexpr size_t kFencedRuns = 1024;

rpc::Recorded ToProto(TaskStore::Recorded r) {
  switch (r) {
    case TaskStore::Recorded::kFirst:
      return rpc::RECORDED_FIRST;
    case TaskStore::Recorded::kRetry:
      return rpc::RECORDED_RETRY;
    case TaskStore::Recorded::kFailed:
      return rpc::RECORDED_FAILED;
    case TaskStore::Recorded::kDuplicate:
      break;
  }
  return rpc::RECORDED_DUPLICATE;
}

}  // namespace

grpc::Status WorkerService::NotServed(const std::string& job_name) const {
  return grpc::Status(
      grpc::StatusCode::NOT_FOUND,
      fmt::format("job '{}' is not served here (this endpoint serves '{}')", job_name, job_name_));
}

bool WorkerService::Enter(const std::string& run_id, uint64_t epoch) {
  MutexLock lock(&mu_);
  RunState& run = runs_[run_id];
  if (epoch < run.min_epoch) return false;
  ++run.active;
  return true;
}

void WorkerService::Leave(const std::string& run_id) {
  MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || --it->second.active > 0) return;
  idle_.SignalAll();
  if (it->second.min_epoch == 0) {
    runs_.erase(it);
    return;
  }
  // Fenced runs stay (bounded): drop an idle one when there are too many.
  if (runs_.size() > kFencedRuns) {
    for (auto i = runs_.begin(); i != runs_.end(); ++i) {
      if (i->second.active == 0 && i != it) {
        runs_.erase(i);
        break;
      }
    }
  }
}

grpc::Status WorkerService::AwaitRun(grpc::ServerContext* context,
                                     const rpc::AwaitRunRequest* request,
                                     rpc::AwaitRunReply* reply) {
  if (request->job_name() != job_name_) return NotServed(request->job_name());
  reply->set_instance_id(instance_id_);
  MutexLock lock(&mu_);
  RunState& run = runs_[request->run_id()];
  run.min_epoch = std::max(run.min_epoch, request->epoch());
  // Woken by the run's last batch ending (Leave). The sync API has no cancellation
  // callback: a caller that gives up (its deadline, its worker list) is noticed within the
  // wait's bound.
  while (runs_[request->run_id()].active > 0) {
    if (context->IsCancelled()) return grpc::Status::CANCELLED;
    idle_.WaitFor(std::chrono::milliseconds(200));
  }
  if (runs_[request->run_id()].min_epoch == 0) runs_.erase(request->run_id());
  return grpc::Status::OK;
}

grpc::Status WorkerService::Record(const rpc::RunTasksRequest& request, rpc::RunTasksReply* reply) {
  std::map<uint64_t, int> attempts;
  for (const rpc::Task& t : request.tasks()) attempts[t.id()] = static_cast<int>(t.attempt());
  std::vector<PgOutcomeWriter::Outcome> outcomes;
  outcomes.reserve(static_cast<size_t>(reply->outcomes_size()));
  for (const rpc::TaskOutcome& o : reply->outcomes()) {
    PgOutcomeWriter::Outcome w{o.id(), attempts[o.id()], o.success(), o.data(), {}};
    for (const rpc::MappedTasks& m : o.mapped()) {
      for (const std::string& p : m.payloads()) w.mapped.emplace_back(m.name(), p);
    }
    outcomes.push_back(std::move(w));
  }
  auto written = writer_->Write(request.run_id(), instance_id_,
                                static_cast<int>(request.max_attempts()), outcomes);
  if (!written.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, written.status().ToString());
  }
  for (int i = 0; i < reply->outcomes_size(); ++i) {
    rpc::TaskOutcome* o = reply->mutable_outcomes(i);
    const TaskStore::Recorded rec = (*written)[static_cast<size_t>(i)];
    o->set_recorded(ToProto(rec));
    o->set_mapped_count(
        rec == TaskStore::Recorded::kFirst ? outcomes[static_cast<size_t>(i)].mapped.size() : 0);
    o->clear_mapped();
    if (o->success()) o->clear_data();  // the result is in the store
  }
  return grpc::Status::OK;
}

grpc::Status WorkerService::RunTasks(grpc::ServerContext* context,
                                     const rpc::RunTasksRequest* request,
                                     rpc::RunTasksReply* reply) {
  if (request->job_name() != job_name_) return NotServed(request->job_name());
  reply->set_instance_id(instance_id_);
  if (request->worker_records() && writer_ == nullptr) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        fmt::format("job '{}': instance {} has no shared task store "
                                    "(BootstrapOptions::task_store) to record outcomes in",
                                    job_name_, instance_id_));
  }
  if (!Enter(request->run_id(), request->epoch())) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        fmt::format("run {}: a newer coordinator took it over", request->run_id()));
  }
  struct Leaving {
    WorkerService* self;
    const std::string& run_id;
    ~Leaving() { self->Leave(run_id); }
  } leaving{this, request->run_id()};
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
  bool cancelled = false;
  for (const rpc::Task& task : request->tasks()) {
    if (context->IsCancelled()) {
      cancelled = true;
      break;
    }
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
  // The shared store: what ran is recorded, also when the coordinator went midway.
  if (request->worker_records()) {
    if (grpc::Status s = Record(*request, reply); !s.ok()) return s;
  }
  return cancelled ? grpc::Status::CANCELLED : grpc::Status::OK;
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
