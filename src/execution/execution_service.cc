#include "execution/execution_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "failover/failover_node.h"
#include "infra/log.h"
#include "sharding/sharding_node.h"

namespace elasticjob::execution {
namespace {

// Running marks outlive a crash (for failover) only when failover is on.
CreateMode MarkMode(const JobConfiguration& config) {
  return config.failover ? CreateMode::kPersistent : CreateMode::kEphemeral;
}

}  // namespace

using sharding::MisfireNode;
using sharding::RunningNode;

std::vector<TransactionOp> ExecutionService::BeginOps(CreateMode mode,
                                                      const std::vector<int>& items) const {
  // No look first: running marks are outside the cache (storage::JobNodeWatches), and a
  // mark that is already there fails the multi-op (RecoverClaim).
  std::vector<TransactionOp> ops;
  for (int item : items)
    ops.push_back(TransactionOp::Create(RunningNode(item), instance_id_, mode));
  return ops;
}

Status ExecutionService::FillItemNodes(const std::vector<int>& items) {
  for (int item : items) {
    auto exists = storage_.IsJobNodeExisted(sharding::ItemNode(item));
    if (!exists.ok()) return exists.status();
    if (!*exists) {
      if (Status c = storage_.FillJobNode(sharding::ItemNode(item), ""); !c.ok()) return c;
    }
  }
  return Status::Ok();
}

Status ExecutionService::RegisterJobBegin(const JobConfiguration& config,
                                          const std::vector<int>& items) {
  if (!config.monitor_execution || items.empty()) return Status::Ok();
  const CreateMode mode = MarkMode(config);
  Status s = storage_.ExecuteInTransaction(BeginOps(mode, items));
  if (s.ok()) return s;
  auto claimed = RecoverClaim(std::move(s), mode, items);
  if (!claimed.ok()) return claimed.status();
  if (claimed->size() != items.size()) {
    return Status(StatusCode::kAlreadyExists, "an item is running on another instance");
  }
  return Status::Ok();
}

Status ExecutionService::RegisterJobCompleted(const JobConfiguration& config,
                                              const std::vector<int>& items) {
  if (!config.monitor_execution || items.empty()) return Status::Ok();
  std::vector<TransactionOp> ops;
  for (int item : items) ops.push_back(TransactionOp::Delete(RunningNode(item)));
  Status s = storage_.ExecuteInTransaction(std::move(ops));
  if (s.code() != StatusCode::kNotFound) return s;
  return ClearRunningInfo(items);
}

void ExecutionService::ClaimAsync(
    const JobConfiguration& config, std::vector<int> items, Executor& executor,
    std::function<void(Result<std::vector<int>>, int64_t fencing_token)> done) {
  if (!config.monitor_execution || items.empty()) {
    // No claim goes to the server, whose answer would renew the session lease: renewed
    // ahead here instead when it is past half its bound, so that the starts at the fire
    // time find it held and wait for nothing. A claim sent renews it with its answer: a
    // probe beside it would be a request for nothing (half the requests of an every-2-s
    // job on a server granting 10 s sessions: docs/benchmarks.md, packets).
    (void)LeaseHeld();
    return done(std::move(items), 0);
  }
  const CreateMode mode = MarkMode(config);
  const uint64_t epoch = storage_.registry().session_epoch();
  std::vector<TransactionOp> ops = BeginOps(mode, items);  // before `items` moves below
  // The end of every path: a claim confirmed in a later session than planned is void.
  auto finish = [this, epoch](Result<std::vector<int>> claimed, int64_t token,
                              const std::function<void(Result<std::vector<int>>, int64_t)>& reply) {
    if (claimed.ok() && storage_.registry().session_epoch() != epoch) {
      // Written, if at all, in a later session than the run was planned in (a write is
      // retried on the new session): the plan may have given these items to others.
      (void)ClearRunningInfo(*claimed);
      claimed = Status(StatusCode::kUnavailable,
                       "the registry session was lost while the running marks were written");
    }
    const int64_t fencing_token = claimed.ok() ? token : 0;
    reply(std::move(claimed), fencing_token);
  };
  storage_.ExecuteInTransactionStampedAsync(
      std::move(ops), executor,
      [this, mode, &executor, finish, items = std::move(items),
       done = std::move(done)](Result<int64_t> stamp) mutable {
        if (stamp.ok()) return finish(std::move(items), *stamp, done);
        Result<std::vector<int>> claimed = RecoverClaim(stamp.status(), mode, std::move(items));
        if (!claimed.ok() || claimed->empty()) return finish(std::move(claimed), 0, done);
        // Marked one by one: one more transaction, after all of them, gives the token (a
        // later claim of any of these items is a later transaction still).
        std::vector<TransactionOp> stamp_ops;
        for (int item : *claimed) {
          stamp_ops.push_back(TransactionOp::SetData(RunningNode(item), instance_id_));
        }
        storage_.ExecuteInTransactionStampedAsync(
            std::move(stamp_ops), executor,
            [finish, claimed = *std::move(claimed),
             done = std::move(done)](Result<int64_t> restamp) mutable {
              if (!restamp.ok()) return finish(restamp.status(), 0, done);
              finish(std::move(claimed), *restamp, done);
            });
      });
}

Result<std::optional<std::string>> ExecutionService::LiveOwner(int item) {
  auto owner = storage_.GetJobNodeDataDirectly(RunningNode(item));
  if (!owner.ok() && owner.status().code() == StatusCode::kNotFound)
    return std::optional<std::string>();
  if (!owner.ok()) return owner.status();
  if (*owner == instance_id_) return std::optional<std::string>();
  // From the server: a cache may not have seen the owner leave (or come back).
  auto registered = storage_.GetJobNodeDataDirectly("instances/" + *owner);
  if (registered.ok()) return std::optional<std::string>(*owner);
  if (registered.status().code() != StatusCode::kNotFound) return registered.status();
  return std::optional<std::string>();
}

Result<std::vector<int>> ExecutionService::RecoverClaim(Status failed, CreateMode mode,
                                                        std::vector<int> items) {
  std::vector<int> taken;  // claimed by a replacement under the latch
  auto result = [&](std::vector<int> marked) {
    marked.insert(marked.end(), taken.begin(), taken.end());
    std::sort(marked.begin(), marked.end());
    return marked;
  };
  // Each pass resolves every conflict it finds, so it ends within one pass per item.
  for (size_t pass = 0; pass <= items.size() + 1; ++pass) {
    if (failed.ok()) return result(std::move(items));
    if (failed.code() == StatusCode::kNotFound) {
      if (Status c = FillItemNodes(items); !c.ok()) return c;
    } else if (failed.code() == StatusCode::kAlreadyExists) {
      std::vector<int> free;
      std::vector<int> departed;  // marks of instances no longer registered
      for (int item : items) {
        auto owner = storage_.GetJobNodeDataDirectly(RunningNode(item));
        if (!owner.ok() && owner.status().code() == StatusCode::kNotFound) {
          free.push_back(item);
        } else if (!owner.ok()) {
          return owner.status();
        } else if (*owner == instance_id_) {
          // Ours, left by a run a lost session cut short (this instance claims only items
          // it does not run): no one else replaces a registered instance's mark.
          if (Status r = storage_.RemoveJobNodeIfExisted(RunningNode(item)); !r.ok()) return r;
          free.push_back(item);
        } else {
          departed.push_back(item);
        }
      }
      // Replacing another instance's mark is taking its item over: under the failover latch,
      // so that two instances finding the same departed owner do not both replace it (the
      // second would delete the first one's fresh mark).
      Status inner;
      if (!departed.empty()) {
        Status s = storage_.ExecuteInLeader(failover::kLatch, [&] {
          for (int item : departed) {
            auto live = LiveOwner(item);
            if (!live.ok()) {
              inner = live.status();
              return;
            }
            if (live->has_value()) {
              log_("WARN", fmt::format("job '{}' item {}: running on {}, which is "
                                       "still registered: not run here",
                                       storage_.path().job_name(), item, **live));
              continue;
            }
            auto owner = storage_.GetJobNodeDataDirectly(RunningNode(item));
            if (owner.ok() && *owner != instance_id_) {
              log_("WARN", fmt::format("job '{}' item {}: replacing the running mark "
                                       "of {}, which is no longer registered",
                                       storage_.path().job_name(), item, *owner));
            }
            std::vector<TransactionOp> ops;
            if (owner.ok()) ops.push_back(TransactionOp::Delete(RunningNode(item)));
            ops.push_back(TransactionOp::Create(RunningNode(item), instance_id_, mode));
            Status r = storage_.ExecuteInTransaction(ops);
            if (r.ok()) {
              taken.push_back(item);
            } else if (r.code() != StatusCode::kAlreadyExists &&
                       r.code() != StatusCode::kNotFound) {
              inner = r;
              return;
            }  // else it changed meanwhile: someone else's now, not run here
          }
        });
        if (!s.ok()) return s;
      }
      if (!inner.ok()) return inner;
      items = std::move(free);
    } else {
      return failed;
    }
    if (items.empty()) return result({});
    failed = storage_.ExecuteInTransaction(BeginOps(mode, items));
  }
  if (!failed.ok()) return failed;
  return result(std::move(items));
}

void ExecutionService::RegisterJobCompletedAsync(const JobConfiguration& config,
                                                 std::vector<int> items, Executor& executor,
                                                 std::function<void(Status)> done) {
  if (!config.monitor_execution || items.empty()) return done(Status::Ok());
  std::vector<TransactionOp> ops;
  for (int item : items) ops.push_back(TransactionOp::Delete(RunningNode(item)));
  storage_.ExecuteInTransactionAsync(
      std::move(ops), executor,
      [this, items = std::move(items), done = std::move(done)](Status s) mutable {
        if (s.code() == StatusCode::kNotFound) s = ClearRunningInfo(items);
        done(std::move(s));
      });
}

Result<bool> ExecutionService::HasRunningItems(const std::vector<int>& items) {
  for (int item : items) {
    auto running = storage_.IsJobNodeExisted(RunningNode(item));
    if (!running.ok() || *running) return running;
  }
  return false;
}

Status ExecutionService::SetMisfire(const std::vector<int>& items) {
  for (int item : items) {
    if (Status s = storage_.CreateJobNodeIfNeeded(MisfireNode(item)); !s.ok()) return s;
  }
  return Status::Ok();
}

void ExecutionService::SetMisfireAsync(std::vector<int> items, Executor& executor) {
  // No look in the cache first: a write of ours still on its way would not be in it yet.
  std::vector<TransactionOp> ops;
  for (int item : items) ops.push_back(TransactionOp::Create(MisfireNode(item), ""));
  MisfireMarksAsync(std::move(ops), executor, "written",
                    [this, items = std::move(items)] { return SetMisfire(items); });
}

void ExecutionService::ClearMisfireAsync(std::vector<int> items, Executor& executor) {
  std::vector<TransactionOp> ops;
  for (int item : items) ops.push_back(TransactionOp::Delete(MisfireNode(item)));
  MisfireMarksAsync(std::move(ops), executor, "cleared",
                    [this, items = std::move(items)] { return ClearMisfire(items); });
}

void ExecutionService::MisfireMarksAsync(std::vector<TransactionOp> ops, Executor& executor,
                                         const char* what, std::function<Status()> one_by_one) {
  if (ops.empty()) return;
  storage_.ExecuteInTransactionAsync(
      std::move(ops), executor, [this, what, one_by_one = std::move(one_by_one)](Status s) {
        // A mark already there (for a create) or gone (for a delete): each on its own.
        if (s.code() == StatusCode::kAlreadyExists || s.code() == StatusCode::kNotFound)
          s = one_by_one();
        if (!s.ok() && s.code() != StatusCode::kCancelled) {
          log_("WARN", fmt::format("job '{}': misfire marks not {}: {}", storage_.path().job_name(),
                                   what, s.ToString()));
        }
      });
}

Result<std::vector<int>> ExecutionService::GetMisfiredJobItems(const std::vector<int>& items) {
  std::vector<int> out;
  for (int item : items) {
    auto m = storage_.IsJobNodeExisted(MisfireNode(item));
    if (!m.ok()) return m.status();
    if (*m) out.push_back(item);
  }
  return out;
}

Status ExecutionService::ClearMisfire(const std::vector<int>& items) {
  for (int item : items) {
    if (Status s = storage_.RemoveJobNodeIfExisted(MisfireNode(item)); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::vector<int>> ExecutionService::GetDisabledItems(const std::vector<int>& items) {
  std::vector<int> out;
  for (int item : items) {
    auto d = storage_.IsJobNodeExisted(sharding::DisabledNode(item));
    if (!d.ok()) return d.status();
    if (*d) out.push_back(item);
  }
  return out;
}

Status ExecutionService::ClearAllRunningInfo(int sharding_total_count) {
  std::vector<int> all;
  for (int i = 0; i < sharding_total_count; ++i) all.push_back(i);
  return ClearRunningInfo(all);
}

Status ExecutionService::ClearOwnRunningInfo(const std::vector<int>& items) {
  for (int i : items) {
    auto owner = storage_.GetJobNodeDataDirectly(RunningNode(i));
    if (!owner.ok() && owner.status().code() == StatusCode::kNotFound) continue;
    if (!owner.ok()) return owner.status();
    if (*owner != instance_id_) continue;  // another instance's run: not ours to clear
    if (Status s = storage_.RemoveJobNodeIfExisted(RunningNode(i)); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ExecutionService::ClearRunningInfo(const std::vector<int>& items) {
  for (int i : items) {
    if (Status s = storage_.RemoveJobNodeIfExisted(RunningNode(i)); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::map<int, std::string>> ExecutionService::GetAllRunningItems(int total) {
  std::map<int, std::string> out;
  for (int i = 0; i < total; ++i) {
    // From the server: running marks are outside the cache.
    auto runner = storage_.GetJobNodeDataDirectly(RunningNode(i));
    if (runner.ok()) out.emplace(i, *runner);
    if (!runner.ok() && runner.status().code() != StatusCode::kNotFound) return runner.status();
  }
  return out;
}

}  // namespace elasticjob::execution
