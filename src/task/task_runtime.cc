#include "task/task_runtime.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>

#include "election/leader_node.h"
#include "infra/log.h"
#include "instance/job_instance.h"
#include "reg/bounded_removal.h"
#include "task/postgresql/pg_task_store.h"
#include "task/task_node.h"
#include "tracing/events/tracing_url.h"

namespace elasticjob::task {

namespace {

class LeaderStrategy final : public JobShardingStrategy {
 public:
  explicit LeaderStrategy(std::string self) : self_(std::move(self)) {}
  std::string type() const override { return TaskRuntime::kStrategyType; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view /*job_name*/,
                                           int sharding_total_count) const override {
    std::vector<ShardingAssignment> out;
    if (instances.empty()) return out;
    std::string owner = self_;
    if (std::find(instances.begin(), instances.end(), self_) == instances.end()) {
      owner = SortInstancesAsLeader(instances).front();
    }
    for (const std::string& i : instances) {
      ShardingAssignment a{i, {}};
      if (i == owner) {
        for (int item = 0; item < sharding_total_count; ++item) a.items.push_back(item);
      }
      out.push_back(std::move(a));
    }
    return out;
  }

 private:
  const std::string self_;
};

}  // namespace

TaskRuntime::TaskRuntime(RegistryCenter& registry, std::shared_ptr<TaskJob> job,
                         JobConfiguration config, std::string server_ip, std::string rpc_address,
                         std::string task_store, std::shared_ptr<metrics::JobMetrics> metrics,
                         infra::JobLogger log)
    : registry_(registry),
      job_(std::move(job)),
      config_(std::move(config)),
      server_ip_(std::move(server_ip)),
      rpc_address_(rpc_address.empty() ? "127.0.0.1:0" : std::move(rpc_address)),
      task_store_(std::move(task_store)),
      metrics_(std::move(metrics)),
      log_(std::move(log)) {
  auto ip = instance::DetectIp(server_ip_);
  instance_id_ =
      instance::JobInstance::For(ip.ok() ? *ip : "127.0.0.1", static_cast<long>(getpid()))
          .instance_id;
  strategy_ = std::make_shared<LeaderStrategy>(instance_id_);
}

TaskRuntime::~TaskRuntime() { Join(); }

const std::string& TaskRuntime::endpoint() const {
  static const std::string kNone;
  return server_ != nullptr ? server_->address() : kNone;
}

Status TaskRuntime::Start() {
  const std::string& name = config_.job_name;
  if (job_ == nullptr || (dynamic_cast<BroadcastJob*>(job_.get()) == nullptr &&
                          dynamic_cast<MapJob*>(job_.get()) == nullptr)) {
    return InvalidArgument(
        fmt::format("job '{}': a task job is a BroadcastJob, MapJob or MapReduceJob", name));
  }
  if (config_.sharding_total_count != 1) {
    return InvalidArgument(
        fmt::format("job '{}': shardingTotalCount: a task job has one item (got {})", name,
                    config_.sharding_total_count));
  }
  auto settings = TaskSettings::FromProps(config_.props);
  if (!settings.ok()) return settings.status().WithContext(fmt::format("job '{}'", name));
  settings_ = *settings;
  if (!task_store_.empty()) {
    auto url = tracing::ParseTracingUrl(task_store_);
    if (!url.ok() || url->kind != tracing::TracingUrl::Kind::kPostgreSql) {
      return InvalidArgument(fmt::format("job '{}': task_store: '{}' is not a postgresql:// URL{}",
                                         name, tracing::RedactUrl(task_store_),
                                         url.ok() ? "" : " (" + url.status().message() + ")"));
    }
  }
  std::unique_ptr<PgOutcomeWriter> writer;
  if (!task_store_.empty()) {
    auto created = PgOutcomeWriter::Create(task_store_);
    if (!created.ok()) return created.status().WithContext(fmt::format("job '{}'", name));
    writer = std::move(created).value();
  }
  auto server = WorkerServer::Start(
      rpc_address_,
      std::make_unique<WorkerService>(job_, name, instance_id_, settings_, std::move(writer)));
  if (!server.ok()) return server.status().WithContext(fmt::format("job '{}'", name));
  server_ = std::move(server).value();
  if (Status s = Register(); !s.ok()) {
    server_->Shutdown(std::chrono::milliseconds(0));
    server_.reset();
    return s.WithContext(fmt::format("job '{}': registering the task worker", name));
  }
  {
    MutexLock lock(&mu_);
    events_ = std::make_shared<Events>();
  }
  connection_ = registry_.AddConnectionStateListener(events_->strand, [this](ConnectionState s) {
    if (s == ConnectionState::kLost) {
      // The leadership went with the session: another instance may start the job's next run
      // while this one would go on. The local store cannot hand the run over: it ends.
      MutexLock lock(&mu_);
      if (running_ != nullptr) {
        running_->Cancel(
            task_store_.empty()
                ? "the registry session expired during the run, so another instance may lead "
                  "the job now; the local task store cannot hand the run over: the next "
                  "trigger runs it from the root"
                : "the registry session expired during the run, so another instance may lead "
                  "the job now; the run stays in the shared task store, and the next trigger "
                  "resumes it");
      }
      return;
    }
    // A new session lost the ephemeral node: register again.
    if (s != ConnectionState::kReconnected) return;
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
    }
    if (Status st = Register(); !st.ok()) {
      log_("WARN", fmt::format("job '{}': task worker not registered again: {}", config_.job_name,
                               st.ToString()));
    }
  });
  // A new leader, or the coordinator's instance gone: a run it left is seen at once.
  const std::string leader = "/" + config_.job_name + "/" + std::string(election::kLeaderInstance);
  auto on_change = [this](const TreeEvent&) { LeftRunNoticed(); };
  if (auto w = registry_.Watch(leader, events_->strand, on_change); w.ok()) {
    leader_watch_ = std::move(w).value();
  }
  if (auto w = registry_.Watch(InstancesPath(config_.job_name), events_->strand, on_change);
      w.ok()) {
    instances_watch_ = std::move(w).value();
  }
  return Status::Ok();
}

