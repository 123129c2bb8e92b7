#include "listener/listener_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "election/leader_node.h"
#include "infra/log.h"
#include "sharding/sharding_node.h"
#include "workflow/workflow_node.h"

namespace elasticjob::listener {
namespace {

// "servers/10.0.0.1" -> "10.0.0.1" when `rel` is exactly one level below `root`.
bool ChildOf(std::string_view rel, std::string_view root, std::string_view* child) {
  if (rel.size() <= root.size() + 1 || rel.substr(0, root.size()) != root ||
      rel[root.size()] != '/') {
    return false;
  }
  *child = rel.substr(root.size() + 1);
  return child->find('/') == std::string_view::npos;
}

}  // namespace

void ListenerManager::Report(const Status& status, std::string_view what) {
  if (status.ok() || status.code() == StatusCode::kCancelled) return;
  s_.log("WARN", fmt::format("job '{}' instance {}: {}: {}", s_.storage.path().job_name(),
                             s_.instances.self().instance_id, what, status.ToString()));
}

void ListenerManager::OnEvent(const TreeEvent& event) {
  std::string root = s_.storage.path().FullPath();
  if (event.key.size() <= root.size() + 1 || event.key.compare(0, root.size(), root) != 0 ||
      event.key[root.size()] != '/') {
    return;  // the job root itself, or not ours
  }
  std::string_view rel = std::string_view(event.key).substr(root.size() + 1);
  std::string_view child;
  if (rel == "config") {
    OnConfig(event);
  } else if (ChildOf(rel, "servers", &child)) {
    OnServer(child, event);
  } else if (ChildOf(rel, "instances", &child)) {
    OnInstance(child, event);
    // An instance gone may have been the last one a fixed-delay fire waited for.
    if (event.type == TreeEvent::Type::kDeleted) controller_.CheckDelayEnded();
  } else if (ChildOf(rel, kDelayNextRoot, &child)) {
    if (event.type == TreeEvent::Type::kAdded) controller_.OnDelayFire(std::string(child));
  } else if (rel == election::kLeaderInstance) {
    OnLeaderInstance(event);
  } else if (ChildOf(rel, "trigger", &child)) {
    OnTrigger(child, event);
  } else if (ChildOf(rel, kTriggerAtRoot, &child)) {
    if (event.type == TreeEvent::Type::kAdded) controller_.ScheduleRunAt(std::string(child));
  } else if (ChildOf(rel, workflow::kRunRequestsRoot, &child)) {
    if (event.type == TreeEvent::Type::kAdded && !controller_.IsShutdown() &&
        workflow::RunRequestRunner(child) == s_.instances.self().instance_id) {
      controller_.TakeWorkflowRun(std::string(child), event.value);
    }
  } else if (rel == kStopNode) {
    if (event.type != TreeEvent::Type::kDeleted) OnStop(event.value);
  } else if (event.type == TreeEvent::Type::kDeleted && rel == guarantee::kStartedRoot) {
    controller_.GuaranteeCleared(guarantee::Phase::kStarted);  // GuaranteeListenerManager
  } else if (event.type == TreeEvent::Type::kDeleted && rel == guarantee::kCompletedRoot) {
    controller_.GuaranteeCleared(guarantee::Phase::kCompleted);
  } else if (rel == sharding::kNecessary) {
    // Added, or written again (every flag is a write, and one seen before this job started
    // reached no one).
    if (event.type != TreeEvent::Type::kDeleted) controller_.ShardIfNecessary();
  } else if (event.type == TreeEvent::Type::kDeleted &&
             (rel == sharding::kProcessing ||
              (rel.size() > 8 && rel.substr(rel.size() - 8) == "/running" &&
               rel.substr(0, 9) == "sharding/"))) {
    auto need = s_.sharding.IsNeedSharding();
    if (need.ok() && *need) controller_.ShardIfNecessary();
    if (rel != sharding::kProcessing) controller_.CheckDelayEnded();  // a failover run's end
  }
}

void ListenerManager::OnStop(const std::string& value) {
  std::optional<int> item;
  std::optional<int64_t> before;
  std::string server;
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find(' ', start);
    if (end == std::string::npos) end = value.size();
    const std::string part = value.substr(start, end - start);
    start = end + 1;
    if (part.rfind("server=", 0) == 0) {
      server = part.substr(7);
    } else if (part.rfind("item=", 0) == 0) {
      int n = 0;
      auto [p, ec] = std::from_chars(part.data() + 5, part.data() + part.size(), n);
      if (ec != std::errc() || p != part.data() + part.size() || n < 0) {
        s_.log("WARN", fmt::format("job '{}': stop request '{}': bad item, ignored",
                                   s_.storage.path().job_name(), value));
        return;
      }
      item = n;
    } else if (part.rfind("before=", 0) == 0) {
      int64_t stamp = 0;
      auto [p, ec] = std::from_chars(part.data() + 7, part.data() + part.size(), stamp);
      if (ec != std::errc() || p != part.data() + part.size()) {
        s_.log("WARN", fmt::format("job '{}': stop request '{}': bad stamp, ignored",
                                   s_.storage.path().job_name(), value));
        return;
      }
      before = stamp;
    } else if (part == "pending") {
      return;  // its stamp is being taken: the request with it follows
    }
  }
  if (!server.empty() && server != s_.instances.self().server_ip) return;  // another's
  s_.log("INFO",
         fmt::format("job '{}': stop requested ({}): cancelling {}", s_.storage.path().job_name(),
                     value, item ? fmt::format("item {}", *item) : "every run here"));
  controller_.StopRunning(item, before);
}

