// ListenerManager: how one job reacts to its registry subtree and its session, ElasticJob
// 3.0.5's ListenerManager and the listeners it starts. Every event of the job's Watch and
// every connection-state change goes through OnEvent / OnConnectionState, in order, on the
// job's event strand:
//
//   config updated        reshard if shardingTotalCount changed; reschedule (cron, time
//                         zone); failover off: failover nodes go; monitorExecution off:
//                         running marks go. A malformed config is logged and ignored: the
//                         job keeps its last good configuration.
//   servers/{ip}          reshard (unless static sharding already has an assignment); our
//                         server enabled and no leader: elect; our server DISABLED while we
//                         lead: abdicate.
//   instances/{id}        added or deleted: reshard (same condition; not once the job's
//                         config is gone: the job is being removed). Another instance
//                         deleted with failover on: its running (and failovering) items are
//                         queued for failover and claimed. Our own deleted by an operator:
//                         shut this job down here; deleted by session expiry: ignored (the
//                         session listener re-registers). Our own added while we are the only
//                         live instance: stale running items left by crashed instances are
//                         queued for failover.
//   leader/election/instance deleted: elect, if our server is available; added while a
//                         resharding is flagged: the new leader shards (if idle).
//   trigger/{our id}      added: delete it and run now (queued if a run is going on); a
//                         non-empty value is that run's job parameter.
//   guarantee/started, guarantee/completed deleted: wake distribute-once listeners waiting
//                         for the rest of the cluster (GuaranteeListenerManager).
//   leader/sharding/necessary added or written, or a running mark or another sharding's processing
//                         node deleted while it is set: if we lead
//                         and nothing runs, shard now (ElasticJob waits for the leader's
//                         next trigger).
//   SUSPENDED             pause the trigger (a run in progress finishes).
//   LOST                  pause the trigger; the runs in progress are fenced: cancelled
//                         (scripts killed), their items no longer this instance's.
//   RECONNECTED           re-register server (keeping its state) and instance, clear stale
//                         running marks of our items, resume.
//
// Thread safety: the On* calls must be serialised (the job's strand does that).
#ifndef ELASTICJOB_LISTENER_LISTENER_MANAGER_H_
#define ELASTICJOB_LISTENER_LISTENER_MANAGER_H_

#include <optional>
#include <string>
#include <string_view>

#include "config/config_service.h"
#include "elasticjob/reg/registry_center.h"
#include "election/leader_service.h"
#include "execution/execution_service.h"
#include "failover/failover_service.h"
#include "guarantee/guarantee_node.h"
#include "guarantee/guarantee_service.h"
#include "infra/log.h"
#include "instance/instance_service.h"
#include "instance/server_service.h"
#include "sharding/sharding_service.h"
#include "storage/job_node_storage.h"

