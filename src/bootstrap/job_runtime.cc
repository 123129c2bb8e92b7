#include "bootstrap/job_runtime.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "bootstrap/job_code.h"
#include "bootstrap/runnable_check.h"
#include "elasticjob/schedule/fixed_rate.h"
#include "election/leader_node.h"
#include "infra/change_epoch.h"
#include "infra/log.h"
#include "metrics/metrics_impl.h"
#include "reg/bounded_removal.h"
#include "sharding/sharding_node.h"
#include "tracing/events/event_bus.h"
#include "tracing/events/job_tracing.h"
#include "workflow/node_job.h"

namespace elasticjob::bootstrap {

namespace {

// A cron run picked up later than this after its fire time is skipped: a pause that long
// (SIGSTOP, a debugger, a VM migration) may have outlived the session, whose items others
// then run. A second at most (Quartz-like: late fires are skipped), a third of the session
// timeout for short sessions (an expiry needs two thirds of it without the server).
std::chrono::milliseconds OverdueBound(std::chrono::milliseconds session_timeout) {
  const std::chrono::milliseconds cap = std::chrono::seconds(1);
  return session_timeout.count() > 0 ? std::min(cap, session_timeout / 3) : cap;
}

}  // namespace

// Process-wide machinery, held by every job of one Clock and released with the last one.
// Members are destroyed in reverse order: the timer stops before the pools it posts to.
struct SharedRuntime {
  explicit SharedRuntime(Clock& clock)
      : triggers(2),
        items(ItemThreads()),
        timer(clock, triggers, /*standby=*/2),
        board(timer, items, kLaunchDrains, ItemThreads(), triggers,
              dynamic_cast<SimulatedClock*>(&clock) == nullptr ? kLaunchWarm
                                                               : std::chrono::microseconds(0)) {
    triggers.set_thread_name("ej-trigger");
    items.set_thread_name("ej-item");
  }
  // Workers that start a fire time's prepared items together (LaunchBoard): one per core;
  // as many as the item pool has when user code is slow.
  static constexpr int kLaunchDrains = 2;
  // How long before its fire time a large batch of starts is handed to its drainers, which
  // fetch what it reads meanwhile (LaunchBoard): a worker's wake-up takes 0.05-0.3 ms.
  static constexpr std::chrono::microseconds kLaunchWarm{400};
  // Twice a job's own bound (ItemLimitOf: CPU x 2), so one slow job never holds every thread.
  static int ItemThreads() {
    return std::max(kLaunchDrains, 4 * static_cast<int>(std::thread::hardware_concurrency()));
  }
  // Coordination: due triggers first (PostUrgent), then the jobs' listener strands, the
  // registry work around runs, sharding and failover. Short tasks, none waits for user code.
  ThreadPool triggers;
  ThreadPool items;  // user code
  trigger::TimerScheduler timer;
  trigger::LaunchBoard board;  // prepared cron triggers' item starts
  trigger::PrepareLead lead;   // how long before their fire times they are prepared