void ListenerManager::OnConfig(const TreeEvent& event) {
  if (event.type == TreeEvent::Type::kDeleted) return;
  // The text the job's configuration service has accepted last is not parsed again: the
  // cache's replay of the config this instance has just written (one YAML parse a job at
  // start-up, not two), or a change a trigger has loaded first.
  auto before = s_.config.ParsedBefore(event.value);
  auto config = before.has_value() ? Result<JobConfiguration>(*std::move(before))
                                   : ConfigFromYaml(event.value);
  // ConfigFromYaml's errors name the config already ("config: not valid YAML ...").
  // What this instance cannot run (an unknown strategy, say) is refused as a bad value is.
  Status valid = config.ok() ? s_.config.Check(*config) : config.status();
  if (!valid.ok()) {
    s_.log("WARN", fmt::format("job '{}': {}{} (keeping the last good configuration)",
                               s_.storage.path().job_name(), config.ok() ? "config: " : "",
                               valid.message()));
    return;
  }
  // ShardingTotalCountChangedJobListener.
  if (current_total_ != 0 && config->sharding_total_count != current_total_) {
    Report(s_.sharding.SetReshardingFlag(), "setting the resharding flag");
    current_total_ = config->sharding_total_count;
  }
  if (event.type != TreeEvent::Type::kUpdated || controller_.IsShutdown()) return;
  // CronSettingAndJobEventChangedJobListener.
  controller_.Reschedule(*config);
  // FailoverSettingsChangedJobListener.
  if (!config->failover) Report(s_.failover.RemoveFailoverInfo(), "removing failover nodes");
  // MonitorExecutionSettingsChangedJobListener.
  if (!config->monitor_execution) {
    Report(s_.execution.ClearAllRunningInfo(config->sharding_total_count),
           "clearing running marks");
  }
}

bool ListenerManager::JobRemoved() {
  auto config = s_.storage.IsJobNodeExisted("config");
  return config.ok() && !*config;
}

void ListenerManager::ReshardUnlessStatic() {
  if (replaying_ || controller_.IsShutdown() || JobRemoved()) return;
  auto config = s_.config.LoadLastGood();
  if (config.ok() && config->static_sharding) {
    auto has = s_.sharding.HasShardingInfo();
    if (has.ok() && *has) return;
  }
  Report(s_.sharding.SetReshardingFlag(), "setting the resharding flag");
}

void ListenerManager::OnServer(std::string_view ip, const TreeEvent& event) {
  const bool mine = ip == s_.instances.self().server_ip;
  // A server or instance that joins raises the flag itself, in the multi-op that registers
  // it (start-up; a reconnect raises it after re-registering; an ElasticJob instance right
  // after its registration): raising it again here, possibly after the leader sharded with
  // the joiner in the plan, would only force a second sharding, which a trigger of the next
  // fire may find pending and give way to (a fire missed on the joiner). ElasticJob's
  // listener raises it on any server change and on an instance added or removed.
  if (event.type != TreeEvent::Type::kAdded) ReshardUnlessStatic();
  if (!mine) return;
  const bool disabled = event.value == "DISABLED";
  if (!disabled && event.type != TreeEvent::Type::kDeleted && !controller_.IsShutdown()) {
    // LeaderElectionJobListener, active election.
    auto has = s_.leader.HasLeader();
    if (has.ok() && !*has) Report(s_.leader.ElectLeader(), "electing a leader");
  }
  if (disabled && event.type != TreeEvent::Type::kDeleted) {
    // LeaderAbdicationJobListener.
    auto leading = s_.leader.IsLeader();
    if (leading.ok() && *leading) Report(s_.leader.RemoveLeader(), "abdicating");
  }
}

