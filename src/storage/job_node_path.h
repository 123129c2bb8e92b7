// JobNodePath: every registry path of one job, as zk-layout.md lists them. Paths only; no I/O.
// Each coordination module keeps ElasticJob's Node / Service / Listener split: its *_node.h
// names its nodes relative to the job, this class makes them absolute.
//
// Thread safety: immutable value type.
#ifndef ELASTICJOB_STORAGE_JOB_NODE_PATH_H_
#define ELASTICJOB_STORAGE_JOB_NODE_PATH_H_

#include <string>
#include <string_view>

#include "elasticjob/reg/registry_center.h"

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

  // The registry cache's policy for Watch(FullPath()): JobNodeWatches of each node.
  WatchPolicy CachePolicy() const;

 private:
  std::string job_name_;
};

// The watches the node `node` (relative to the job: "sharding/0/running") needs, from
// zk-layout.md:
//   - marks that are only created and deleted, whose value nobody reads from the cache
//     (running, misfire, disabled, processing, failover queue items, guarantee items,
//     trigger nodes, latch nodes, systemTime): none; the parent's children watch sees them;
//   - other leaves (config, servers/{ip}, instances/{id}, instance, failover, failovering,
//     necessary, the leader's id): a value watch only;
//   - sharding/{i}: children only (its value is always empty);
//   - every other node: both.
// A run's running marks thus cost one children read per item when they come and one when
// they go, instead of a value read, a children read and two watches more for each mark.
NodeWatches JobNodeWatches(std::string_view node);

}  // namespace elasticjob::storage

#endif  // ELASTICJOB_STORAGE_JOB_NODE_PATH_H_
