// JobNodePath: every registry path of one job, as zk-layout.md lists them. Paths only; no I/O.
// Each coordination module keeps ElasticJob's Node / Service / Listener split: its *_node.h
// names its nodes relative to the job, this class makes them absolute.
//
// Thread safety: immutable value type.
#ifndef ELASTICJOB_STORAGE_JOB_NODE_PATH_H_
#define ELASTICJOB_STORAGE_JOB_NODE_PATH_H_

#include <string>
#include <string_view>

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

 private:
  std::string job_name_;
};

}  // namespace elasticjob::storage

#endif  // ELASTICJOB_STORAGE_JOB_NODE_PATH_H_
