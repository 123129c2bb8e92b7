#include "task/coordinator.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <optional>
#include <set>

#include "infra/log.h"
#include "task/task_context_impl.h"
#include "task/task_store.h"
#include "task/task_worker.grpc.pb.h"
#include "task/worker_service.h"

namespace elasticjob::task {

namespace {

// A batch's payloads stop growing past this (at least one sub-task goes).
constexpr size_t kBatchBytes = 8 << 20;

struct Worker {
  WorkerEndpoint endpoint;
  std::unique_ptr<rpc::TaskWorker::Stub> stub;
  int inflight = 0;
  bool gone = false;
  bool awaiting = false;  // a resumed run waits for the batches it still runs (AwaitRun)
};

std::unique_ptr<rpc::TaskWorker::Stub> NewStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return rpc::TaskWorker::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

// What a worker that records its outcomes (the shared store) says the store made of one;
// none: it did not record it.
std::optional<TaskStore::Recorded> FromProto(rpc::Recorded r) {
  switch (r) {
    case rpc::RECORDED_FIRST:
      return TaskStore::Recorded::kFirst;
    case rpc::RECORDED_RETRY:
      return TaskStore::Recorded::kRetry;
    case rpc::RECORDED_FAILED:
      return TaskStore::Recorded::kFailed;
    case rpc::RECORDED_DUPLICATE:
      return TaskStore::Recorded::kDuplicate;
    default:
      return std::nullopt;
  }
}

// A call's deadline (task.rpc.deadline.ms), if any.
void SetDeadline(grpc::ClientContext& context, const TaskSettings& settings) {
  if (settings.rpc_deadline_ms > 0) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(settings.rpc_deadline_ms));
  }
}

}  // namespace

std::vector<Coordinator::Call*> Coordinator::AwaitCompletions(
    bool* woken, bool* cancelled, const std::function<void()>& cancel_calls) {
  std::vector<Call*> done;
  MutexLock lock(&mu_);
  while (completed_.empty() && !woken_ && !cancelled_) cv_.Wait();
  done.swap(completed_);
  *woken = woken_;
  woken_ = false;
  if (cancelled_ && !*cancelled) {
    *cancelled = true;
    cancel_calls();
  }
  return done;
}

struct Coordinator::Call {
  std::string worker;  // instance id
  grpc::ClientContext context;
  rpc::RunTasksRequest request;
  rpc::RunTasksReply reply;
  bool await = false;  // an AwaitRun call (a resumed run), not a batch
  rpc::AwaitRunRequest await_request;
  rpc::AwaitRunReply await_reply;
  grpc::Status status;
};

void Coordinator::Finished(Call* call) {
  MutexLock lock(&mu_);
  completed_.push_back(call);
  cv_.SignalAll();
}

void Coordinator::Wake() {
  MutexLock lock(&mu_);
  woken_ = true;
  cv_.SignalAll();
}

void Coordinator::Cancel(std::string reason) {
  MutexLock lock(&mu_);
  if (!cancelled_) cancel_reason_ = std::move(reason);
  cancelled_ = true;
  cv_.SignalAll();
}

Status Coordinator::Run() {
  if (auto* b = dynamic_cast<BroadcastJob*>(&job_)) return RunBroadcast(*b);
  if (auto* m = dynamic_cast<MapJob*>(&job_)) return RunMap(*m);
  return InvalidArgument(
      fmt::format("job '{}': not a BroadcastJob, MapJob or MapReduceJob", job_name_));
}

