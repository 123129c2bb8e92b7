// TaskStore: a run's sub-tasks and results in SQLite (a temp file per run, removed when the
// store goes; docs/task-models.md), so the coordinator's memory does not grow with their
// number. Rows are pending, dispatched or done; a result is taken once per sub-task id (a
// late duplicate is ignored); a failure is retried until `max_attempts` dispatches.
//
// Thread safety: none; the run's coordinator thread owns it.
#ifndef ELASTICJOB_TASK_TASK_STORE_H_
#define ELASTICJOB_TASK_TASK_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/task_job.h"
#include "elasticjob/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace elasticjob::task {

struct StoredTask {
  uint64_t id = 0;
  std::string name;
  std::string payload;
  int attempt = 0;  // this dispatch's number, from 1
};

class TaskStore {
 public:
  // Opens a fresh store in a temp file under `dir` (default: $TMPDIR or /tmp). Fails naming
  // the file and SQLite's message.
  static Result<std::unique_ptr<TaskStore>> OpenTemp(int max_attempts, std::string dir = "");
  ~TaskStore();
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  const std::string& path() const { return path_; }

  // Groups the calls between them in one SQLite transaction (one disk sync at most).
  Status Begin();
  Status Commit();

  // Adds pending sub-tasks named `name`, one per payload (any range of strings).
  template <typename Range>
  Status Add(std::string_view name, const Range& payloads) {
    for (const auto& p : payloads) {
      if (Status s = AddOne(name, p); !s.ok()) return s;
    }
    return Status::Ok();
  }
  // Takes up to `n` pending sub-tasks in id order, marking them dispatched (one attempt more);
  // stops before the payloads pass `max_bytes` (one at least).
  Result<std::vector<StoredTask>> TakePending(int n, size_t max_bytes = SIZE_MAX);

  enum class Recorded { kFirst, kRetry, kFailed, kDuplicate };
  // Records a dispatched sub-task's outcome. kFirst: a success (or a failure after the last
  // attempt: kFailed), done now; kRetry: a failure that goes back to pending; kDuplicate: the
  // sub-task was not dispatched (done already, or requeued): ignored.
  Result<Recorded> Record(uint64_t id, bool success, std::string_view data);
  // A dispatched sub-task whose worker went: pending again, or failed with `reason` when it
  // had its last attempt. Not dispatched: nothing.
  Result<Recorded> Requeue(uint64_t id, std::string_view reason);

  int64_t total() const { return total_; }
  int64_t done() const { return done_; }
  int64_t failed() const { return failed_; }
  int64_t retried() const { return retried_; }
  int64_t pending() const { return pending_; }

  // Every done sub-task in id order.
  Status ForEach(const std::function<void(const SubtaskResult&)>& fn) const;

 private:
  TaskStore(sqlite3* db, std::string path, int max_attempts);
  Status AddOne(std::string_view name, std::string_view payload);
  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  Status Error(std::string_view what) const;

  sqlite3* const db_;
  const std::string path_;
  const int max_attempts_;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* select_pending_ = nullptr;
  sqlite3_stmt* mark_dispatched_ = nullptr;
  sqlite3_stmt* finish_ = nullptr;
  sqlite3_stmt* repend_ = nullptr;
  int64_t total_ = 0;
  int64_t done_ = 0;
  int64_t failed_ = 0;
  int64_t retried_ = 0;
  int64_t pending_ = 0;
};

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_TASK_STORE_H_
