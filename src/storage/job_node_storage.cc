#include "storage/job_node_storage.h"

#include <deque>
#include <optional>
#include <set>

#include "elasticjob/mutex.h"

namespace elasticjob::storage {

namespace {

// The executor of a caller that waits for one asynchronous outcome: what is posted to it
// (the outcome, or a retry of the write) runs on the waiting thread, which blocks anyway.
class CallerRunsExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override {
    MutexLock lock(&mu_);
    tasks_.push_back(std::move(task));
    posted_.Signal();
  }
  // Runs what is posted until `done` returns true.
  void RunUntil(const std::function<bool()>& done) {
    while (!done()) {
      std::function<void()> task;
      {
        MutexLock lock(&mu_);
        while (tasks_.empty()) posted_.Wait();
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

 private:
  Mutex mu_;
  CondVar posted_{&mu_};
  std::deque<std::function<void()>> tasks_;  // GUARDED_BY(mu_)
};

}  // namespace

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

namespace {

// Appends the creation of `f` to `ops`, after its missing parents (outermost first; the
// job's root exists: the caller set it up). `known`: parents there or created by `ops`
// already; `there(parent)` asks about the others.
template <typename There>
Status AppendCreate(const NodeFill& f, std::set<std::string, std::less<>>& known, There there,
                    std::vector<TransactionOp>& ops) {
  std::vector<std::string> parents;  // innermost first
  for (size_t slash = f.node.rfind('/'); slash != std::string::npos && slash > 0;
       slash = f.node.rfind('/', slash - 1)) {
    std::string parent = f.node.substr(0, slash);
    if (known.count(parent) != 0) break;
    Result<bool> is_there = there(parent);
    if (!is_there.ok()) return is_there.status();
    if (*is_there) break;
    parents.push_back(std::move(parent));
  }
  for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
    ops.push_back(TransactionOp::Create(*it, ""));
    known.insert(*it);
  }
  ops.push_back(TransactionOp::Create(
      f.node, f.value, f.ephemeral ? CreateMode::kEphemeral : CreateMode::kPersistent));
  return Status::Ok();
}

}  // namespace

Status JobNodeStorage::FillJobNodes(const std::vector<NodeFill>& fills, bool grouped) {
  std::vector<TransactionOp> ops;
  std::set<std::string, std::less<>> creating;  // parents this transaction creates
  for (const NodeFill& f : fills) {
    auto exists = IsJobNodeExisted(f.node);
    if (!exists.ok()) return exists.status();
    if (*exists && !f.ephemeral) {
      ops.push_back(TransactionOp::SetData(f.node, f.value));
      continue;
    }
    if (*exists) ops.push_back(TransactionOp::Delete(f.node));
    Status s = AppendCreate(
        f, creating, [this](const std::string& parent) { return IsJobNodeExisted(parent); }, ops);
    if (!s.ok()) return s;
  }
  return grouped ? ExecuteInTransactionGrouped(std::move(ops))
                 : ExecuteInTransaction(std::move(ops));
}

Status JobNodeStorage::CreateJobNodes(const std::vector<NodeFill>& fills,
                                      const std::vector<std::string_view>& present, bool grouped) {
  std::vector<TransactionOp> ops;
  std::set<std::string, std::less<>> known(present.begin(), present.end());
  for (const NodeFill& f : fills) {
    (void)AppendCreate(
        f, known, [](const std::string&) { return Result<bool>(false); }, ops);
    known.insert(f.node);
  }
  return grouped ? ExecuteInTransactionGrouped(std::move(ops))
                 : ExecuteInTransaction(std::move(ops));
}

Status JobNodeStorage::ExecuteInTransaction(std::vector<TransactionOp> ops) {
  for (auto& op : ops) op.key = path_.FullPath(op.key);
  return registry_.ExecuteInTransaction(ops);
}

Status JobNodeStorage::ExecuteInTransactionGrouped(std::vector<TransactionOp> ops) {
  CallerRunsExecutor executor;
  std::optional<Status> outcome;  // only the waiting thread touches it (tasks run there)
  ExecuteInTransactionAsync(std::move(ops), executor, [&outcome](Status s) { outcome = s; });
  executor.RunUntil([&outcome] { return outcome.has_value(); });
  return *outcome;
}

void JobNodeStorage::ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                               std::function<void(Status)> done) {
  for (auto& op : ops) op.key = path_.FullPath(op.key);
  registry_.ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
}

void JobNodeStorage::ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops,
                                                      Executor& executor,
                                                      std::function<void(Result<int64_t>)> done) {
  for (auto& op : ops) op.key = path_.FullPath(op.key);
  registry_.ExecuteInTransactionStampedAsync(std::move(ops), executor, std::move(done));
}

}  // namespace elasticjob::storage