Status Coordinator::RunBroadcast(BroadcastJob& job) {
  TaskContextImpl root;
  root.job_name_ = job_name_;
  root.job_parameter_ = job_parameter_;
  root.run_id_ = run_id_;
  root.task_name_ = std::string(TaskContext::kRootTaskName);
  root.instance_id_ = instance_id_;
  root.max_payload_bytes_ = settings_.max_payload_bytes;
  root.workflow_ = workflow_.get();
  TaskResult pre = CallFenced([&] {
    job.PreProcess(root);
    return TaskResult{true, ""};
  });
  if (!pre.success) {
    return Internal(fmt::format("job '{}' run {}: PreProcess {}", job_name_, run_id_, pre.data));
  }
  auto listed = list_workers_();
  if (!listed.ok()) return listed.status().WithContext("listing the task workers");
  if (listed->empty()) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("job '{}' run {}: no live task worker", job_name_, run_id_));
  }
  std::map<std::string, InstanceResult> results;
  std::map<std::string, std::unique_ptr<Call>> calls;
  std::map<std::string, std::unique_ptr<rpc::TaskWorker::Stub>> stubs;
  uint64_t id = 0;
  for (const WorkerEndpoint& w : *listed) {
    results[w.instance_id] = InstanceResult{w.instance_id, false, ""};
    auto call = std::make_unique<Call>();
    call->worker = w.instance_id;
    call->request.set_job_name(job_name_);
    call->request.set_run_id(run_id_);
    call->request.set_job_parameter(job_parameter_);
    call->request.set_broadcast(true);
    rpc::Task* t = call->request.add_tasks();
    t->set_id(++id);
    t->set_name(std::string(TaskContext::kBroadcastTaskName));
    t->set_attempt(1);
    auto stub = NewStub(w.address);
    Call* raw = call.get();
    SetDeadline(raw->context, settings_);
    stub->async()->RunTasks(&raw->context, &raw->request, &raw->reply, [this, raw](grpc::Status s) {
      raw->status = std::move(s);
      Finished(raw);
    });
    stubs[w.instance_id] = std::move(stub);
    calls[w.instance_id] = std::move(call);
  }
  size_t pending = calls.size();
  bool cancelled = false;
  while (pending > 0) {
    bool woken = false;
    std::vector<Call*> done = AwaitCompletions(&woken, &cancelled, [&] {
      for (auto& [_, c] : calls) c->context.TryCancel();
    });
    for (Call* c : done) {
      --pending;
      InstanceResult& r = results[c->worker];
      if (c->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        r.data = fmt::format("instance {} did not answer within task.rpc.deadline.ms ({} ms)",
                             c->worker, settings_.rpc_deadline_ms);
      } else if (!c->status.ok()) {
        r.data =
            fmt::format("instance {} failed the RPC: {}", c->worker, c->status.error_message());
      } else if (c->reply.outcomes_size() != 1) {
        r.data = fmt::format("instance {} replied with {} outcomes", c->worker,
                             c->reply.outcomes_size());
      } else {
        r.success = c->reply.outcomes(0).success();
        r.data = c->reply.outcomes(0).data();
      }
    }
    if (woken && !cancelled) {
      // A worker whose node went has left the run: its call ends now, as a failure.
      auto now = list_workers_();
      if (now.ok()) {
        std::set<std::string> live;
        for (const auto& w : *now) live.insert(w.instance_id);
        for (auto& [inst, c] : calls) {
          if (live.count(inst) == 0) c->context.TryCancel();
        }
      }
    }
  }
  if (cancelled) {
    MutexLock lock(&mu_);
    return Status(StatusCode::kCancelled, fmt::format("job '{}' run {}: cancelled: {}", job_name_,
                                                      run_id_, cancel_reason_));
  }
  std::vector<InstanceResult> list;
  for (auto& [_, r] : results) {
    if (!r.success)
      ++counts_.failed;
    else
      ++counts_.succeeded;
    list.push_back(std::move(r));
  }
  counts_.created = static_cast<int64_t>(list.size());
  TaskResult post = CallFenced([&] {
    job.PostProcess(root, list);
    return TaskResult{true, ""};
  });
  if (!post.success) {
    return Internal(fmt::format("job '{}' run {}: PostProcess {}", job_name_, run_id_, post.data));
  }
  return Status::Ok();
}

namespace {

class StoreResults final : public SubtaskResults {
 public:
  explicit StoreResults(const TaskStore& store) : store_(store) {}
  int64_t size() const override { return store_.done(); }
  int64_t failed() const override { return store_.failed(); }
  Status ForEach(const std::function<void(const SubtaskResult&)>& fn) const override {
    return store_.ForEach(fn);
  }

 private:
  const TaskStore& store_;
};

}  // namespace

Coordinator::~Coordinator() = default;

Status Coordinator::RunMap(MapJob& job) {
  if (store_ == nullptr) {
    auto opened = TaskStore::OpenTemp(settings_.max_attempts);
    if (!opened.ok()) return opened.status();
    store_ = std::move(opened).value();
  }
  Status s = RunMapIn(job, *store_);
  // A shared store keeps a cancelled run (the job stopping, the session lost) for the next
  // coordinator; a run that ended, well or not, goes.
  if (store_->shared() && s.code() == StatusCode::kCancelled) {
    handed_over_ = true;
  } else if (Status f = store_->Finish(); !f.ok()) {
    log_("WARN", fmt::format("job '{}' run {}: the task store keeps the run: {}", job_name_,
                             run_id_, f.ToString()));
    handed_over_ = store_->shared();
  }
  return s;
}