namespace elasticjob::listener {

// The operator's stop node, `/{job}/stop` (docs/scheduling.md; Java instances ignore it).
inline constexpr std::string_view kStopNode = "stop";
// The one-off runs at a time, `/{job}/triggerAt/{epochMs}-{id}` (value: the run's parameter).
inline constexpr std::string_view kTriggerAtRoot = "triggerAt";
// A fixed-delay job's next fire, `/{job}/delay/next/{epochMs}` (registry time), and each
// instance's end of the fire, `/{job}/delay/ended/{instanceId}` (docs/scheduling.md).
inline constexpr std::string_view kDelayNextRoot = "delay/next";
inline constexpr std::string_view kDelayEndedRoot = "delay/ended";

// What the listeners ask of the job's scheduler (ElasticJob's JobScheduleController and
// SchedulerFacade). Implementations must not block on a run.
class JobController {
 public:
  virtual ~JobController() = default;
  virtual bool IsShutdown() = 0;
  virtual bool IsPaused() = 0;
  virtual void Pause() = 0;
  virtual void Resume() = 0;
  // Arms the trigger for `config`'s cron and time zone if they changed.
  virtual void Reschedule(const JobConfiguration& config) = 0;
  // An operator's "run now".
  virtual void TriggerNow() = 0;
  // An operator's "run now" with a one-time job parameter (the trigger node's value).
  virtual void TriggerNowWithParameter(const std::string& parameter) {
    (void)parameter;
    TriggerNow();
  }
  // Claims queued failover items and runs them.
  virtual void FailoverIfNecessary() = 0;
  // Shards now if this instance leads and nothing runs (ShardNowIfIdleLeader), off the
  // event strand.
  virtual void ShardIfNecessary() = 0;
  // The operator removed this instance: stop the job here.
  virtual void ShutdownInstance() = 0;
  // Items running on this instance now (their marks are not stale).
  virtual std::vector<int> LocallyRunningItems() = 0;
  // The session expired: stop the items running here as far as possible and stop counting
  // them as this instance's (JobExecutor::Fence). Others may run them now.
  virtual void FenceRunningItems() {}
  // An operator's stop (`/{job}/stop`, docs/scheduling.md): cancel the runs going here that
  // hold `item` (every run when nullopt), as a timeout does.
  virtual void StopRunning(std::optional<int> item, std::optional<int64_t> before) {
    (void)item, (void)before;
  }
  // `/{job}/triggerAt/{name}` was added: a one-off run at the time its name starts with
  // (docs/scheduling.md).
  virtual void ScheduleRunAt(const std::string& name) { (void)name; }
  // `workflowRuns/{name}` (docs/workflows.md "How a node runs") was added for this instance,
  // with `value`: a workflow node's run request to take.
  virtual void TakeWorkflowRun(const std::string& name, const std::string& value) {
    (void)name;
    (void)value;
  }
  // A fixed-delay job's next fire was written (`delay/next/{name}`): arm it.
  virtual void OnDelayFire(const std::string& name) { (void)name; }
  // Something a fixed-delay fire may have waited for ended (an instance left, a running
  // mark went): see whether the fire is over on every instance.
  virtual void CheckDelayEnded() {}
  // `guarantee/{phase}` was deleted: distribute-once listeners waiting for it go on.
  virtual void GuaranteeCleared(guarantee::Phase phase) = 0;
};

struct Services {
  storage::JobNodeStorage& storage;
  config::ConfigService& config;
  election::LeaderService& leader;
  server::ServerService& servers;
  instance::InstanceService& instances;
  sharding::ShardingService& sharding;
  execution::ExecutionService& execution;
  failover::FailoverService& failover;
  infra::JobLogger log;  // where the job's lines go
};

class ListenerManager {
 public:
  // REQUIRES: everything referenced outlives this object. `sharding_total_count` is the
  // registered configuration's (ElasticJob's JobRegistry current count).
  ListenerManager(Services services, JobController& controller, int sharding_total_count)
      : s_(services), controller_(controller), current_total_(sharding_total_count) {}

  void OnEvent(const TreeEvent& event);
  void OnConnectionState(ConnectionState state);
  // The Watch's initial contents (ADDED events for what already existed) have been
  // delivered. Until then instance and server events set no resharding flag: start-up sets
  // one after registering, and replayed history must not force a second resharding.
  void EndOfReplay() { replaying_ = false; }

 private:
  void OnConfig(const TreeEvent& event);
  void OnServer(std::string_view ip, const TreeEvent& event);
  void OnInstance(std::string_view id, const TreeEvent& event);
  void OnLeaderInstance(const TreeEvent& event);
  void OnTrigger(std::string_view id, const TreeEvent& event);
  // `/{job}/stop` written: `server=IP item=N id=...` (StopRequestValue), each part optional.
  void OnStop(const std::string& value);
  // ListenServersChangedJobListener's resharding, unless static sharding has an assignment.
  void ReshardUnlessStatic();
  // The job's config is gone (the job is being removed, JobConfigurationAPI): its instances
  // leaving then must not write resharding or failover nodes, which would bring `/{job}`
  // back.
  bool JobRemoved();
  void OnInstanceCrashed(const std::string& id);
  void OnOnlyInstanceOnline();
  void OnReconnected();
  // Logs a failed coordination step (there is no caller to return it to).
  void Report(const Status& status, std::string_view what);

  Services s_;
  JobController& controller_;
  int current_total_;
  bool replaying_ = true;
};

}  // namespace elasticjob::listener

#endif  // ELASTICJOB_LISTENER_LISTENER_MANAGER_H_