TaskRuntime::LeftRun TaskRuntime::DecideLeftRun(std::string* run_id) {
  const std::string& job = config_.job_name;
  {
    MutexLock lock(&mu_);
    if (stopped_ || running_ != nullptr) return LeftRun::kNone;  // a run here sees it itself
  }
  auto run = registry_.GetDirectly(RunPath(job));
  if (!run.ok()) return LeftRun::kNone;
  auto leader = registry_.GetDirectly("/" + job + "/" + std::string(election::kLeaderInstance));
  if (!leader.ok() || *leader != instance_id_) return LeftRun::kNone;
  // `{job}@{coordinator's instance id}@{ms}` (Execute).
  const size_t last = run->rfind('@');
  if (run->compare(0, job.size() + 1, job + "@") != 0 || last == std::string::npos ||
      last <= job.size()) {
    return LeftRun::kNone;  // not a run id of ours
  }
  const std::string coordinator = run->substr(job.size() + 1, last - job.size() - 1);
  // Ours: a run of this instance ends by removing the node, or was handed over when its
  // session expired (the next trigger resumes it, as the cancellation said).
  if (coordinator == instance_id_) return LeftRun::kNone;
  auto live = registry_.GetChildrenKeysDirectly(InstancesPath(job));
  if (!live.ok()) return LeftRun::kNone;
  if (std::find(live->begin(), live->end(), coordinator) != live->end()) {
    return LeftRun::kNone;  // still running it there
  }
  if (config_.failover) return LeftRun::kNone;  // the failover of the item runs it
  *run_id = *run;
  const bool resumable = !task_store_.empty() && dynamic_cast<MapJob*>(job_.get()) != nullptr;
  return resumable ? LeftRun::kTrigger : LeftRun::kWarn;
}