void ListenerManager::OnInstance(std::string_view id, const TreeEvent& event) {
  const bool self = id == s_.instances.self().instance_id;
  if (event.type == TreeEvent::Type::kDeleted && !self) ReshardUnlessStatic();  // as OnServer
  if (event.type == TreeEvent::Type::kDeleted) {
    if (self) {
      // InstanceShutdownStatusJobListener: an operator's shutdown, unless the session ended
      // (paused until the new session re-registers, and then the node is back).
      if (controller_.IsShutdown() || controller_.IsPaused()) return;
      auto back = s_.instances.IsLocalJobInstanceExisted();
      if (back.ok() && !*back) controller_.ShutdownInstance();
      return;
    }
    OnInstanceCrashed(std::string(id));
  } else if (event.type == TreeEvent::Type::kAdded && self) {
    OnOnlyInstanceOnline();
  }
}

void ListenerManager::OnInstanceCrashed(const std::string& id) {
  // JobCrashedJobListener.
  if (controller_.IsShutdown() || JobRemoved()) return;
  auto config = s_.config.LoadLastGood();
  if (!config.ok() || !config->failover) return;
  // From the server: a cache catching up after a reconnect (to another server of the
  // ensemble) can report a live instance's node deleted. Taking over its items then deletes
  // the marks of its running items and runs them a second time beside it (issue 24).
  auto still = s_.storage.GetJobNodeDataDirectly("instances/" + id);
  if (still.ok()) return;
  if (still.status().code() != StatusCode::kNotFound) {
    return Report(still.status(), "checking a departed instance");
  }
  auto failovering = s_.failover.GetFailoveringItems(id);
  if (!failovering.ok()) return Report(failovering.status(), "reading failovering items");
  if (!failovering->empty()) {
    for (int item : *failovering) {
      Report(s_.failover.SetCrashedFailoverFlagDirectly(item), "queueing a failover item");
    }
  } else {
    auto crashed = s_.failover.GetCrashedShardingItems(id);
    if (!crashed.ok()) return Report(crashed.status(), "reading crashed items");
    Report(s_.failover.SetCrashedFailoverFlag(*crashed, id), "queueing failover items");
  }
  controller_.FailoverIfNecessary();
}

void ListenerManager::OnOnlyInstanceOnline() {
  // LegacyCrashedRunningItemListener: the only live instance inherits what crashed
  // instances left running.
  if (controller_.IsShutdown()) return;
  auto config = s_.config.LoadLastGood();
  if (!config.ok()) return;
  auto live = s_.instances.GetAvailableJobInstances();
  if (!live.ok() || live->size() != 1 || live->front() != s_.instances.self().instance_id) return;
  auto running = s_.execution.GetAllRunningItems(config->sharding_total_count);
  auto failovering = s_.failover.GetAllFailoveringItems();
  if (!running.ok() || !failovering.ok()) return;
  std::vector<int> mine = controller_.LocallyRunningItems();
  auto stale = [&](int item, const std::string& owner) {
    if (owner == s_.instances.self().instance_id) {
      return std::find(mine.begin(), mine.end(), item) == mine.end();
    }
    // The cache may say we are alone while it catches up (a reconnect to another server of
    // the ensemble): an owner still registered on the server is running its item, and its
    // mark must stay (issue 24: it was cleared and the item run a second time beside it).
    auto registered = s_.storage.GetJobNodeDataDirectly("instances/" + owner);
    return !registered.ok() && registered.status().code() == StatusCode::kNotFound;
  };
  if (!config->failover) {
    // Nobody takes them over: just drop the stale marks, or they would block their items.
    for (const auto& [item, owner] : *running) {
      if (stale(item, owner)) Report(s_.execution.ClearRunningInfo({item}), "clearing a mark");
    }
    return;
  }
  bool queued = false;
  for (const auto& [item, owner] : *failovering) {
    if (!stale(item, owner)) continue;
    Report(s_.failover.SetCrashedFailoverFlagDirectly(item), "queueing a failover item");
    Report(s_.failover.ClearFailoveringItem(item), "clearing a failovering item");
    Report(s_.execution.ClearRunningInfo({item}), "clearing a running mark");
    running->erase(item);
    queued = true;
  }
  for (const auto& [item, owner] : *running) {
    if (!stale(item, owner)) continue;
    // Deletes the mark too, while it is still `owner`'s (never a fresh claim's).
    Report(s_.failover.SetCrashedFailoverFlag({item}, owner), "queueing a failover item");
    queued = true;
  }
  if (queued) controller_.FailoverIfNecessary();
}

