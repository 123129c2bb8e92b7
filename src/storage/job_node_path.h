// JobNodePath: every registry path of one job, as zk-layout.md lists them. Paths only; no I/O.
// Each coordination module keeps ElasticJob's Node / Service / Listener split: its *_node.h
// names its nodes relative to the job, this class makes them absolute.
//
// Thread safety: immutable value type.
#ifndef ELASTICJOB_STORAGE_JOB_NODE_PATH_H_
#define ELASTICJOB_STORAGE_JOB_NODE_PATH_H_

#include <string>
#include <string_view>

#include "reg/coordinator_registry.h"

namespace elasticjob::storage {

class JobNodePath {
 public:
  explicit JobNodePath(std::string job_name) : job_name_(std::move(job_name)) {}

  const std::string& job_name() const { return job_name_; }

  // "/{job}" for an empty node, else "/{job}/{node}".
  std::string FullPath(std::string_view node = {}) const;

  std::string ConfigNodePath() const { return FullPath("config"); }
  std::string ServersNodePath() const { return FullPath("servers"); }
  std::string ServerNodePath(std::string_view ip) const;
  std::string InstancesNodePath() const { return FullPath("instances"); }
  std::string InstanceNodePath(std::string_view instance_id) const;
  std::string ShardingNodePath() const { return FullPath("sharding"); }
  // "/{job}/sharding/{item}" or, with a name, "/{job}/sharding/{item}/{name}".
  std::string ShardingNodePath(int item, std::string_view name = {}) const;
  std::string LeaderHostNodePath() const { return FullPath("leader/election/instance"); }

  // The registry cache's policy for WatchTree(FullPath()): JobNodeWatches of each node.
  reg::WatchPolicy CachePolicy() const;

 private:
  std::string job_name_;
};

// The watches the node `node` (relative to the job: "sharding/0/running") needs, from
// zk-layout.md:
//   - marks that are only created and deleted, whose value nobody reads from the cache
//     (processing, failover queue items, guarantee items, trigger nodes, latch nodes,
//     systemTime): none; the parent's children watch sees them;
//   - other leaves (config, servers/{ip}, instances/{id}, necessary, the leader's id, and
//     each item's instance, failover, failovering, disabled and misfire): a value watch only;
//   - sharding/{i}: no children watch; its named children (kItemChildren) are watched one by
//     one, so a run's running mark (`sharding/{i}/running`, created and deleted by every run)
//     fires no watch and costs no request: it is outside the cache, and the few readers of
//     another instance's marks (resharding, failover, the start-up sweep) ask the server;
//   - the layout's parents (servers, instances, sharding, leader, leader/election,
//     leader/election/latch, leader/sharding, leader/failover and its items and latch,
//     trigger, guarantee and its two lists, systemTime, workflowRuns): a children watch only
//     (they hold "" and are never set);
//   - runtime: its children (`runtime/{id}`, what an instance shows the console of itself)
//     are outside the cache (NodeWatches::children_outside): no reader of it needs them;
//   - every other node (the job root, a node not of the layout): both.
reg::NodeWatches JobNodeWatches(std::string_view node);

// The children of `sharding/{i}` the cache keeps: all but `running`. The first (the item's
// owner) is usually there (NodeWatches::named_present).
inline constexpr std::string_view kItemChildren[] = {"instance", "failover", "failovering",
                                                     "disabled", "misfire"};

}  // namespace elasticjob::storage

#endif  // ELASTICJOB_STORAGE_JOB_NODE_PATH_H_