void TaskRuntime::LeftRunNoticed() {
  std::string run;
  const LeftRun action = DecideLeftRun(&run);
  if (action == LeftRun::kNone || run == left_run_noticed_) return;
  left_run_noticed_ = run;
  const std::string& job = config_.job_name;
  if (action == LeftRun::kWarn) {
    log_("WARN",
         fmt::format(
             "job '{}': run {} was lost with its coordinator and "
             "cannot be resumed ({}); the next trigger runs the job "
             "from the root: `elasticjob job trigger {}` runs it now",
             job, run,
             task_store_.empty() ? "the local task store" : "a broadcast keeps no sub-tasks", job));
    return;
  }
  // The existing "run now" (ElasticJob's trigger node): the run resumes from the store.
  Status s = registry_.Persist("/" + job + "/trigger/" + instance_id_, "");
  log_(s.ok() ? "INFO" : "WARN",
       s.ok() ? fmt::format("job '{}': run {} was left by its coordinator; this "
                            "instance leads now and resumes it at once",
                            job, run)
              : fmt::format("job '{}': run {} was left by its coordinator and is not "
                            "resumed at once ({}): the next trigger resumes it, or "
                            "`elasticjob job trigger {}` now",
                            job, run, s.ToString(), job));
}

Status TaskRuntime::Register() {
  return registry_.PersistEphemeral(WorkerPath(config_.job_name, instance_id_), server_->address());
}

void TaskRuntime::Stop() {
  MutexLock lock(&mu_);
  stopped_ = true;
  if (running_ != nullptr) running_->Cancel("the job is stopping");
}

void TaskRuntime::Join(std::chrono::steady_clock::time_point deadline) {
  Stop();
  connection_.reset();
  std::shared_ptr<Events> events;
  {
    MutexLock lock(&mu_);
    events = std::move(events_);
  }
  leader_watch_.reset();  // before the strand they deliver on goes
  instances_watch_.reset();
  events.reset();  // waits for its deliveries, unless a run still holds it
  if (server_ != nullptr) {
    // Ephemeral: it goes with the session if the registry does not answer in time.
    (void)reg::RemoveWithin(*reg::CoordinatorRef(registry_),
                            {WorkerPath(config_.job_name, instance_id_)},
                            reg::LeaveDeadline(deadline));
    server_->Shutdown(std::chrono::milliseconds(1000));
    server_.reset();
  }
}

Result<std::vector<WorkerEndpoint>> TaskRuntime::LiveWorkers() {
  const std::string& job = config_.job_name;
  auto instances = registry_.GetChildrenKeysDirectly(InstancesPath(job));
  if (!instances.ok()) return instances.status();
  auto workers = registry_.GetChildrenKeysDirectly(WorkersPath(job));
  if (!workers.ok()) {
    if (workers.status().code() == StatusCode::kNotFound) return std::vector<WorkerEndpoint>{};
    return workers.status();
  }
  std::set<std::string> live(instances->begin(), instances->end());
  std::vector<WorkerEndpoint> out;
  for (const std::string& w : *workers) {
    if (live.count(w) == 0) continue;  // its instance left: not a worker any more
    auto address = registry_.GetDirectly(WorkerPath(job, w));
    if (!address.ok()) continue;  // gone meanwhile
    out.push_back(WorkerEndpoint{w, *address});
  }
  return out;
}

Result<std::unique_ptr<TaskStore>> TaskRuntime::OpenSharedStore(const std::string& previous,
                                                                std::string* run_id) {
  const std::string& job = config_.job_name;
  auto store = PgTaskStore::Connect(task_store_, job, settings_.max_attempts);
  if (!store.ok()) return store.status();
  if (!previous.empty()) {
    // The sub-tasks in flight on a worker still registered stay with it.
    auto live = LiveWorkers();
    if (!live.ok()) return live.status().WithContext("listing the task workers");
    std::vector<std::string> live_ids;
    for (const WorkerEndpoint& w : *live) live_ids.push_back(w.instance_id);
    auto resumed = (*store)->Resume(previous, live_ids);
    if (!resumed.ok()) return resumed.status();
    if (*resumed) {
      int64_t awaited = 0;
      for (const auto& [_, n] : (*store)->awaited()) awaited += n;
      log_("WARN", fmt::format("job '{}': run {} was left by its coordinator; "
                               "resuming it from the task store ({} of {} sub-task(s) "
                               "done, {} in flight on live workers awaited, {} in "
                               "flight on workers gone sent again)",
                               job, previous, (*store)->done(), (*store)->total(), awaited,
                               (*store)->redispatched()));
      *run_id = previous;
      return std::unique_ptr<TaskStore>(std::move(store).value());
    }
    log_("WARN", fmt::format("job '{}': run {} was lost, and the task store has no "
                             "run of that id past its root task; run {} starts "
                             "from the root",
                             job, previous, *run_id));
  }
  if (Status s = (*store)->Create(*run_id); !s.ok()) return s;
  return std::unique_ptr<TaskStore>(std::move(store).value());
}

