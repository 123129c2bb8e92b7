// The composition root: builds one job's services over the registry and wires them to the
// process's shared timer and pools.
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "config/config_service.h"
#include "elasticjob/schedule/cron_expression.h"
#include "election/leader_service.h"
#include "execution/execution_service.h"
#include "executor/job_executor.h"
#include "executor/script/script_job.h"
#include "instance/instance_service.h"
#include "server/server_service.h"
#include "sharding/sharding_service.h"
#include "storage/change_notifier.h"
#include "trigger/timer_scheduler.h"

namespace elasticjob {
namespace {

// Process-wide shared machinery: one timer thread, one trigger pool, one item pool. Held by
// every bootstrap and released with the last one (not per-job state).
struct SharedRuntime {
  explicit SharedRuntime(Clock& clock)
      : triggers(2),
        items(std::max(2, 2 * static_cast<int>(std::thread::hardware_concurrency()))),
        timer(clock, triggers) {}
  ThreadPool triggers;
  ThreadPool items;
  trigger::TimerScheduler timer;

  static std::shared_ptr<SharedRuntime> For(Clock& clock) {
    static std::mutex mu;
    static std::map<Clock*, std::weak_ptr<SharedRuntime>>* runtimes =
        new std::map<Clock*, std::weak_ptr<SharedRuntime>>;
    std::lock_guard<std::mutex> lock(mu);
    auto rt = (*runtimes)[&clock].lock();
    if (!rt) {
      rt = std::make_shared<SharedRuntime>(clock);
      (*runtimes)[&clock] = rt;
    }
    return rt;
  }
};

void PrintItemRun(const ItemRunReport& r) {
  std::string line =
      fmt::format("job={} item={} instance={} outcome={}{} duration_ms={}\n", r.job_name, r.item,
                  r.instance_id, r.success ? "SUCCESS" : "FAILURE",
                  r.success ? "" : " error=\"" + r.error + "\"", r.duration.count());
  if (r.misfire_rerun) line.insert(line.size() - 1, " misfire_rerun=true");
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

// Shared with every task the timer or the pools run for this job, so a task that is queued or
// running when the bootstrap goes away still finds its state alive.
struct ScheduleJobBootstrap::Impl : std::enable_shared_from_this<ScheduleJobBootstrap::Impl> {
  Impl(RegistryCenter& reg, std::shared_ptr<SimpleJob> j, std::string type, JobConfiguration c,
       BootstrapOptions o)
      : registry(reg),
        job(std::move(j)),
        job_type(std::move(type)),
        config(std::move(c)),
        options(std::move(o)),
        clock(options.clock != nullptr ? *options.clock : Clock::System()),
        storage(reg, config.job_name) {}

  Status Schedule();
  void Shutdown();
  void ArmNext(Clock::WallTime after);
  void OnTrigger(Clock::WallTime fire_time);

  RegistryCenter& registry;
  std::shared_ptr<SimpleJob> job;
  std::string job_type;
  JobConfiguration config;
  BootstrapOptions options;
  Clock& clock;
  storage::JobNodeStorage storage;
  std::shared_ptr<SharedRuntime> runtime;
  storage::ChangeNotifier notifier;
  JobShardingStrategyRegistry strategies = JobShardingStrategyRegistry::WithBuiltins(clock);
  std::unique_ptr<config::ConfigService> config_service;
  std::unique_ptr<server::ServerService> servers;
  std::unique_ptr<instance::InstanceService> instances;
  std::unique_ptr<election::LeaderService> leader;
  std::unique_ptr<sharding::ShardingService> sharding;
  std::unique_ptr<execution::ExecutionService> execution;
  std::unique_ptr<executor::JobExecutor> executor;
  std::unique_ptr<Subscription> watch;
  std::unique_ptr<CronExpression> cron;
  std::unique_ptr<TimeZone> zone;

  std::mutex mu;
  std::condition_variable idle_cv;
  bool scheduled = false;  // GUARDED_BY(mu)
  bool stopped = false;    // GUARDED_BY(mu)
  int outstanding = 0;     // GUARDED_BY(mu): triggers armed, queued or running
  trigger::TimerScheduler::TaskId next_task = 0;  // GUARDED_BY(mu)
};

Status ScheduleJobBootstrap::Impl::Schedule() {
  const std::string& name = config.job_name;
  auto context = [&](const Status& s) { return s.WithContext(fmt::format("job '{}'", name)); };
  if (Status s = ValidateJobConfiguration(config); !s.ok()) return context(s);
  if (job == nullptr) {
    if (job_type != "SCRIPT") {
      return InvalidArgument(
          fmt::format("job '{}': unknown job type '{}' (known: SCRIPT)", name, job_type));
    }
    auto it = config.props.find("script.command.line");
    if (it == config.props.end()) {
      return InvalidArgument(fmt::format("job '{}': props.script.command.line: missing", name));
    }
    if (auto words = executor::ParseCommandLine(it->second); !words.ok())
      return context(words.status());
    job = std::make_shared<executor::ScriptJob>(it->second);
  }
  if (!config.cron.has_value() || config.cron->empty()) {
    return InvalidArgument(fmt::format("job '{}': cron: a scheduled job needs a cron", name));
  }
  auto ip = instance::DetectIp(options.server_ip);
  if (!ip.ok()) return context(ip.status());
  std::string type_name = !options.job_type_name.empty() ? options.job_type_name
                          : job_type.empty()             ? "CPP_SIMPLE"
                                                         : job_type;
  config_service = std::make_unique<config::ConfigService>(storage, clock);
  auto effective = config_service->SetUp(type_name, config);
  if (!effective.ok()) return effective.status();
  config = *effective;
  auto parsed = CronExpression::Parse(config.cron.value_or(""));
  if (!parsed.ok()) return context(parsed.status());
  cron = std::make_unique<CronExpression>(*parsed);
  auto tz = config.time_zone ? TimeZone::Parse(*config.time_zone)
                             : Result<TimeZone>(TimeZone::SystemDefault());
  if (!tz.ok()) return context(tz.status());
  zone = std::make_unique<TimeZone>(*tz);

  runtime = SharedRuntime::For(clock);
  servers = std::make_unique<server::ServerService>(storage, *ip);
  instances = std::make_unique<instance::InstanceService>(
      storage, *servers, instance::JobInstance::For(*ip, static_cast<long>(getpid())));
  leader = std::make_unique<election::LeaderService>(storage, instances->self().instance_id);
  sharding = std::make_unique<sharding::ShardingService>(
      storage, *config_service, *leader, *instances, *servers, strategies, notifier);
  execution = std::make_unique<execution::ExecutionService>(storage, instances->self().instance_id);
  auto report = options.on_item_run ? options.on_item_run : PrintItemRun;
  executor = std::make_unique<executor::JobExecutor>(
      *config_service, *sharding, *execution, instances->self().instance_id, job, runtime->items,
      [report](const executor::ItemRun& r) {
        report(ItemRunReport{r.job_name, r.item, r.instance_id, r.success, r.error, r.duration,
                             r.misfire_rerun});
      });
  // The job's subtree is cached and every change wakes the waits (no sleep loops).
  auto w = registry.Watch(storage.path().FullPath(), runtime->triggers,
                          [this](const TreeEvent&) { notifier.Notify(); });
  if (!w.ok()) return context(w.status());
  watch = std::move(w).value();
  // Start-up, as ElasticJob registers it.
  if (Status s = leader->ElectLeader(); !s.ok()) return context(s);
  if (Status s = servers->PersistOnline(!config.disabled); !s.ok()) return context(s);
  if (Status s = instances->PersistOnline(); !s.ok()) return context(s);
  if (Status s = sharding->SetReshardingFlag(); !s.ok()) return context(s);
  auto available = instances->GetAvailableJobInstances();
  if (available.ok() && available->size() == 1 &&
      (*available)[0] == instances->self().instance_id) {
    // The only live instance: running marks left by crashed predecessors are stale.
    if (Status s = execution->ClearAllRunningInfo(config.sharding_total_count); !s.ok())
      return context(s);
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    scheduled = true;
  }
  ArmNext(clock.WallNow());
  return Status::Ok();
}

void ScheduleJobBootstrap::Impl::ArmNext(Clock::WallTime after) {
  std::lock_guard<std::mutex> lock(mu);
  if (stopped) return;
  auto now = clock.WallNow();
  // Fire times follow the cron from the last fire; if we fell behind, resume from now.
  auto next = cron->NextFireTimeAfter(std::max(after, now - std::chrono::seconds(1)), *zone);
  if (!next) return;  // the expression never fires again
  Clock::WallTime fire = *next;
  ++outstanding;
  next_task =
      runtime->timer.ScheduleAt(fire, [self = shared_from_this(), fire] { self->OnTrigger(fire); });
}

void ScheduleJobBootstrap::Impl::OnTrigger(Clock::WallTime fire_time) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stopped) {
      --outstanding;
      idle_cv.notify_all();
      return;
    }
  }
  ArmNext(fire_time);
  TriggerReport report{config.job_name, fire_time, clock.WallNow(), TriggerReport::Outcome::kRan,
                       ""};
  auto outcome = executor->Execute();
  if (!outcome.ok()) {
    report.outcome = TriggerReport::Outcome::kFailed;
    report.error = outcome.status().ToString();
    if (outcome.status().code() != StatusCode::kCancelled) {
      std::string line = fmt::format("job={} instance={} trigger failed: {}\n", config.job_name,
                                     instances->self().instance_id, report.error);
      std::fwrite(line.data(), 1, line.size(), stderr);
    }
  } else if (*outcome == executor::JobExecutor::Outcome::kNoItems) {
    report.outcome = TriggerReport::Outcome::kNoItems;
  } else if (*outcome == executor::JobExecutor::Outcome::kMisfire) {
    report.outcome = TriggerReport::Outcome::kMisfire;
  }
  if (options.on_trigger) options.on_trigger(report);
  std::lock_guard<std::mutex> lock(mu);
  --outstanding;
  idle_cv.notify_all();
}

