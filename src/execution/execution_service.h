// ExecutionService: the marks one run leaves in the registry, ElasticJob's ExecutionService.
//
// With monitorExecution, a run marks its items `sharding/{i}/running` (value: the instance
// id; ephemeral, persistent when failover is on so a crash leaves them for failover) when it
// begins and clears them when it completes. Unlike ElasticJob, all the items of one run are
// marked in ONE multi-op and cleared in one more: two registry writes per run, whatever the
// number of items. A trigger that finds its items still running marks them `misfire`
// (the executor knows which of its items run; JobExecutor).
//
// Running marks are outside the registry cache (storage::JobNodeWatches): marking costs no
// read before and no watch after, and readers of the marks ask the server.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_EXECUTION_EXECUTION_SERVICE_H_
#define ELASTICJOB_EXECUTION_EXECUTION_SERVICE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/config/job_configuration.h"
#include "infra/log.h"
#include "storage/job_node_storage.h"

namespace elasticjob::execution {

class ExecutionService {
 public:
  // REQUIRES: `storage` outlives this object. `log`: where the job's lines go.
  ExecutionService(storage::JobNodeStorage& storage, std::string instance_id,
                   infra::JobLogger log = {})
      : storage_(storage), instance_id_(std::move(instance_id)), log_(std::move(log)) {}

  // Marks `items` running (one multi-op), resolving conflicts as ClaimAsync does; ALREADY_EXISTS
  // when another live instance holds one of them. No-op without monitorExecution.
  Status RegisterJobBegin(const JobConfiguration& config, const std::vector<int>& items);
  // Clears the running marks of `items` (one multi-op). No-op without monitorExecution.
  Status RegisterJobCompleted(const JobConfiguration& config, const std::vector<int>& items);
  // As RegisterJobCompleted, without waiting for the registry: the multi-op is sent and
  // `done` runs on `executor` once it is applied. A trigger thread never waits this way.
  void RegisterJobCompletedAsync(const JobConfiguration& config, std::vector<int> items,
                                 Executor& executor, std::function<void(Status)> done);
  // The registry's session count (CoordinatorRegistry::session_epoch).
  uint64_t session_epoch() { return storage_.registry().session_epoch(); }
  // The registry's session lease (CoordinatorRegistry::LeaseHeld, AwaitLease, lease_bound).
  bool LeaseHeld() { return storage_.registry().LeaseHeld(); }
  bool AwaitLease(std::chrono::steady_clock::time_point deadline) {
    return storage_.registry().AwaitLease(deadline);
  }
  std::chrono::milliseconds lease_bound() { return storage_.registry().lease_bound(); }
  std::chrono::steady_clock::time_point lease_expiry() {
    return storage_.registry().lease_expiry();
  }
  std::chrono::milliseconds session_timeout() { return storage_.registry().session_timeout(); }
  // Claims `items` for a run of this instance: their running marks are created (one
  // multi-op) before any of them starts, so that no item runs on two instances at once. A
  // mark already there is a conflict, resolved per item: ours (a run a lost session cut
  // short: this instance claims only items it does not run) or one whose owner is no longer
  // registered (a crashed instance's, failover on) is replaced; one whose owner is still
  // registered is left alone and that item is not claimed (logged). `done` runs on
  // `executor` with the items claimed (all of them without monitorExecution), or an error:
  // then nothing is claimed. A claim whose session was lost before it was confirmed is
  // void: the marks it wrote are removed and it fails with UNAVAILABLE (the run it was for
  // was planned in a session whose items may have gone to others). With the items, `done`
  // gets the claim's fencing token (docs/runtime.md): the zxid of the transaction that wrote
  // the marks (or, for a claim whose conflicts were resolved one by one, of a transaction
  // setting every claimed mark after that), which exceeds every earlier claim of these items
  // by any instance; 0 without monitorExecution (no marks, no token) or nothing claimed.
  // The claim's answer renews the session lease; a call that sends none (no marks) renews it
  // ahead when it is past half its bound (RegistryCenter::LeaseHeld).
  void ClaimAsync(const JobConfiguration& config, std::vector<int> items, Executor& executor,
                  std::function<void(Result<std::vector<int>>, int64_t fencing_token)> done);
  // Whether any of `items` is marked running (asks the server: marks are outside the cache).
  Result<bool> HasRunningItems(const std::vector<int>& items);
  Status SetMisfire(const std::vector<int>& items);
  Result<std::vector<int>> GetMisfiredJobItems(const std::vector<int>& items);
  Status ClearMisfire(const std::vector<int>& items);
  // As SetMisfire and ClearMisfire without waiting: the marks are created (deleted) in one
  // multi-op, sent in order with the job's other asynchronous writes (no look in the cache
  // first: a write of ours still on its way is not in it yet). A mark already there (gone)
  // fails it; then each mark is set (cleared) on its own, on `executor`. A failure is
  // logged: a trigger thread never waits for these marks.
  void SetMisfireAsync(std::vector<int> items, Executor& executor);
  void ClearMisfireAsync(std::vector<int> items, Executor& executor);
  // The items an operator disabled (`sharding/{i}/disabled`).
  Result<std::vector<int>> GetDisabledItems(const std::vector<int>& items);
  // Removes every running mark of the job (monitorExecution switched off).
  Status ClearAllRunningInfo(int sharding_total_count);
  // Removes the running marks of `items` that this instance holds (from the server), one at
  // a time; another instance's marks stay.
  Status ClearOwnRunningInfo(const std::vector<int>& items);
  // Removes the running marks of `items`, one at a time (one already gone is fine).
  Status ClearRunningInfo(const std::vector<int>& items);
  // Item -> runner's instance id, for every item among [0, total) marked running.
  Result<std::map<int, std::string>> GetAllRunningItems(int sharding_total_count);

 private:
  // Sends `ops` (misfire marks) without waiting; if a mark is already there or gone, runs
  // `one_by_one` on `executor`; logs a failure as "misfire marks not {what}".
  void MisfireMarksAsync(std::vector<TransactionOp> ops, Executor& executor, const char* what,
                         std::function<Status()> one_by_one);
  // The multi-op that marks `items` running.
  std::vector<TransactionOp> BeginOps(CreateMode mode, const std::vector<int>& items) const;
  // The claim's multi-op failed with `failed`: resolves each conflict as ClaimAsync says and
  // marks what is left. Returns the items claimed.
  Result<std::vector<int>> RecoverClaim(Status failed, CreateMode mode, std::vector<int> items);
  // The owner of `item`'s running mark if it is another instance still registered (asked of
  // the server); nullopt when there is no mark, it is ours, or its owner is gone.
  Result<std::optional<std::string>> LiveOwner(int item);
  // Creates the item nodes of `items` that are missing (a job not sharded yet).
  Status FillItemNodes(const std::vector<int>& items);

  storage::JobNodeStorage& storage_;
  const std::string instance_id_;
  const infra::JobLogger log_;
};

}  // namespace elasticjob::execution

#endif  // ELASTICJOB_EXECUTION_EXECUTION_SERVICE_H_