void TaskRuntime::Execute(const ShardingContext& context) {
  if (context.sharding_item != 0) return;
  {
    MutexLock lock(&mu_);
    if (stopped_) throw std::runtime_error("job is stopping");
  }
  const std::string& job = config_.job_name;
  const auto start = std::chrono::steady_clock::now();
  const std::string new_run_id =
      fmt::format("{}@{}@{}", job, instance_id_,
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
  std::string run_id = new_run_id;
  std::string previous;
  if (auto p = registry_.GetDirectly(RunPath(job)); p.ok()) previous = *p;
  std::unique_ptr<TaskStore> store;
  if (!task_store_.empty() && dynamic_cast<MapJob*>(job_.get()) != nullptr) {
    // A shared store: the run a lost coordinator left is resumed from it.
    auto opened = OpenSharedStore(previous, &run_id);
    if (!opened.ok()) {
      log_("WARN", fmt::format("job '{}': {}", job, opened.status().ToString()));
      throw std::runtime_error(opened.status().ToString());
    }
    store = std::move(opened).value();
  } else if (!previous.empty()) {
    // A run left by a coordinator that died (the local store died with it): say so, then
    // run from the root.
    log_("WARN", fmt::format("job '{}': run {} was lost with its coordinator (the "
                             "local task store keeps no sub-task beyond it); run {} "
                             "starts from the root",
                             job, previous, run_id));
  }
  (void)registry_.Persist(RunPath(job), run_id);
  Coordinator coordinator(
      *job_, job, context.job_parameter, instance_id_, run_id, settings_,
      [this] { return LiveWorkers(); }, std::move(store));
  coordinator.set_metrics(metrics_.get());
  coordinator.set_log(log_);
  coordinator.set_workflow(context.workflow);
  std::shared_ptr<Events> events;
  {
    MutexLock lock(&mu_);
    if (stopped_) throw std::runtime_error("job is stopping");
    running_ = &coordinator;
    events = events_;
  }
  // Workers joining or leaving wake the run; the events' one thread delivers.
  std::unique_ptr<Subscription> watch;
  if (events != nullptr) {
    auto w = registry_.Watch(InstancesPath(job), events->strand,
                             [&coordinator](const TreeEvent&) { coordinator.Wake(); });
    if (w.ok()) watch = std::move(w).value();
  }
  Status s = coordinator.Run();
  watch.reset();  // waits for a delivery in progress: none touches the coordinator after
  {
    MutexLock lock(&mu_);
    running_ = nullptr;
  }
  // A run handed over stays named for the next coordinator.
  if (!coordinator.handed_over()) (void)registry_.Remove(RunPath(job));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  const RunCounts& c = coordinator.counts();
  const std::string counts = fmt::format(
      "run {}: {} in {} ms; sub-tasks created={} succeeded={} failed={} retried={}", run_id,
      s.ok() ? "done" : s.ToString(), ms, c.created, c.succeeded, c.failed, c.retried);
  log_(s.ok() ? "INFO" : "WARN", fmt::format("job '{}' {}", job, counts));
  // Tracing on: the same line in the run's execution log (JOB_EXECUTION_LOG_LINE), where
  // `elasticjob trace logs` and the console show it with the execution.
  if (context.log_sink != nullptr) {
    context.log().Log(s.ok() ? LogLevel::kInfo : LogLevel::kWarn, counts);
  }
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

}  // namespace elasticjob::task