void ScheduleJobBootstrap::Impl::Shutdown() {
  {
    std::unique_lock<std::mutex> lock(mu);
    if (stopped || !scheduled) {
      stopped = true;
      return;
    }
    stopped = true;
    if (runtime->timer.Cancel(next_task)) --outstanding;  // never handed to the pool
    notifier.Cancel();                                    // waits inside a trigger give up
    // Bounded: a job still running past the timeout keeps this state alive (its task holds
    // it) and finishes on its own.
    idle_cv.wait_for(lock, options.shutdown_timeout, [&] { return outstanding == 0; });
  }
  watch.reset();
  (void)instances->RemoveInstance();
  (void)leader->RemoveLeader();
  // Drop this job's hold on the shared timer and pools here, on the caller's thread: a task
  // still finishing may release the job's state last, and must never be the one that
  // destroys the pools it runs on. (Once stopped, tasks no longer touch the runtime.)
  std::shared_ptr<SharedRuntime> release;
  {
    std::lock_guard<std::mutex> lock(mu);
    release = std::move(runtime);
  }
}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::shared_ptr<SimpleJob> job,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(registry, std::move(job), "", std::move(config),
                                   std::move(options))) {}

ScheduleJobBootstrap::ScheduleJobBootstrap(RegistryCenter& registry, std::string job_type,
                                           JobConfiguration config, BootstrapOptions options)
    : impl_(std::make_shared<Impl>(registry, nullptr, std::move(job_type), std::move(config),
                                   std::move(options))) {}

ScheduleJobBootstrap::~ScheduleJobBootstrap() { Shutdown(); }

Status ScheduleJobBootstrap::Schedule() { return impl_->Schedule(); }

void ScheduleJobBootstrap::Shutdown() { impl_->Shutdown(); }

}  // namespace elasticjob