void ListenerManager::OnLeaderInstance(const TreeEvent& event) {
  if (controller_.IsShutdown()) return;
  if (event.type == TreeEvent::Type::kAdded) {
    // A new leader: a resharding flagged while there was none is its to do now.
    auto need = s_.sharding.IsNeedSharding();
    if (need.ok() && *need) controller_.ShardIfNecessary();
    return;
  }
  // LeaderElectionJobListener, passive election: the leader is gone.
  if (event.type != TreeEvent::Type::kDeleted) return;
  auto available = s_.servers.IsAvailableServer(s_.instances.self().server_ip);
  if (available.ok() && *available) Report(s_.leader.ElectLeader(), "electing a leader");
}

void ListenerManager::OnTrigger(std::string_view id, const TreeEvent& event) {
  // JobTriggerStatusJobListener.
  if (event.type != TreeEvent::Type::kAdded || id != s_.instances.self().instance_id) return;
  Report(s_.storage.RemoveJobNodeIfExisted("trigger/" + std::string(id)),
         "removing the trigger node");
  if (controller_.IsShutdown()) return;
  // A one-time parameter (beyond ElasticJob, whose instances ignore the value).
  if (event.value.empty()) {
    controller_.TriggerNow();
  } else {
    controller_.TriggerNowWithParameter(event.value);
  }
}

void ListenerManager::OnConnectionState(ConnectionState state) {
  // RegistryCenterConnectionStateListener.
  if (controller_.IsShutdown()) return;
  if (state != ConnectionState::kConnected) {
    // A line per change: what an operator (and the chaos suite) reads a pause from.
    const char* what = state == ConnectionState::kSuspended ? "connection suspended: paused"
                       : state == ConnectionState::kLost    ? "session expired: paused"
                                                            : "reconnected: resuming";
    s_.log("INFO", fmt::format("job '{}' instance {}: registry {}", s_.storage.path().job_name(),
                               s_.instances.self().instance_id, what));
  }
  if (state == ConnectionState::kSuspended || state == ConnectionState::kLost) {
    controller_.Pause();
    // The session expired: its ephemeral nodes are gone and others may take this
    // instance's items over at once. What runs here must stop (issue 24: a survivor took
    // over items of a live instance while they ran).
    if (state == ConnectionState::kLost) controller_.FenceRunningItems();
  } else if (state == ConnectionState::kReconnected) {
    OnReconnected();
  }
}

void ListenerManager::OnReconnected() {
  const std::string& ip = s_.instances.self().server_ip;
  auto state = s_.storage.GetJobNodeDataDirectly("servers/" + ip);
  bool enabled = !(state.ok() && *state == "DISABLED");  // absent: enabled, as ElasticJob
  Report(s_.servers.PersistOnline(enabled), "re-registering the server");
  Report(s_.instances.PersistOnline(), "re-registering the instance");
  Report(s_.sharding.SetReshardingFlag(), "setting the resharding flag");
  auto config = s_.config.LoadLastGood();
  if (config.ok()) {
    // Marks of ours on items no run of ours holds are stale (a clearing the lost session
    // failed), whatever our view of the sharding says: left, they would keep the items'
    // new owners from claiming them. Marks of runs still going here stay (ElasticJob clears
    // every local item's mark, its own running ones too, and others' on its local items,
    // which lets a second run of one item start).
    std::vector<int> mine = controller_.LocallyRunningItems();
    std::vector<int> stale;
    for (int i = 0; i < config->sharding_total_count; ++i) {
      if (std::find(mine.begin(), mine.end(), i) == mine.end()) stale.push_back(i);
    }
    Report(s_.execution.ClearOwnRunningInfo(stale), "clearing stale running marks");
  }
  controller_.Resume();
  s_.log("INFO", fmt::format("job '{}' instance {}: registry reconnected: resumed",
                             s_.storage.path().job_name(), s_.instances.self().instance_id));
  // Failover items queued while paused waited for this (no claim is made while paused).
  controller_.FailoverIfNecessary();
}

}  // namespace elasticjob::listener
