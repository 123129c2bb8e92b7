// JobNodeStorage: the registry as one job sees it, ElasticJob's JobNodeStorage. Nodes are
// named relative to the job ("leader/sharding/necessary"); every call returns the registry's
// Status for the caller to decide on.
//
// Thread safety: safe for concurrent use (the registry is).
#ifndef ELASTICJOB_STORAGE_JOB_NODE_STORAGE_H_
#define ELASTICJOB_STORAGE_JOB_NODE_STORAGE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "reg/coordinator_registry.h"
#include "storage/job_node_path.h"

namespace elasticjob::storage {

// One node for FillJobNodes.
struct NodeFill {
  std::string node;  // relative to the job
  std::string value;
  bool ephemeral = false;
};

class JobNodeStorage {
 public:
  // REQUIRES: `registry` outlives this object.
  JobNodeStorage(reg::CoordinatorRegistry& registry, std::string job_name)
      : registry_(registry), path_(std::move(job_name)) {}

  const JobNodePath& path() const { return path_; }
  reg::CoordinatorRegistry& registry() { return registry_; }

  Result<bool> IsJobNodeExisted(std::string_view node) {
    return registry_.IsExisted(path_.FullPath(node));
  }
  Result<bool> IsJobRootNodeExisted() { return registry_.IsExisted(path_.FullPath()); }
  Result<std::string> GetJobNodeData(std::string_view node) {
    return registry_.Get(path_.FullPath(node));
  }
  Result<std::string> GetJobNodeDataDirectly(std::string_view node) {
    return registry_.GetDirectly(path_.FullPath(node));
  }
  Result<std::string> GetJobRootNodeData() { return registry_.Get(path_.FullPath()); }
  // Children names sorted descending; an absent node has none.
  Result<std::vector<std::string>> GetJobNodeChildrenKeys(std::string_view node);
  // Creates `node` with an empty value unless it exists or the job itself does not.
  Status CreateJobNodeIfNeeded(std::string_view node);
  Status RemoveJobNodeIfExisted(std::string_view node) {
    return registry_.Remove(path_.FullPath(node));
  }
  Status FillJobNode(std::string_view node, std::string_view value) {
    return registry_.Persist(path_.FullPath(node), value);
  }
  Status FillEphemeralJobNode(std::string_view node, std::string_view value) {
    return registry_.PersistEphemeral(path_.FullPath(node), value);
  }
  Status UpdateJobNode(std::string_view node, std::string_view value) {
    return registry_.Update(path_.FullPath(node), value);
  }
  // Sets `node` whether or not it exists (ElasticJob's replaceJobNode).
  Status ReplaceJobNode(std::string_view node, std::string_view value) {
    return registry_.Persist(path_.FullPath(node), value);
  }
  Status ReplaceJobRootNode(std::string_view value) {
    return registry_.Persist(path_.FullPath(), value);
  }
  // FillJobNode (FillEphemeralJobNode for `ephemeral` ones) of every node, in one
  // transaction: a node the cache has is set (an ephemeral one deleted and created again,
  // as PersistEphemeral does), one it lacks is created after the persistent parents it also
  // lacks. A node made or removed meanwhile by someone else fails the whole transaction,
  // which then changes nothing: the caller may fill them one by one instead.
  // `grouped`: the transaction goes as ExecuteInTransactionGrouped sends it.
  Status FillJobNodes(const std::vector<NodeFill>& fills, bool grouped = false);
  // Creates every node of `fills`, after the persistent parents it needs that are not in
  // `present` (the job's root always is), in one transaction, without asking first what
  // exists: for a job whose nodes the caller knows (one it has just created). Any node that
  // is there by now fails the whole transaction, which then changes nothing.
  Status CreateJobNodes(const std::vector<NodeFill>& fills,
                        const std::vector<std::string_view>& present, bool grouped = false);
  // Creates a container node (and its missing container parents) unless it exists.
  Status CreateJobContainer(std::string_view node) {
    return registry_.CreateContainer(path_.FullPath(node));
  }
  // As CreateJobContainer, for a caller that knows the job's root exists (it has just
  // created it): no request about the root (CoordinatorRegistry::CreateContainerBelow).
  Status CreateJobContainerBelowRoot(std::string_view node) {
    return registry_.CreateContainerBelow(path_.FullPath(node), path_.FullPath());
  }
  // Runs `ops` (keys relative to the job) as one transaction.
  Status ExecuteInTransaction(std::vector<TransactionOp> ops);
  // As ExecuteInTransaction, sent through the registry's asynchronous path, which merges the
  // transactions of concurrent callers into one multi-op (ZooKeeper: one request and one log
  // write for many jobs' start-up writes; a merged one that fails is sent again alone, so
  // each caller gets its own outcome). Blocks until the outcome; a retry after a lost
  // connection runs on the calling thread. SESSION_EXPIRED when the session it was sent in
  // expired meanwhile (the caller decides whether to write again).
  Status ExecuteInTransactionGrouped(std::vector<TransactionOp> ops);
  // As ExecuteInTransaction, without waiting: `done` runs on `executor`.
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done);
  // CoordinatorRegistry::ExecuteInTransactionStampedAsync, with keys relative to the job.
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done);
  Status ExecuteInLeader(std::string_view latch_node, const std::function<void()>& callback) {
    return registry_.ExecuteInLeader(path_.FullPath(latch_node), callback);
  }
  // The registry's clock, via "systemTime/current" (ElasticJob's node for it).
  Result<int64_t> GetRegistryCenterTime() {
    return registry_.GetRegistryCenterTime(path_.FullPath("systemTime/current"));
  }

 private:
  reg::CoordinatorRegistry& registry_;
  const JobNodePath path_;
};

}  // namespace elasticjob::storage

#endif  // ELASTICJOB_STORAGE_JOB_NODE_STORAGE_H_
