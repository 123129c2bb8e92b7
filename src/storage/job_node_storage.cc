#include "storage/job_node_storage.h"

namespace elasticjob::storage {

Result<std::vector<std::string>> JobNodeStorage::GetJobNodeChildrenKeys(std::string_view node) {
  auto children = registry_.GetChildrenKeys(path_.FullPath(node));
  if (!children.ok() && children.status().code() == StatusCode::kNotFound) {
    return std::vector<std::string>{};
  }
  return children;
}

Status JobNodeStorage::CreateJobNodeIfNeeded(std::string_view node) {
  // As ElasticJob: only for a job that exists, so a removed job is not brought back.
  auto root = IsJobRootNodeExisted();
  if (!root.ok() || !*root) return root.status();
  auto exists = IsJobNodeExisted(node);
  if (!exists.ok() || *exists) return exists.status();
  return registry_.Persist(path_.FullPath(node), "");
}

Status JobNodeStorage::ExecuteInTransaction(std::vector<TransactionOp> ops) {
  for (auto& op : ops) op.key = path_.FullPath(op.key);
  return registry_.ExecuteInTransaction(ops);
}

void JobNodeStorage::ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                               std::function<void(Status)> done) {
  for (auto& op : ops) op.key = path_.FullPath(op.key);
  registry_.ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
}

}  // namespace elasticjob::storage
