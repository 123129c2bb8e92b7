// TaskStore: a run's sub-tasks and results (docs/task-models.md), so the coordinator's memory
// does not grow with their number. Rows are pending, dispatched or done; a result is taken
// once per sub-task id (a late duplicate is ignored); a failure is retried until
// `max_attempts` dispatches. Two kinds: the local store (SQLite, a temp file per run, removed
// when the store goes; OpenTemp) and the shared one (PostgreSQL, task/postgresql/
// pg_task_store.h), from which a new coordinator resumes a run its predecessor left, and
// into which the workers write their outcomes themselves (workers_record()).
//
// Thread safety: none; the run's coordinator thread owns it.
#ifndef ELASTICJOB_TASK_TASK_STORE_H_
#define ELASTICJOB_TASK_TASK_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/task_job.h"
#include "elasticjob/status.h"

namespace elasticjob::task {

struct StoredTask {
  uint64_t id = 0;
  std::string name;
  std::string payload;
  int attempt = 0;  // this dispatch's number, from 1
};

class TaskStore {
 public:
  // Opens a fresh local store in a temp file under `dir` (default: $TMPDIR or /tmp). Fails
  // naming the file and SQLite's message.
  static Result<std::unique_ptr<TaskStore>> OpenTemp(int max_attempts, std::string dir = "");
  virtual ~TaskStore() = default;
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  // The local store's file, or the shared store's URL (password hidden).
  virtual const std::string& path() const = 0;
  // A store another coordinator can resume the run from (PostgreSQL).
  virtual bool shared() const { return false; }
  // The store holds a run whose root task had finished (a resumed run): the coordinator
  // skips the root and goes on with what is pending.
  virtual bool resumed() const { return false; }
  // The root task finished and its sub-tasks are stored (a shared store remembers it).
  virtual Status MarkRootDone() { return Status::Ok(); }
  // The run is over: a shared store deletes its rows.
  virtual Status Finish() { return Status::Ok(); }
  // The workers record their sub-tasks' outcomes in the store themselves (the shared store):
  // the coordinator sends them batches with RunTasksRequest::worker_records and counts what
  // their replies say (Count).
  virtual bool workers_record() const { return false; }
  // This coordinator's epoch for the run (0, then one more per resume).
  virtual uint64_t epoch() const { return 0; }
  // A resumed run: the workers (instance id -> sub-tasks) that still hold sub-tasks the
  // previous coordinator dispatched to them; the coordinator waits for them (AwaitRun).
  virtual std::map<std::string, int64_t> awaited() const { return {}; }
  // The sub-tasks still dispatched to `worker` go back to pending: without counting that
  // dispatch as an attempt (`lost == false`: they never ran), or as a lost worker's (an
  // attempt, failed with `reason` after the last). Then the counts are read again. Only
  // the shared store records a sub-task's worker: elsewhere nothing.
  virtual Status RequeueWorker(const std::string& worker, bool lost, std::string_view reason) {
    (void)worker, (void)lost, (void)reason;
    return Status::Ok();
  }
  // Reads the counts again from the store (what workers recorded that no reply reported);
  // `pending_only`: the pending count alone (cheaper).
  virtual Status Reload(bool pending_only = false) {
    (void)pending_only;
    return Status::Ok();
  }

  // Groups the calls between them in one transaction.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;

  // Adds pending sub-tasks named `name`, one per payload (any range of strings).
  template <typename Range>
  Status Add(std::string_view name, const Range& payloads) {
    std::vector<std::string_view> views;
    views.reserve(static_cast<size_t>(payloads.size()));
    for (const auto& p : payloads) views.emplace_back(p);
    return AddAll(name, views);
  }
  // Takes up to `n` pending sub-tasks in id order, marking them dispatched (one attempt more)
  // to `worker` (an instance id; the shared store records it); stops before the payloads
  // pass `max_bytes` (one at least).
  virtual Result<std::vector<StoredTask>> TakePending(int n, size_t max_bytes = SIZE_MAX,
                                                      std::string_view worker = "") = 0;

  enum class Recorded { kFirst, kRetry, kFailed, kDuplicate };
  // Records a dispatched sub-task's outcome. kFirst: a success (or a failure after the last
  // attempt: kFailed), done now; kRetry: a failure that goes back to pending; kDuplicate: the
  // sub-task was not dispatched (done already, or requeued): ignored.
  virtual Result<Recorded> Record(uint64_t id, bool success, std::string_view data) = 0;
  // Record of each of a reply's outcomes, in order (one statement for the successes in a
  // shared store). The ids are distinct.
  struct Outcome {
    uint64_t id = 0;
    bool success = false;
    std::string_view data;
  };
  virtual Result<std::vector<Recorded>> RecordAll(const std::vector<Outcome>& outcomes);
  // A dispatched sub-task whose worker went: pending again, or failed with `reason` when it
  // had its last attempt. Not dispatched: nothing.
  Result<Recorded> Requeue(uint64_t id, std::string_view reason) {
    return Record(id, false, reason);
  }

  // A worker recorded an outcome (workers_record()): the counts follow, `mapped` sub-tasks
  // were added with a first success.
  void Count(Recorded recorded, int64_t mapped);

  int64_t total() const { return total_; }
  int64_t done() const { return done_; }
  int64_t failed() const { return failed_; }
  int64_t retried() const { return retried_; }
  int64_t pending() const { return pending_; }

  // Every done sub-task in id order.
  virtual Status ForEach(const std::function<void(const SubtaskResult&)>& fn) const = 0;

 protected:
  explicit TaskStore(int max_attempts) : max_attempts_(max_attempts < 1 ? 1 : max_attempts) {}
  virtual Status AddOne(std::string_view name, std::string_view payload) = 0;
  // AddOne of each (one statement in a shared store).
  virtual Status AddAll(std::string_view name, const std::vector<std::string_view>& payloads);

  const int max_attempts_;
  int64_t total_ = 0;
  int64_t done_ = 0;
  int64_t failed_ = 0;
  int64_t retried_ = 0;
  int64_t pending_ = 0;
};

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_TASK_STORE_H_