Status Coordinator::RunMapIn(MapJob& job, TaskStore& store) {
  auto context = [&](std::string what) {
    return fmt::format("job '{}' run {}: {}", job_name_, run_id_, what);
  };

  TaskContextImpl root;
  root.job_name_ = job_name_;
  root.job_parameter_ = job_parameter_;
  root.run_id_ = run_id_;
  root.task_name_ = std::string(TaskContext::kRootTaskName);
  root.instance_id_ = instance_id_;
  root.max_payload_bytes_ = settings_.max_payload_bytes;
  root.workflow_ = workflow_.get();
  root.sink_ = [&store](std::vector<Subtask> subtasks, std::string_view name) -> Status {
    std::vector<std::string> payloads;
    payloads.reserve(subtasks.size());
    for (Subtask& s : subtasks) payloads.push_back(std::move(s.payload));
    if (Status s = store.Begin(); !s.ok()) return s;
    Status s = store.Add(name, payloads);
    Status c = store.Commit();
    return s.ok() ? c : s;
  };
  if (store.resumed()) {
    log_("INFO", context(fmt::format("resumed from the task store '{}': {} of {} "
                                     "sub-task(s) done, {} pending",
                                     store.path(), store.done(), store.total(), store.pending())));
  } else {
    TaskResult r = CallFenced([&] { return job.Process(root); });
    if (!r.success) return Internal(context("the root task failed: " + r.data));
    if (Status s = store.MarkRootDone(); !s.ok()) return s;
  }

  // The shared store: workers record their outcomes themselves, and the coordinator runs
  // no sub-task while another worker can (a kill -9 of it then loses no sub-task's run).
  const bool workers_record = store.workers_record();
  std::map<std::string, Worker> workers;
  auto refresh = [&]() -> Status {
    auto listed = list_workers_();
    if (!listed.ok()) return listed.status();
    std::set<std::string> live;
    for (const WorkerEndpoint& w : *listed) {
      live.insert(w.instance_id);
      auto it = workers.find(w.instance_id);
      if (it == workers.end()) {
        workers[w.instance_id] = Worker{w, NewStub(w.address), 0, false, false};
      }
    }
    for (auto& [id, w] : workers) {
      if (live.count(id) == 0) w.gone = true;
    }
    return Status::Ok();
  };
  if (Status s = refresh(); !s.ok()) return s.WithContext(context("listing the task workers"));
  auto eligible = [&](const std::string& id, const Worker& w) {
    if (w.gone || w.awaiting) return false;
    if (!workers_record || id != instance_id_) return true;
    for (const auto& [other, o] : workers) {
      if (other != id && !o.gone) return false;
    }
    return true;
  };

  std::map<Call*, std::unique_ptr<Call>> inflight;
  auto requeue_call = [&](Call* c, const std::string& reason) -> Status {
    for (const rpc::Task& t : c->request.tasks()) {
      auto rec = store.Requeue(t.id(), reason);
      if (!rec.ok()) return rec.status();
    }
    return Status::Ok();
  };
  Status failure;
  bool cancelled = false;
  // One transaction at a time, begun when something is to be written.
  bool in_tx = false;
  auto begin = [&]() {
    if (!in_tx && failure.ok()) {
      failure = store.Begin();
      in_tx = failure.ok();
    }
    return failure.ok();
  };
  auto commit = [&]() {
    if (!in_tx) return;
    in_tx = false;
    if (Status s = store.Commit(); !s.ok() && failure.ok()) failure = s;
  };
  auto start = [&](std::unique_ptr<Call> call) {
    Call* raw = call.get();
    SetDeadline(raw->context, settings_);
    inflight[raw] = std::move(call);
    auto done = [this, raw](grpc::Status s) {
      raw->status = std::move(s);
      Finished(raw);
    };
    Worker& w = workers[raw->worker];
    if (raw->await) {
      w.stub->async()->AwaitRun(&raw->context, &raw->await_request, &raw->await_reply, done);
    } else {
      w.stub->async()->RunTasks(&raw->context, &raw->request, &raw->reply, done);
    }
  };

  // A resumed run: the workers still registered finish what the previous coordinator sent
  // them and record it; each is sent nothing new until it has (then what it did not run
  // goes back to pending).
  for (const auto& [id, n] : store.awaited()) {
    auto it = workers.find(id);
    if (it == workers.end() || it->second.gone) {
      if (begin()) failure = store.RequeueWorker(id, /*lost=*/false, "");
      continue;
    }
    log_("INFO", context(fmt::format("waiting for worker {} to finish its {} "
                                     "sub-task(s) in flight",
                                     id, n)));
    auto call = std::make_unique<Call>();
    call->worker = id;
    call->await = true;
    call->await_request.set_job_name(job_name_);
    call->await_request.set_run_id(run_id_);
    call->await_request.set_epoch(store.epoch());
    it->second.awaiting = true;
    start(std::move(call));
  }
  commit();

  while (true) {
    // Send while workers have room and sub-tasks wait. The dispatch is committed before
    // the calls start: a coordinator fenced off sends nothing.
    bool room = false;
    for (const auto& [id, w] : workers) {
      room = room || (eligible(id, w) && w.inflight < settings_.max_inflight_batches);
    }
    if (failure.ok() && !cancelled && room && store.pending() > 0 && begin()) {
      std::vector<std::unique_ptr<Call>> ready;
      bool dry = false;
      for (auto& [id, w] : workers) {
        while (failure.ok() && !dry && eligible(id, w) &&
               w.inflight < settings_.max_inflight_batches && store.pending() > 0) {
          auto batch = store.TakePending(settings_.batch_size, kBatchBytes, id);
          if (!batch.ok()) {
            failure = batch.status();
            break;
          }
          if (batch->empty()) {
            dry = true;
            break;
          }
          auto call = std::make_unique<Call>();
          call->worker = id;
          call->request.set_job_name(job_name_);
          call->request.set_run_id(run_id_);
          call->request.set_job_parameter(job_parameter_);
          if (workers_record) {
            call->request.set_worker_records(true);
            call->request.set_max_attempts(static_cast<uint32_t>(settings_.max_attempts));
            call->request.set_epoch(store.epoch());
          }
          for (StoredTask& t : *batch) {
            rpc::Task* out = call->request.add_tasks();
            out->set_id(t.id);
            out->set_name(std::move(t.name));
            out->set_payload(std::move(t.payload));
            out->set_attempt(static_cast<uint32_t>(t.attempt));
          }
          ++w.inflight;
          ready.push_back(std::move(call));
        }
      }
      commit();
      // Fewer pending than counted (the counts trail the store): the store's count then.
      if (dry && failure.ok()) failure = store.Reload(/*pending_only=*/true);
      for (auto& call : ready) {
        if (failure.ok()) {
          start(std::move(call));
        } else {
          --workers[call->worker].inflight;
        }
      }
    }
    if (inflight.empty()) {
      if (!failure.ok() || cancelled) break;
      // Workers record what they map, and the replies count it; before the run ends, the
      // store confirms that nothing is pending.
      if (workers_record && store.pending() <= 0) {
        if (Status s = store.Reload(/*pending_only=*/true); !s.ok()) {
          failure = s;
          break;
        }
        if (store.pending() > 0) continue;
      }
      if (store.pending() <= 0) break;  // every sub-task done
      // Sub-tasks wait and no worker can take them.
      failure = Status(
          StatusCode::kUnavailable,
          context(fmt::format("no live task worker for {} pending sub-task(s)", store.pending())));
      break;
    }
    bool woken = false;
    std::vector<Call*> done = AwaitCompletions(&woken, &cancelled, [&] {
      for (auto& [c, _] : inflight) c->context.TryCancel();
    });
    for (Call* c : done) {
      std::unique_ptr<Call> owned = std::move(inflight[c]);
      inflight.erase(c);
      Worker& w = workers[c->worker];
      if (c->await) {
        w.awaiting = false;
      } else {
        --w.inflight;
      }
      if (!failure.ok() || cancelled) continue;
      if (!c->status.ok()) {
        // The worker is gone or broken: its batches go elsewhere.
        const std::string why =
            c->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                ? fmt::format("did not answer within task.rpc.deadline.ms ({} ms)",
                              settings_.rpc_deadline_ms)
                : fmt::format("failed an RPC ({})", c->status.error_message());
        if (!w.gone) {
          log_("WARN", context(fmt::format("worker {} {}; its sub-tasks go to the "
                                           "other workers",
                                           c->worker, why)));
        }
        w.gone = true;
        if (!begin()) continue;
        const std::string reason = fmt::format("worker {} lost: {}", c->worker, why);
        if (c->await) {
          failure = store.RequeueWorker(c->worker, /*lost=*/true, reason);
        } else if (Status s = requeue_call(c, reason); !s.ok()) {
          failure = s;
        } else if (workers_record) {
          failure = store.Reload();  // it may have recorded some before it stopped
        }
        continue;
      }
      if (c->await) {
        // It ran and recorded all it will: what it did not run goes back, not as an attempt.
        if (begin()) failure = store.RequeueWorker(c->worker, /*lost=*/false, "");
        continue;
      }
      auto log_outcome = [&](const rpc::TaskOutcome& o, TaskStore::Recorded rec) {
        if (metrics_ != nullptr) {
          if (rec == TaskStore::Recorded::kFirst) metrics_->subtasks_succeeded.Inc();
          if (rec == TaskStore::Recorded::kFailed) metrics_->subtasks_failed.Inc();
          if (rec == TaskStore::Recorded::kRetry) metrics_->subtasks_retried.Inc();
        }
        if (rec == TaskStore::Recorded::kRetry) {
          log_("WARN", context(fmt::format("sub-task {} failed on {} (retried): {}", o.id(),
                                           c->worker, o.data())));
        } else if (rec == TaskStore::Recorded::kFailed) {
          log_("WARN", context(fmt::format("sub-task {} failed on {} after {} attempt(s): {}",
                                           o.id(), c->worker, settings_.max_attempts, o.data())));
        }
      };
      bool whole = c->reply.outcomes_size() == c->request.tasks_size();
      if (workers_record) {
        for (const rpc::TaskOutcome& o : c->reply.outcomes()) {
          std::optional<TaskStore::Recorded> rec = FromProto(o.recorded());
          if (!rec) {
            whole = false;  // not recorded: sent again below
            continue;
          }
          store.Count(*rec, static_cast<int64_t>(o.mapped_count()));
          log_outcome(o, *rec);
        }
      } else {
        std::vector<TaskStore::Outcome> outcomes;
        outcomes.reserve(static_cast<size_t>(c->reply.outcomes_size()));
        for (const rpc::TaskOutcome& o : c->reply.outcomes()) {
          outcomes.push_back({o.id(), o.success(), o.data()});
        }
        if (!begin()) continue;
        auto recorded = store.RecordAll(outcomes);
        if (!recorded.ok()) {
          failure = recorded.status();
          continue;
        }
        for (int i = 0; i < c->reply.outcomes_size() && failure.ok(); ++i) {
          const rpc::TaskOutcome& o = c->reply.outcomes(i);
          const TaskStore::Recorded rec = (*recorded)[static_cast<size_t>(i)];
          if (rec == TaskStore::Recorded::kFirst) {
            for (const rpc::MappedTasks& m : o.mapped()) {
              if (Status s = store.Add(m.name(), m.payloads()); !s.ok()) failure = s;
            }
          }
          log_outcome(o, rec);
        }
      }
      // Sub-tasks a partial reply left out (the worker stopped midway) go back.
      if (whole) continue;
      std::set<uint64_t> answered;
      for (const rpc::TaskOutcome& o : c->reply.outcomes()) {
        if (!workers_record || FromProto(o.recorded())) answered.insert(o.id());
      }
      for (const rpc::Task& t : c->request.tasks()) {
        if (answered.count(t.id()) == 0 && begin()) {
          (void)store.Requeue(t.id(), "no outcome in the reply");
        }
      }
    }
    commit();
    if (woken && failure.ok() && !cancelled) {
      if (Status s = refresh(); !s.ok()) {
        log_("WARN", context("listing the task workers: " + s.ToString()));
      }
    }
    // A worker gone (its node went, a call failed or passed its deadline): its other calls
    // end now, and are requeued when they complete.
    if (failure.ok() && !cancelled) {
      for (auto& [c, _] : inflight) {
        if (workers[c->worker].gone) c->context.TryCancel();
      }
    }
    if (!failure.ok() && !cancelled) {
      cancelled = true;  // stop what is in flight, then return the failure
      for (auto& [c, _] : inflight) c->context.TryCancel();
    }
  }
  counts_ =
      RunCounts{store.total(), store.done() - store.failed(), store.failed(), store.retried()};
  if (!failure.ok()) return failure;
  {
    MutexLock lock(&mu_);
    if (cancelled_) return Status(StatusCode::kCancelled, context("cancelled: " + cancel_reason_));
  }
  if (auto* mr = dynamic_cast<MapReduceJob*>(&job)) {
    StoreResults results(store);
    TaskResult red = CallFenced([&] {
      mr->Reduce(root, results);
      return TaskResult{true, ""};
    });
    if (!red.success) return Internal(context("Reduce " + red.data));
    return Status::Ok();
  }
  if (store.failed() > 0) {
    return Internal(context(fmt::format("{} of {} sub-task(s) failed after {} attempt(s)",
                                        store.failed(), store.total(), settings_.max_attempts)));
  }
  return Status::Ok();
}

}  // namespace elasticjob::task