  static std::shared_ptr<SharedRuntime> For(Clock& clock) {
    static Mutex mu;
    static auto* runtimes = new std::map<Clock*, std::weak_ptr<SharedRuntime>>;
    MutexLock lock(&mu);
    auto rt = (*runtimes)[&clock].lock();
    if (!rt) {
      rt = std::make_shared<SharedRuntime>(clock);
      (*runtimes)[&clock] = rt;
    }
    return rt;
  }
};

void JobRuntime::Log(std::string_view level, std::string_view message) const {
  infra::LogLine(options_.logger.get(), level,
                 {.job = storage_.path().job_name(), .item = std::nullopt, .instance = {}},
                 message);
}

JobRuntime::LastHold::~LastHold() {
  if (shared == nullptr) return;
  // Maybe the last hold: its destruction joins the pools, perhaps from one of their threads.
  std::thread([shared = std::move(shared)]() mutable { shared.reset(); }).detach();
}

JobRuntime::JobRuntime(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                       std::string job_type, JobConfiguration config, BootstrapOptions options,
                       std::shared_ptr<JobItemExecutor> item_executor)
    : coordinator_(registry),
      registry_(*coordinator_),
      gate_(std::make_shared<Gate>(options.logger)),
      gated_(registry_, gate_),
      job_(std::move(job)),
      job_type_(std::move(job_type)),
      item_executor_(std::move(item_executor)),
      config_(std::move(config)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::System()),
      storage_(gated_, config_.job_name),
      strategies_(JobShardingStrategyRegistry::WithBuiltins(clock_)),
      monitor_port_(config_.monitor_port),
      metrics_(metrics::JobMetricsOf(options_.metrics, config_.job_name)) {
  if (metrics_ != nullptr) {
    metrics_->starting.fetch_add(1);
    metrics_starting_.store(true);
  }
}

JobRuntime::~JobRuntime() {
  ResolveStarting(false);
  Unscheduled();
}

void JobRuntime::ResolveStarting(bool scheduled) {
  if (metrics_ == nullptr || !metrics_starting_.exchange(false)) return;
  if (scheduled) {
    metrics_->scheduled.fetch_add(1);
    metrics_scheduled_.store(true);
  }
  metrics_->starting.fetch_sub(1);
}

void JobRuntime::Unscheduled() {
  if (metrics_ != nullptr && metrics_scheduled_.exchange(false)) metrics_->scheduled.fetch_sub(1);
}

Status JobRuntime::RegisterStrategies() {
  std::vector<std::shared_ptr<const JobShardingStrategy>> given = options_.sharding_strategies;
  if (options_.sharding_strategy != nullptr &&
      std::find(given.begin(), given.end(), options_.sharding_strategy) == given.end()) {
    given.push_back(options_.sharding_strategy);
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (given[i] == nullptr) {
      return InvalidArgument(fmt::format("sharding_strategies[{}]: null", i));
    }
    std::string type;
    try {
      type = given[i]->type();
    } catch (const std::exception& e) {
      return InvalidArgument(fmt::format("sharding strategy: type() threw: {}", e.what()));
    } catch (...) {
      return InvalidArgument("sharding strategy: type() threw an unknown exception");
    }
    if (Status s = strategies_.Register(std::make_unique<SharedStrategy>(given[i], type)); !s.ok())
      return s;
  }
  if (options_.sharding_strategy != nullptr && !config_.job_sharding_strategy_type) {
    config_.job_sharding_strategy_type = options_.sharding_strategy->type();
  }
  return Status::Ok();
}

Status JobRuntime::BuildTypedJob(const std::string& instance_id) {
  JobItemExecutorFactory factory;
  std::shared_ptr<JobItemExecutor> fixed = item_executor_;
  if (job_ != nullptr) {
    fixed = std::make_shared<executor::SimpleJobExecutor>(job_);
  } else if (fixed == nullptr) {
    auto found = executor::FindJobType(job_type_, options_.job_types);
    if (!found.ok()) return found.status();
    factory = *std::move(found);
  }
  auto typed = executor::TypedJob::Create(
      std::move(factory), std::move(fixed), config_, instance_id,
      [weak = weak_from_this()] {
        auto self = weak.lock();
        return self != nullptr && self->EligibleForJobRunning();
      },
      error_handler::NotificationSender::Shared(), options_.logger);
  if (!typed.ok()) return typed.status();
  typed_ = *std::move(typed);
  return Status::Ok();
}

bool JobRuntime::EligibleForJobRunning() {
  if (IsShutdown() || IsPaused()) return false;
  auto need = sharding_->IsNeedSharding();
  return need.ok() && !*need;
}

void JobRuntime::ApplyConfig(const JobConfiguration& config) {
  if (typed_ != nullptr) {
    if (Status s = typed_->Update(config); !s.ok()) {
      Log("WARN", fmt::format("job '{}': {} (keeping the last good job type settings "
                              "and error handler)",
                              config_.job_name, s.ToString()));
    }
  }
  auto limit = ItemLimitOf(config);
  if (!limit.ok()) {
    Log("WARN",
        fmt::format("job '{}': {} (keeping at most {} items at once)", config_.job_name,
                    limit.status().ToString(), limiter_ != nullptr ? limiter_->limit() : 0));
  } else if (limiter_ != nullptr && limiter_->limit() != *limit) {
    limiter_->SetLimit(*limit);
  }
}

Status JobRuntime::CheckRunnable(const JobConfiguration& config) {
  std::set<std::string> listener_types;
  for (const auto& [type, factory] : options_.listener_types) listener_types.insert(type);
  return config::CheckRunnable(config, strategies_, listener_types);
}

Status JobRuntime::Start(bool scheduled, StartHints hints) {
  Status s = StartSteps(scheduled, hints);
  ResolveStarting(s.ok());
  return s;
}

Status JobRuntime::StartSteps(bool scheduled, StartHints hints) {
  const std::string& name = config_.job_name;
  auto context = [&](const Status& s) { return s.WithContext(fmt::format("job '{}'", name)); };
  {
    MutexLock lock(&mu_);
    if (start_called_ || stopped_) {
      return FailedPrecondition(fmt::format(
          "job '{}': {}", name,
          stopped_ ? "started after it was stopped: a shut-down job is never started again"
                   : "started twice: a job is started once"));
    }
    start_called_ = true;
  }
  if (Status s = ValidateJobConfiguration(config_); !s.ok()) return context(s);
  if (Status s = RegisterStrategies(); !s.ok()) return context(s);
  // Both type names before anything is written: a bad one fails here, not at every trigger.
  if (auto strategy = strategies_.Find(config_.job_sharding_strategy_type.value_or(""));
      !strategy.ok()) {
    return context(strategy.status());
  }
  if (auto limit = ItemLimitOf(config_); !limit.ok()) return context(limit.status());
  const bool has_cron = config_.cron.has_value() && !config_.cron->empty();
  if (scheduled && !has_cron && config_.fixed_rate.count() == 0 &&
      config_.fixed_delay.count() == 0) {
    return InvalidArgument(fmt::format(
        "job '{}': cron: a scheduled job needs a cron, a fixedRate or a fixedDelay", name));
  }
  if (!scheduled && (config_.fixed_rate.count() > 0 || config_.fixed_delay.count() > 0)) {
    return InvalidArgument(
        fmt::format("job '{}': fixedRate/fixedDelay: a one-off job must not have one", name));
  }
  if (!scheduled && has_cron) {
    return InvalidArgument(fmt::format(
        "job '{}': cron: a one-off job must not have a cron (got '{}')", name, *config_.cron));
  }
  auto ip = instance::DetectIp(options_.server_ip);
  if (!ip.ok()) return context(ip.status());
  // The job type and its props, and the error handler's, before anything is written.
  if (Status s =
          BuildTypedJob(instance::JobInstance::For(*ip, static_cast<long>(getpid())).instance_id);
      !s.ok()) {
    return context(s);
  }
  std::string type_name = !options_.job_type_name.empty() ? options_.job_type_name
                          : !job_type_.empty()            ? job_type_
                          : item_executor_ != nullptr     ? item_executor_->type_name()
                                                          : "CPP_SIMPLE";
  config_service_ = std::make_unique<config::ConfigService>(
      storage_, clock_, ConfigYamlVersion::kV3_0_5, infra::JobLogger(options_.logger, name));
  bool created = false;  // this call's transaction created the job: no one else had it
  auto effective = config_service_->SetUp(type_name, config_, hints.seen_absent, &created);
  if (!effective.ok()) return effective.status();
  config_ = *effective;
  // The registry's config wins: its type names must be known here too.
  if (auto strategy = strategies_.Find(config_.job_sharding_strategy_type.value_or(""));
      !strategy.ok()) {
    return context(strategy.status().WithContext("the registry's configuration"));
  }
  if (options_.sharding_strategy != nullptr &&
      config_.job_sharding_strategy_type != options_.sharding_strategy->type()) {
    Log("WARN", fmt::format("job '{}': the registry's configuration names sharding "
                            "strategy '{}', not the options' '{}', which is not used",
                            name, config_.job_sharding_strategy_type.value_or(""),
                            options_.sharding_strategy->type()));
  }
  auto item_limit = ItemLimitOf(config_);
  if (!item_limit.ok())
    return context(item_limit.status().WithContext("the registry's configuration"));
  if (Status s = typed_->Update(config_); !s.ok()) {
    return context(s.WithContext("the registry's configuration"));
  }
  scheduled_ = scheduled;
  if (scheduled) {
    // The registry's config wins: it must still be a scheduled one.
    const bool no_cron = !config_.cron.has_value() || config_.cron->empty();
    const bool fixed_rate = no_cron && config_.fixed_rate.count() > 0;
    const bool fixed_delay = no_cron && !fixed_rate && config_.fixed_delay.count() > 0;
    auto cron = fixed_rate || fixed_delay ? Result<CronExpression>(InvalidArgument(""))
                                          : CronExpression::Parse(config_.cron.value_or(""));
    if (!fixed_rate && !fixed_delay && !cron.ok()) {
      return context(cron.status().WithContext("cron"));
    }
    auto tz = config_.time_zone ? TimeZone::Parse(*config_.time_zone)
                                : Result<TimeZone>(TimeZone::SystemDefault());
    if (!tz.ok()) return context(tz.status());
    MutexLock lock(&mu_);
    fixed_rate_ = fixed_rate ? config_.fixed_rate : std::chrono::milliseconds(0);
    fixed_delay_ = fixed_rate || cron.ok() ? kNoRate : config_.fixed_delay;
    if (cron.ok()) cron_ = *cron;
    cron_text_ = config_.cron.value_or("");
    zone_ = *tz;
    zone_text_ = config_.time_zone.value_or("");
  }
  // From now on a registry configuration naming what this instance cannot run (an unknown
  // strategy, item limit, error handler or listener type) is refused as a whole: the job
  // keeps its last good one, and goes on sharding with its strategy.
  config_service_->SetRunnableCheck([this](const JobConfiguration& c) { return CheckRunnable(c); });
  // Remember the registered config as good: the one this call wrote, if it created the job
  // (no request to read it back), else the registry's.
  (void)(created ? config_service_->AdoptWritten() : config_service_->LoadLastGood());

  shared_ = SharedRuntime::For(clock_);
  prepare_lead_ = &shared_->lead;
  notifier_ = std::make_unique<storage::ChangeNotifier>(shared_->triggers, shared_->timer, clock_);
  servers_ = std::make_unique<server::ServerService>(storage_, *ip);
  instance::InstanceRuntime runtime;  // runtime/{id}: what the console shows of the instance
  runtime.version = instance::LibraryVersion();
  runtime.hostname = tracing::HostName();
  runtime.pid = static_cast<long>(getpid());
  runtime.process_start_time = instance::ProcessStartTime();
  runtime.job_start_time =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  runtime.session_timeout_ms = registry_.session_timeout().count();
  instances_ = std::make_unique<instance::InstanceService>(
      storage_, *servers_, instance::JobInstance::For(*ip, runtime.pid), std::move(runtime),
      &clock_);
  const std::string& self = instances_->self().instance_id;
  leader_ = std::make_unique<election::LeaderService>(storage_, self);
  // The guard of a resharding around a fire (sharding_service.h): a trigger of a fire may
  // still run up to the overdue bound after it, and the flag takes a moment to reach us.
  sharding::FireTiming timing;
  timing.clock = &clock_;
  timing.late = OverdueBound(registry_.session_timeout()) + std::chrono::seconds(1);
  sharding_ = std::make_unique<sharding::ShardingService>(
      storage_, *config_service_, *leader_, *instances_, *servers_, strategies_, *notifier_, this,
      timing, infra::JobLogger(options_.logger, name));
  execution_ = std::make_unique<execution::ExecutionService>(
      storage_, self, infra::JobLogger(options_.logger, name));
  failover_ = std::make_unique<failover::FailoverService>(storage_, self);
  sharding_->set_metrics(metrics_.get());
  failover_->set_metrics(metrics_.get());
  reconcile_ =
      std::make_unique<reconcile::ReconcileService>(*config_service_, *leader_, *sharding_, clock_);
  auto types = executor::BuiltinJobListenerTypes(options_.logger);
  for (const auto& [type, factory] : options_.listener_types) {
    // A factory is user code: what it throws is its failure, not the caller's.
    types[type] = [factory = factory,
                   type = type](const JobConfiguration& c) -> Result<JobListener> {
      try {
        return factory(c);
      } catch (const std::exception& e) {
        return InvalidArgument(
            fmt::format("listener type '{}': factory threw: {}", type, e.what()));
      } catch (...) {
        return InvalidArgument(fmt::format("listener type '{}': factory threw", type));
      }
    };
  }
  auto listeners = executor::ResolveJobListeners(options_.listeners, config_, types);
  if (!listeners.ok()) return context(listeners.status());
  guarantee_ = std::make_unique<guarantee::GuaranteeService>(storage_);
  job_listeners_ = std::make_shared<executor::JobListeners>(
      GateListeners(*std::move(listeners), gate_), *guarantee_, shared_->timer, shared_->triggers,
      clock_, name, options_.logger);
  // User callbacks are fenced: an exception is logged, and nothing is called after Join.
  auto report = [this, gate = gate_, name = std::string(name),
                 fn = options_.on_item_run](const ItemRunReport& r) {
    if (!r.success) {
      MutexLock lock(&mu_);
      if (throw_wait_.active && throw_wait_.result.ok()) {
        throw_wait_.result =
            Internal(fmt::format("job '{}' item {} failed on {} "
                                 "(jobErrorHandlerType THROW): {}",
                                 name, r.item, r.instance_id, r.error));
      }
    }
    if (fn) Fenced(*gate, name, "on_item_run", fn, r);
  };
  limiter_ = std::make_shared<ItemLimiter>(shared_->items, *item_limit);
  // Workflow nodes' runs (docs/workflows.md): their reports go out on the trigger pool.
  instance_id_ = self;
  node_runs_ = std::make_shared<workflow::NodeRuns>(gated_, shared_->triggers, name,
                                                    infra::JobLogger(options_.logger, name));
  std::shared_ptr<const tracing::JobTracing> job_tracing;
  if (options_.tracer != nullptr) {
    auto bus = std::dynamic_pointer_cast<tracing::EventBus>(options_.tracer);
    if (bus == nullptr) {
      return InvalidArgument(fmt::format(
          "job '{}': BootstrapOptions.tracer: not a Tracer made by Tracer::Open", name));
    }
    job_tracing =
        std::make_shared<tracing::JobTracing>(std::move(bus), tracing::HostName(), *ip, clock_);
  }
  executor_ = std::make_unique<executor::JobExecutor>(
      *config_service_, *sharding_, *execution_, *failover_, self,
      std::make_shared<JobCode>(
          typed_,
          std::make_shared<workflow::NodeJob>(typed_, node_runs_,
                                              [this] {
                                                auto c = config_service_->LoadLastGood();
                                                return c.ok() ? c->job_parameter : std::string();
                                              }),
          gate_),
      *limiter_, shared_->triggers, clock_, std::move(report), job_listeners_,
      [this] { return RegistryChanges(); }, OverdueBound(registry_.session_timeout()),
      std::move(job_tracing),
      [this] {
        if (!BeginTask()) return;
        shared_->triggers.Post([self = shared_from_this()] { self->run_path_->Failover(); });
      },
      [this] { return DueFire(); });
  executor::RunPath::Owner& owner = *this;
  run_path_ =
      std::make_unique<executor::RunPath>(*executor_, owner, clock_, std::string(name), self);
  executor_->set_metrics(metrics_.get());
  executor_->set_logger(infra::JobLogger(options_.logger, std::string(name)));
  executor_->set_lease_source(&registry_);
  // A retry's wait and an attempt's timeout refer to the executor: such a task of a run
  // abandoned at the shutdown deadline runs only while this runtime (and so the executor)
  // is still there; once it is gone the task does nothing (docs/scheduling.md).
  executor_->set_timer({[shared = shared_.get(), weak = weak_from_this()](
                            Clock::WallTime at, std::function<void()> task) {
                          // Relaxed: a timeout or a retry's wait, not a fire time.
                          return shared->timer.ScheduleAt(
                              at,
                              [weak, task = std::move(task)] {
                                if (auto alive = weak.lock()) task();
                              },
                              nullptr, trigger::TimerScheduler::kRelaxed);
                        },
                        [shared = shared_.get()](uint64_t id) { shared->timer.Cancel(id); }});
  listeners_ = std::make_unique<listener::ListenerManager>(
      listener::Services{storage_, *config_service_, *leader_, *servers_, *instances_, *sharding_,
                         *execution_, *failover_,
                         infra::JobLogger(options_.logger, std::string(name))},
      *this, config_.sharding_total_count);

  // The server, the instance (with its runtime/{id} node) and the resharding flag in one
  // multi-op: ElasticJob writes them one after another, a round trip and a disk sync on the
  // server each. A job this call has just created (no instance had it) goes further: it is
  // elected without the latch (LeaderService: its outcome is ours), and sharded without the
  // flag, its items given to this instance, the only one (ShardingService::
  // FirstShardingNodes), in that same multi-op; and its nodes are written before its cache
  // is loaded, so that the load reads each of them once, no watch of it fires for our own
  // writes, and its first fire has nothing to shard (docs/benchmarks.md). ElasticJob elects
  // through the latch (three containers, a sequential node, a read, the leader node, the
  // sequential node's delete) and shards at the first fire. A node someone made meanwhile
  // fails the multi-op, which then changes nothing: the nodes then go after the load,
  // elected through the latch, flag included, as for a job that was there. Started among
  // many (ScheduleAll), the multi-op goes grouped with theirs: one for many.
  const storage::NodeFill flag = {std::string(sharding::kNecessary), ""};
  std::vector<storage::NodeFill> online_nodes = {
      servers_->OnlineNode(!config_.disabled), instances_->OnlineNode(), instances_->RuntimeNode()};
  bool online = false;
  if (created && leader_->PrepareLeaderNode().ok()) {
    std::vector<std::string_view> present = election::LeaderService::LeaderNodeParents();
    present.push_back("config");
    std::vector<storage::NodeFill> created_nodes = online_nodes;
    created_nodes.push_back(leader_->LeaderNode());
    // A disabled server takes no items: its job keeps the flag, as ElasticJob's sharding
    // with no instance available leaves it. So does a strategy that fails (its error is
    // then the first fire's, as for any job).
    bool sharded = false;
    if (!config_.disabled) {
      if (auto nodes = sharding_->FirstShardingNodes(config_); nodes.ok()) {
        created_nodes.insert(created_nodes.end(), nodes->begin(), nodes->end());
        sharded = true;
      }
    }
    if (!sharded) created_nodes.push_back(flag);
    online = storage_.CreateJobNodes(created_nodes, present, hints.grouped).ok();
  }
  online_nodes.push_back(flag);  // the usual path writes the flag
  // Listeners first (ListenerManager.startAllListeners): one strand per job carries both
  // the subtree's events and the session's states, in the order the registry reports them.
  strand_ = std::make_unique<SerialExecutor>(shared_->triggers);
  auto w = gated_.WatchTree(
      storage_.path().FullPath(), *strand_, [this](const TreeEvent& e) { OnJobEvent(e); },
      storage_.path().CachePolicy());
  if (!w.ok()) return context(w.status());
  {
    MutexLock lock(&watch_mu_);
    watch_ = std::move(w).value();
    // Kept once set: a restart's watch (none today) would leave the first one's counter
    // still read, never freed under a reader.
    if (counter_owner_ == nullptr) counter_owner_ = watch_->change_counter();
    counter_.store(counter_owner_.get(), std::memory_order_release);
  }
  strand_->Post([this] { listeners_->EndOfReplay(); });  // Watch delivered its replay first
  connection_ = registry_.AddConnectionStateListener(
      *strand_, [this](ConnectionState s) { listeners_->OnConnectionState(s); });
  {
    MutexLock lock(&mu_);
    started_ = true;
  }
  // Start-up, as ElasticJob registers it (unless written above): the election, then the
  // nodes in one multi-op (a node someone else made or removed meanwhile fails it, and
  // changes nothing: then one by one, as ElasticJob does).
  if (!online) {
    if (Status s = leader_->ElectLeader(); !s.ok()) return context(s);
    if (!storage_.FillJobNodes(online_nodes, hints.grouped).ok()) {
      if (Status s = servers_->PersistOnline(!config_.disabled); !s.ok()) return context(s);
      if (Status s = instances_->PersistOnline(); !s.ok()) return context(s);
      if (Status s = sharding_->SetReshardingFlag(); !s.ok()) return context(s);
    }
  }
  ArmReconcile();
  bool delay_only;  // under mu_: a configuration change on the strand may reschedule already
  {
    MutexLock lock(&mu_);
    delay_only = !cron_.has_value() && fixed_rate_.count() == 0;
  }
  if (scheduled && config_.fixed_delay.count() > 0 && delay_only) {
    if (Status s = StartFixedDelay(); !s.ok()) return context(s);
  }
  if (scheduled) {
    MutexLock lock(&mu_);
    ArmNextLocked(clock_.WallNow());
  }
  OpenDumpPort();
  return Status::Ok();
}

void JobRuntime::OpenDumpPort() {
  if (monitor_port_ < 0) return;
  const DumpPortOptions& o = options_.dump_port;
  auto server = snapshot::DumpServer::Acquire(o.address, monitor_port_,
                                              {o.io_timeout, std::max(1, o.max_connections)});
  auto registration =
      server.ok() ? (*server)->Register(config_.job_name, registry_, options_.logger)
                  : Result<std::unique_ptr<snapshot::DumpServer::Registration>>(server.status());
  if (!registration.ok()) {
    Log("WARN", fmt::format("job '{}': {} (the job runs without a dump port)", config_.job_name,
                            registration.status().ToString()));
    return;
  }
  dump_ = std::move(registration).value();
}

Status JobRuntime::TriggerCluster() {
  {
    MutexLock lock(&mu_);
    if (!started_ || stopped_) {
      return FailedPrecondition(fmt::format("job '{}': not running", config_.job_name));
    }
  }
  // From the server: an instance that joined a moment ago must be triggered too.
  auto ids = gated_.GetChildrenKeysDirectly(storage_.path().FullPath("instances"));
  if (!ids.ok()) return ids.status();
  for (const auto& id : *ids) {
    if (Status s = storage_.CreateJobNodeIfNeeded("trigger/" + id); !s.ok()) return s;
  }
  return Status::Ok();
}

Status JobRuntime::TriggerClusterAndWait() {
  {
    MutexLock lock(&mu_);
    throw_wait_ = ThrowWait{true, false, Status::Ok()};
  }
  Status s = TriggerCluster();
  MutexLock lock(&mu_);
  if (s.ok()) {
    while (!throw_wait_.done && !stopped_) throw_cv_.Wait();
  }
  const ThrowWait ended = throw_wait_;
  throw_wait_ = ThrowWait{};
  if (!s.ok()) return s;
  if (!ended.done) {
    return Status(StatusCode::kCancelled,
                  fmt::format("job '{}': stopped before its run ended", config_.job_name));
  }
  return ended.result;
}

void JobRuntime::ArmNextLocked(Clock::WallTime after) {
  if (stopped_ || ((!cron_ || !zone_) && fixed_rate_.count() == 0 && fixed_delay_.count() == 0)) {
    return;
  }
  auto now = clock_.WallNow();
  // Fire times follow the cron from the last fire; if we fell behind, resume from now.
  // A fixed rate's are the cluster's common instants; a fixed delay's is the one the
  // registry names, once (docs/scheduling.md).
  const auto from = std::max(after, now - std::chrono::seconds(1));
  std::optional<Clock::WallTime> next;
  if (fixed_delay_.count() > 0) {
    if (!delay_ready_ || delay_next_ms_ <= delay_armed_ms_) return;  // armed already
    delay_armed_ms_ = delay_next_ms_;
    next = std::max(now, Clock::WallTime(std::chrono::duration_cast<Clock::WallTime::duration>(
                             std::chrono::milliseconds(delay_next_ms_ - delay_offset_ms_))));
  } else {
    next = fixed_rate_.count() > 0
               ? std::optional<Clock::WallTime>(FixedRateNextFireAfter(from, fixed_rate_))
               : cron_->NextFireTimeAfter(from, *zone_);
  }
  if (!next) return;  // the expression never fires again
  Clock::WallTime fire = *next;
  ++outstanding_;
  const uint64_t arming = ++arming_;
  // Worked out the process's lead ahead (OnPrepare; trigger/prepare_lead.h), started at the
  // fire time. The lead is at most three quarters of the time since the fire before (so that
  // run has ended, and the lane is free, when a short one's next is prepared) and at least the
  // base. Relaxed: the preparation has the lead to spare, so no thread waits on the CPU for it.
  const auto lead =
      std::max(shared_->lead.base(), std::min(shared_->lead.lead(), (fire - from) * 3 / 4));
  // Not before now: a claim is timed from when its preparation could start (a fire nearer
  // than the lead is prepared at once, and its claim did not take the part already gone).
  const Clock::WallTime due =
      std::max(now, fire - std::chrono::duration_cast<Clock::WallTime::duration>(lead));
  next_task_ = shared_->timer.ScheduleAt(
      due, [self = shared_from_this(), fire, arming, due] { self->OnPrepare(fire, arming, due); },
      nullptr, trigger::TimerScheduler::kRelaxed);
}

std::optional<Clock::WallTime> JobRuntime::DueFire() const {
  const auto ticks = due_fire_.load(std::memory_order_acquire);
  if (ticks == 0) return std::nullopt;
  return Clock::WallTime(Clock::WallTime::duration(ticks));
}

void JobRuntime::ArmReconcile() {
  MutexLock lock(&mu_);
  if (stopped_) return;
  // ElasticJob's ReconcileService runs once a minute.
  reconcile_task_ = shared_->timer.ScheduleAt(
      clock_.WallNow() + std::chrono::minutes(1),
      [self = shared_from_this()] {
        if (self->IsShutdown()) return;
        auto flagged = self->reconcile_->RunOneIteration();
        if (!flagged.ok() && flagged.status().code() == StatusCode::kCancelled) {
          // The registry is closing: nothing to report.
        } else if (!flagged.ok()) {
          self->Log("WARN", fmt::format("job '{}': reconcile: {}", self->config_.job_name,
                                        flagged.status().ToString()));
        } else if (*flagged) {
          self->Log("WARN", fmt::format("job '{}': sharding names offline instances; "
                                        "resharding",
                                        self->config_.job_name));
        }
        self->ArmReconcile();
      },
      nullptr, trigger::TimerScheduler::kRelaxed);
}

void JobRuntime::OnPrepare(Clock::WallTime fire_time, uint64_t arming, Clock::WallTime due) {
  {
    MutexLock lock(&mu_);
    if (stopped_) {
      --outstanding_;
      idle_cv_.SignalAll();
      return;
    }
  }
  due_fire_.store(fire_time.time_since_epoch().count(), std::memory_order_release);
  // Prepare (and Claim). The flag and the counter are this runtime's, which the prepared
  // run's hold keeps alive (the counter's owner is kept for the runtime's life:
  // counter_owner_).
  auto prepared =
      run_path_->Prepare(fire_time, &admissible_, counter_.load(std::memory_order_acquire), due);
  MutexLock lock(&mu_);
  if (stopped_) {
    lock.Unlock();
    if (prepared == nullptr || executor_->Abandon(prepared)) EndTask();
    return;
  }
  if (prepared == nullptr) {
    // Nothing prepared (the first trigger, a change since the last, a run going on, a
    // listener): Fire does it all at the fire time.
    fire_task_ = shared_->timer.ScheduleAt(
        fire_time, [self = shared_from_this(), fire_time] { self->run_path_->Fire(fire_time); });
  } else {
    prepared_ = prepared;
    // Launch. Under mu_ and not stopped, as every use of the shared runtime: Shutdown
    // releases it (and may destroy the board) only once stopped. (The board calls nothing of
    // ours back.)
    run_path_->Launch(prepared, fire_time, shared_->board);
  }
  // The next fire time, prepared in its turn (unless rescheduled meanwhile: armed anew).
  // After this one's start is on the timer: the next preparation, later, then wakes nobody
  // (the timer sleeps until this fire), where armed first it woke the idle timer for itself
  // and this fire's start woke it again.
  if (arming == arming_) ArmNextLocked(fire_time);
}

namespace {

// A prepared start under the job's item limit. Held by the board's unit while it runs (so
// the limiter is held for RunHereOrQueue); too large for std::function's own room, it is an
// allocation of its own, which the board prefetches (Unit::touch).
struct LimitedRun {
  std::shared_ptr<ItemLimiter> limiter;
  std::shared_ptr<const void> keep;
  std::function<void()> run;
  void operator()() const { limiter->RunHereOrQueue(run, keep); }
};

}  // namespace

std::function<void()> JobRuntime::LimitedStart(std::function<void()> run,
                                               std::shared_ptr<const void> keep,
                                               const void** touch) {
  // The job's item limit holds for prepared starts too: one beyond it waits in the job's
  // queue instead of holding the launching worker.
  std::function<void()> limited = LimitedRun{limiter_, std::move(keep), std::move(run)};
  *touch = limited.target<LimitedRun>();
  return limited;
}

std::array<const void*, executor::RunPath::Owner::kStartTouches> JobRuntime::StartTouches() {
  // What the start reads besides the executor's own (LaunchUnits names those): the item
  // limit, the user-code gate and the typed job's current state and user object.
  const auto typed = typed_->StartTouches();
  return {limiter_.get(), gate_->closed_address(), typed[0], typed[1], typed[2], typed[3]};
}

executor::RunPath::Owner::Admission JobRuntime::AdmitFire() {
  MutexLock lock(&mu_);
  if (stopped_) return Admission::kStopped;
  return paused_ ? Admission::kPaused : Admission::kRun;
}

void JobRuntime::FireSkipped() {
  if (metrics_ != nullptr) metrics_->skipped_paused.Inc();
  Log("INFO", fmt::format("job={}: a fire time passed while paused (registry "
                          "connection suspended or session expired): skipped",
                          config_.job_name));
  EndDelayPart(DelayFireOf(Source::kCron));  // a fixed delay's fire: this part is over
}

bool JobRuntime::CancelArmedLocked() {
  int released = 0;
  if (shared_->timer.Cancel(next_task_)) ++released;  // never handed to the pool
  if (shared_->timer.Cancel(fire_task_)) ++released;
  if (auto prepared = prepared_.lock(); prepared != nullptr && executor_->Abandon(prepared)) {
    ++released;
  }
  prepared_.reset();
  outstanding_ -= released;
  if (released > 0) idle_cv_.SignalAll();
  return released > 0;
}

std::optional<uint64_t> JobRuntime::RegistryChanges() {
  if (const auto* counter = counter_.load(std::memory_order_acquire); counter != nullptr) {
    return counter->load(std::memory_order_acquire);
  }
  MutexLock lock(&watch_mu_);
  return watch_ != nullptr ? watch_->changes() : std::nullopt;
}

std::shared_ptr<executor::RunPath::Owner> JobRuntime::Hold() {
  Owner* owner = this;  // a private base: converted here, where it is accessible
  return std::shared_ptr<Owner>(shared_from_this(), owner);
}

void JobRuntime::ClaimedAhead(Clock::WallTime answered, std::chrono::nanoseconds took) {
  prepare_lead_->Observe(answered, took);
}

void JobRuntime::LookForFailover() {
  // Nothing to claim at the same change count as the last look found nothing.
  const std::optional<uint64_t> changes = RegistryChanges();
  {
    MutexLock lock(&mu_);
    if (changes.has_value() && no_failover_at_ == changes) return;
  }
  auto need = failover_->NeedFailover();
  if (need.ok() && *need) {
    FailoverIfNecessary();
  } else if (need.ok()) {
    MutexLock lock(&mu_);
    no_failover_at_ = changes;
  }
}

void JobRuntime::RunEnded(Source source, const Result<executor::JobExecutor::Outcome>& outcome) {
  if (source == Source::kFailover) CheckDelayEnded();
  EndDelayPart(DelayFireOf(source));
  if (source == Source::kOperator) {
    MutexLock lock(&mu_);
    if (throw_wait_.active && !throw_wait_.done) {
      if (!outcome.ok() && throw_wait_.result.ok()) throw_wait_.result = outcome.status();
      throw_wait_.done = true;
      throw_cv_.SignalAll();
    }
  }
}

void JobRuntime::Reported(const TriggerReport& report) {
  if (options_.on_trigger) {
    Fenced(*gate_, config_.job_name, "on_trigger", options_.on_trigger, report);
  }
}

void JobRuntime::Released() { EndTask(); }

bool JobRuntime::BeginTask() {
  MutexLock lock(&mu_);
  if (stopped_ || !started_) return false;
  ++outstanding_;
  return true;
}

void JobRuntime::EndTask() {
  MutexLock lock(&mu_);
  --outstanding_;
  idle_cv_.SignalAll();
}

bool JobRuntime::IsShutdown() {
  MutexLock lock(&mu_);
  return stopped_;
}

bool JobRuntime::IsPaused() {
  MutexLock lock(&mu_);
  return paused_;
}

void JobRuntime::Pause() {
  MutexLock lock(&mu_);
  paused_ = true;
  admissible_.store(false);
  infra::BumpChangeEpoch();
}

void JobRuntime::Resume() {
  MutexLock lock(&mu_);
  paused_ = false;
  admissible_.store(!stopped_);
  infra::BumpChangeEpoch();
}

void JobRuntime::Reschedule(const JobConfiguration& config) {
  ApplyConfig(config);
  std::string cron_text = config.cron.value_or("");
  std::string zone_text = config.time_zone.value_or("");
  const std::chrono::milliseconds rate = cron_text.empty() ? config.fixed_rate : kNoRate;
  const std::chrono::milliseconds delay =
      cron_text.empty() && rate.count() == 0 ? config.fixed_delay : kNoRate;
  {
    MutexLock lock(&mu_);
    if (stopped_ || !scheduled_) return;  // a one-off job stays one-off
    if (cron_text == cron_text_ && zone_text == zone_text_ && rate == fixed_rate_ &&
        (delay.count() > 0) == (fixed_delay_.count() > 0)) {
      fixed_delay_ = delay;  // a new delay counts from the end of the fire going on
      return;
    }
    std::optional<CronExpression> cron;
    std::optional<TimeZone> zone;
    if (!cron_text.empty()) {
      // Validated by the listener already; a failure here keeps the current schedule.
      auto c = CronExpression::Parse(cron_text);
      auto z = config.time_zone ? TimeZone::Parse(zone_text)
                                : Result<TimeZone>(TimeZone::SystemDefault());
      if (!c.ok() || !z.ok()) return;
      cron = *c;
      zone = *z;
    }
    CancelArmedLocked();  // the fire armed, prepared or not
    fixed_rate_ = rate;
    fixed_delay_ = delay;
    delay_ready_ = false;  // a fixed delay starts again from the registry (below)
    delay_armed_ms_ = delay_next_ms_;
    cron_ = std::move(cron);
    zone_ = std::move(zone);
    cron_text_ = cron_text;
    zone_text_ = zone_text;
    Log("INFO", rate.count() > 0 ? fmt::format("job '{}': rescheduled to fixedRate {}",
                                               config_.job_name, FormatDuration(rate))
                : delay.count() > 0
                    ? fmt::format("job '{}': rescheduled to fixedDelay {}", config_.job_name,
                                  FormatDuration(delay))
                    : fmt::format("job '{}': rescheduled to cron '{}'{}", config_.job_name,
                                  cron_text, zone_text.empty() ? "" : " in " + zone_text));
    if (delay.count() == 0) {
      ArmNextLocked(clock_.WallNow());  // no cron (one-off now): not armed
      return;
    }
  }
  if (Status s = StartFixedDelay(); !s.ok()) {
    Log("WARN", fmt::format("job '{}': fixedDelay: {}", config_.job_name, s.ToString()));
    return;
  }
  MutexLock lock(&mu_);
  ArmNextLocked(clock_.WallNow());
}

void JobRuntime::TriggerNow() {
  if (!BeginTask()) return;
  auto now = clock_.WallNow();
  shared_->triggers.Post(
      [self = shared_from_this(), now] { self->run_path_->Operator(now, std::nullopt); });
}

void JobRuntime::TriggerNowWithParameter(const std::string& parameter) {
  if (!BeginTask()) return;
  auto now = clock_.WallNow();
  shared_->triggers.Post(
      [self = shared_from_this(), now, parameter] { self->run_path_->Operator(now, parameter); });
}

void JobRuntime::TakeWorkflowRun(const std::string& name, const std::string& value) {
  if (node_runs_ == nullptr) return;
  node_runs_->Take(
      name, value, instance_id_,
      [weak = weak_from_this()](const std::string& parameter, workflow::NodeRuns::Report report) {
        auto self = weak.lock();
        if (self == nullptr || !self->BeginTask()) {
          report(false, "the job stopped here before the run began");
          return;
        }
        self->run_path_->WorkflowNode(parameter, std::move(report));
      });
}

void JobRuntime::FailoverIfNecessary() {
  if (!BeginTask()) return;
  shared_->triggers.Post([self = shared_from_this()] {
    // Nothing is claimed while paused: a claim made in a new session before the reconnect's
    // re-registration had its running mark cleared by it, and a peer claimed the item again
    // (chaos proxy_partition). The reconnect looks for failover items once resumed.
    Status s = self->failover_->FailoverIfNecessary(
        [&] { return !self->IsShutdown() && !self->IsPaused(); },
        [&](int item) {
          self->Log("INFO",
                    fmt::format("job '{}' instance {}: took over item {}", self->config_.job_name,
                                self->instances_->self().instance_id, item));
          if (self->BeginTask()) self->run_path_->Failover();
        });
    if (!s.ok() && s.code() != StatusCode::kCancelled) {
      self->Log("WARN",
                fmt::format("job '{}': failover: {}", self->config_.job_name, s.ToString()));
    }
    self->EndTask();
  });
}

void JobRuntime::ShardIfNecessary() {
  {
    MutexLock lock(&mu_);
    // Not yet started (an event replayed during Start), or stopped: nothing to do. Checked
    // before the flag below, which would otherwise stay set and block every later call.
    if (stopped_ || !started_) return;
    if (shard_posted_) return;  // the queued one will see this change too
    shard_posted_ = true;
    ++outstanding_;  // BeginTask
  }
  shared_->triggers.Post([self = shared_from_this()] {
    bool scheduled;
    {
      MutexLock lock(&self->mu_);
      self->shard_posted_ = false;
      scheduled = self->cron_.has_value() || self->fixed_rate_.count() > 0 ||
                  self->fixed_delay_.count() > 0;  // the leader's next trigger comes
    }
    // The latest fire whose trigger has come (prepared ones come at their fire time).
    std::optional<Clock::WallTime> last_fire = self->DueFire();
    if (last_fire.has_value() && *last_fire > self->clock_.WallNow()) last_fire.reset();
    Status s = self->sharding_->ShardNowIfIdleLeader(scheduled, last_fire);
    if (!s.ok() && s.code() != StatusCode::kCancelled) {
      self->Log("WARN",
                fmt::format("job '{}': sharding: {}", self->config_.job_name, s.ToString()));
    }
    self->EndTask();
  });
}

void JobRuntime::ShutdownInstance() {
  Log("INFO", fmt::format("job '{}' instance {}: instance node removed by an "
                          "operator; stopping the job here",
                          config_.job_name, instances_->self().instance_id));
  shared_->triggers.Post([self = shared_from_this()] {
    // Stopped first: from here on this instance is not the leader (a sharding queued or
    // waiting gives up) and its sharding writes are fenced by the instance node, gone now.
    self->Stop();
    // Its items must go to the others: the flag (an ElasticJob instance raises it on any
    // instance change, its own removal included; the others' listeners may not be ours).
    // Not when the job's config is gone (the job is being removed): the flag would bring
    // `/{job}` back.
    auto config = self->storage_.IsJobNodeExisted("config");
    const bool removed = config.ok() && !*config;
    if (Status s = removed ? Status::Ok() : self->sharding_->SetReshardingFlag(); !s.ok()) {
      self->Log("WARN", fmt::format("job '{}': resharding flag not set at shutdown: {}",
                                    self->config_.job_name, s.ToString()));
    }
    (void)self->leader_->RemoveLeader();  // ElasticJob's shutdownInstance abdicates
  });
}

std::vector<int> JobRuntime::LocallyRunningItems() { return executor_->running_items(); }

void JobRuntime::RunAtTime(Clock::WallTime at, std::function<void()> task) {
  shared_->timer.ScheduleAt(at, std::move(task));
}

void JobRuntime::PostTask(std::function<void()> task) { shared_->triggers.Post(std::move(task)); }

void JobRuntime::StopRunning(std::optional<int> item, std::optional<int64_t> before) {
  (void)executor_->CancelRunning(item, "stopped by an operator", before);
}

void JobRuntime::FenceRunningItems() {
  const auto at = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  std::vector<int> items = executor_->Fence(
      "the registry session expired while it ran (other instances may run the item now)");
  if (items.empty()) return;
  // at_ms: when the items were cancelled (the chaos suite ends the runs it killed there).
  Log("WARN",
      fmt::format("job={} instance={}: the registry session expired while "
                  "items {} ran here: cancelled (script process groups "
                  "killed), no longer this instance's at_ms={}",
                  config_.job_name, instances_->self().instance_id, fmt::join(items, ","), at));
}

void JobRuntime::OnJobEvent(const TreeEvent& event) {
  notifier_->Notify();  // waits re-check their condition
  listeners_->OnEvent(event);
}

void JobRuntime::WatchRunningMarks(const std::vector<int>& items) {
  MutexLock lock(&marks_mu_);
  if (strand_ == nullptr) return;  // shut down
  for (int item : items) {
    if (mark_watches_.count(item) != 0) continue;
    auto w = registry_.Watch(storage_.path().FullPath(sharding::RunningNode(item)), *strand_,
                             [this](const TreeEvent& e) { OnJobEvent(e); });
    if (w.ok()) mark_watches_.emplace(item, std::move(w).value());
  }
}

void JobRuntime::StopWatchingRunningMarks() {
  auto old = std::make_shared<std::map<int, std::unique_ptr<Subscription>>>();
  {
    MutexLock lock(&marks_mu_);
    if (mark_watches_.empty()) return;
    old->swap(mark_watches_);
  }
  // Ending a subscription waits for its delivery in progress, which may be what led here:
  // end them on another thread.
  std::shared_ptr<SharedRuntime> shared;
  {
    MutexLock lock(&mu_);
    shared = shared_;
  }
  if (shared != nullptr) shared->triggers.Post([old] { old->clear(); });
}

void JobRuntime::GuaranteeCleared(guarantee::Phase phase) { job_listeners_->OnPhaseCleared(phase); }

void JobRuntime::Stop() {
  Unscheduled();
  // Not the leader from now on (ElasticJob's isLeader once JobRegistry.isShutdown): nothing
  // of this instance writes what the leader owns. (Set in Start, which Stop does not race.)
  if (leader_ != nullptr) leader_->Shutdown();
  {
    MutexLock lock(&mu_);
    if (stopped_ || !started_) {
      stopped_ = true;
      admissible_.store(false);
      infra::BumpChangeEpoch();
      return;
    }
    stopped_ = true;
    admissible_.store(false);
    infra::BumpChangeEpoch();
    throw_cv_.SignalAll();
    CancelArmedLocked();
    shared_->timer.Cancel(reconcile_task_);
  }
  notifier_->Cancel();       // waits inside a trigger give up
  executor_->Stop();         // a queued operator trigger is dropped
  job_listeners_->Cancel();  // distribute-once waits end
}

Status JobRuntime::Join(std::chrono::steady_clock::time_point deadline) {
  MutexLock join_lock(&join_mu_);
  if (joined_) return *joined_;
  Stop();
  dump_.reset();  // waits for a dump of this job in progress
  bool started;
  int abandoned = 0;
  {
    MutexLock lock(&mu_);
    started = started_;
    // Bounded: what is still going then is abandoned (below).
    while (outstanding_ != 0 && idle_cv_.WaitUntil(deadline)) {
    }
    abandoned = outstanding_;
  }
  if (started) {
    // Whether this instance holds the leadership, from the cache while the watch keeps it
    // (a read from the server could wait for an unreachable one).
    auto leader = storage_.GetJobNodeData(election::kLeaderInstance);
    const bool leading = leader.ok() && *leader == instances_->self().instance_id;
    // No more events; then this instance leaves (instance node, then leadership). The watch
    // ends outside watch_mu_: ending it waits for a delivery in progress.
    std::unique_ptr<Subscription> watch;
    {
      MutexLock lock(&watch_mu_);
      counter_.store(nullptr, std::memory_order_release);  // no longer moves
      watch = std::move(watch_);
    }
    watch.reset();
    connection_.reset();
    {
      MutexLock lock(&marks_mu_);
      mark_watches_.clear();
      strand_.reset();
    }
    // After the listeners: none of them elects us again. Bounded by the deadline (at least
    // reg::kLeaveAtLeast): a registry that does not answer must not hold the shutdown; the
    // nodes are ephemeral and go with the session.
    std::vector<std::string> leave = {storage_.path().FullPath(instances_->OnlineNode().node),
                                      storage_.path().FullPath(instances_->RuntimeNode().node)};
    if (leading) leave.push_back(storage_.path().FullPath(election::kLeaderInstance));
    // A registry its owner closed first (CANCELLED) took these nodes with its session.
    if (Status s = reg::RemoveWithin(gated_, leave, reg::LeaveDeadline(deadline));
        !s.ok() && s.code() != StatusCode::kCancelled) {
      Log("WARN", fmt::format("job '{}': leaving the cluster: {}", config_.job_name, s.ToString()));
    }
  }
  // From now on an abandoned run calls nothing of the user's and no registry: it ends on its
  // own (its registry work CANCELLED), its reports dropped. Waits for calls already inside.
  gate_->Close();
  int left = abandoned;
  if (started && abandoned > 0) {
    // A run waiting for a retry has it now, calling nothing behind the closed gate, and
    // ends: its wait would otherwise hold this runtime, and the shared timer with the
    // application's clock, until its time (a simulated clock may never get there). What is
    // still going after this short wind-down is what runs in the job's code.
    executor_->EndRetryWaits();
    const auto wind_down = reg::LeaveDeadline(deadline);
    MutexLock lock(&mu_);
    while (outstanding_ != 0 && idle_cv_.WaitUntil(wind_down)) {
    }
    left = outstanding_;
  }
  // Drop this job's hold on the shared timer and pools here, on the caller's thread: a task
  // still finishing may release the runtime last, and must never be the one that destroys
  // the pools it runs on. (Once stopped, tasks no longer touch them.) With runs still in
  // the job's code, the hold stays until the runtime goes, then ends on a thread of its own
  // (LastHold).
  std::shared_ptr<SharedRuntime> release;
  {
    MutexLock lock(&mu_);
    if (left > 0) {
      last_hold_.shared = shared_;
    } else {
      release = std::move(shared_);
    }
    started_ = false;
  }
  release.reset();
  joined_ = abandoned == 0
                ? Status::Ok()
                : Status(StatusCode::kTimeout,
                         fmt::format("job '{}': {} run(s) or trigger(s) still going at the "
                                     "shutdown deadline were abandoned: their items end on "
                                     "their own, unreported",
                                     config_.job_name, abandoned));
  return *joined_;
}

}  // namespace elasticjob::bootstrap
