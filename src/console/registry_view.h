// RegistryView: the web console's copy of one registry namespace, kept up to date by one
// registry watch on the namespace root (no reads per request): each job's type, config,
// servers, instances and items, from which the job list, one job and the servers are worked
// out with the lifecycle module's status rules (lifecycle/lifecycle_reads.h), as the
// statistics API works them out from the server's nodes.
//
// The watch's policy keeps only what the console shows: the top-level names, and of each job
// its config, `servers/*`, `instances/*`, `runtime/*` and
// `sharding/{i}/{instance,disabled,failover}`; leader, trigger and guarantee nodes are not watched,
// nor `sharding/{i}/running` (it comes and goes with every item run: ReadRunning reads it for the
// one job a request shows). Every change is reported to the `on_change` callback (on the view's own
// serial executor): the job's name, and whether the set of jobs changed (a config appeared or
// went).
//
// Thread safety: every method may be called from any thread once Start returned.
#ifndef ELASTICJOB_CONSOLE_REGISTRY_VIEW_H_
#define ELASTICJOB_CONSOLE_REGISTRY_VIEW_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/executor.h"
#include "elasticjob/lifecycle/statistics_api.h"
#include "elasticjob/mutex.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"
#include "instance/instance_runtime.h"

namespace elasticjob::console {

using TimePoint = std::chrono::system_clock::time_point;

// What the registry holds for one job (a copy: plain value).
struct JobNodes {
  struct Item {
    std::string owner;  // `sharding/{i}/instance`, "" when unassigned
    bool disabled = false;
    bool running = false;  // not watched: see ReadRunning
    bool failover = false;
  };
  std::string name;
  std::string type;                              // the `/{job}` node's value
  std::optional<std::string> config_yaml;        // `/{job}/config`; nullopt: not a job (yet)
  std::map<std::string, std::string> servers;    // ip -> ENABLED | DISABLED | ...
  std::map<std::string, std::string> instances;  // id -> serverIp
  // id -> `runtime/{id}` (InstanceRuntime JSON; elasticjob-cpp instances only)
  std::map<std::string, std::string> runtimes;
  std::map<int, Item> items;
  // Worked out from config_yaml when it changes.
  std::optional<JobConfiguration> config;  // nullopt with config_error set when unreadable
  std::string config_error;
  std::optional<CronExpression> cron;  // set when the config has a valid cron and zone
  std::optional<TimeZone> zone;
  // The next fire time last worked out (RegistryView::Jobs): still the next one while it is
  // in the future. Cleared by ParseConfig.
  std::optional<TimePoint> next_fire_cache;

  // Parses config_yaml into config, cron and zone.
  void ParseConfig();
  JobStatus Status() const;
  // Up to `count` fire times after `after` (none without a cron).
  std::vector<TimePoint> NextFireTimes(TimePoint after, int count) const;
};

// One row of the job list.
struct JobRow {
  JobBriefInfo brief;
  std::optional<TimePoint> next_fire_time;
};

// The items of a job with their status (ShardingStatisticsAPI's rules), by item.
std::vector<ShardingInfo> ShardingOf(const JobNodes& job);

// Sets each item's `running` from the server (`sharding/{i}/running`); false where it cannot
// be read.
void ReadRunning(RegistryCenter& registry, JobNodes* job);

// The job read from the server (GetDirectly), for answers that must show a write just made.
// NOT_FOUND "job 'x' not found" without a config.
Result<JobNodes> ReadJobNodes(RegistryCenter& registry, const std::string& job_name);

class RegistryView {
 public:
  // (job name or "" for the root, whether the set of jobs changed)
  using ChangeCallback = std::function<void(const std::string& job, bool jobs_changed)>;

  // REQUIRES: `registry` initialised; `pool` outlives the view.
  RegistryView(std::unique_ptr<RegistryCenter> registry, Executor& pool, ChangeCallback on_change);
  ~RegistryView();  // ends the watch (waits for a delivery in progress)
  RegistryView(const RegistryView&) = delete;
  RegistryView& operator=(const RegistryView&) = delete;

  // Starts the watch and returns once the namespace's current contents are in the view.
  Status Start();
  // Returns once every change delivered to the view so far is applied (memory:// delivers
  // a write's events before the write returns: tests read the view after their writes).
  void Sync();

  RegistryCenter& registry() { return *registry_; }
  bool connected() const { return connected_.load(); }

  // Every job (with a config), sorted by name.
  std::vector<JobRow> Jobs(TimePoint now) const;
  // One job (with a config), or nullopt.
  std::optional<JobNodes> Job(const std::string& name) const;
  // Every server over all jobs, sorted by IP (ServerStatisticsAPI's rules).
  std::vector<ServerBriefInfo> Servers() const;
  // The jobs with a `servers/{ip}` node (status DISABLED or OK: that server's state, and the
  // instances on that server), sorted by name; empty for an unknown server.
  std::vector<JobBriefInfo> JobsOnServer(const std::string& ip) const;
  // Each live instance (an `instances/{id}` node of some job) with the jobs it runs, sorted
  // by name: instance id -> job names.
  std::map<std::string, std::vector<std::string>> JobsByInstance() const;
  // Each live instance's `runtime/{id}` (elasticjob-cpp instances only; a Java instance has
  // none), merged over its jobs: the newest registration's node, with the earliest job start.
  // Unreadable values are left out.
  std::map<std::string, instance::InstanceRuntime> RuntimeByInstance() const;

 private:
  void Apply(const TreeEvent& event);

  const std::unique_ptr<RegistryCenter> registry_;
  const ChangeCallback on_change_;
  SerialExecutor events_;
  std::unique_ptr<Subscription> watch_;
  std::unique_ptr<Subscription> connection_;

  mutable Mutex mu_;
  // Mutable: Jobs() keeps each job's next fire time (JobNodes::next_fire_cache) here.
  mutable std::map<std::string, JobNodes> jobs_ ELASTICJOB_GUARDED_BY(mu_);

  std::atomic<bool> connected_{true};  // atomic: written by the connection listener
};

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_REGISTRY_VIEW_H_
