// PgTaskStore: the shared task store (BootstrapOptions::task_store, `postgresql://...`;
// docs/task-models.md). A run's sub-tasks and results in two tables of a PostgreSQL
// database every instance of the job reaches, so that when the coordinator is lost a new
// one resumes the run: finished sub-tasks are kept, the ones in flight go back to pending,
// the root is not run again.
//
//   ej_task_run(run_id PK, job_name, root_done, retried, owner, created_time)
//   ej_task_subtask(run_id, id, name, payload, state, attempts, success, result;
//                   PK (run_id, id); state 0 pending, 1 dispatched, 2 done)
//
// Fencing: a run belongs to the store that created or last resumed it (`owner`); every
// Commit, MarkRootDone and Finish of another fails with FAILED_PRECONDITION (the run was
// taken over) and changes nothing.
//
// Thread safety: none; the run's coordinator thread owns it (one connection).
#ifndef ELASTICJOB_TASK_POSTGRESQL_PG_TASK_STORE_H_
#define ELASTICJOB_TASK_POSTGRESQL_PG_TASK_STORE_H_

#include <memory>
#include <string>
#include <string_view>

#include "elasticjob/status.h"
#include "task/task_store.h"

namespace elasticjob::task {

class PgTaskStore : public TaskStore {
 public:
  // Connects to `url` (postgresql://user:password@host:port/db) and creates the tables when
  // missing. UNAVAILABLE naming the URL (without its password) and the server's reason.
  static Result<std::unique_ptr<PgTaskStore>> Connect(std::string_view url, std::string job_name,
                                                      int max_attempts);

  // Takes over run `run_id` when the store holds it with its root done: the sub-tasks that
  // were dispatched go back to pending (that dispatch does not count as an attempt), the
  // counts are read back; returns true, and resumed() is true. A run whose root had not
  // finished is deleted (it starts again from the root under a new id); none: false.
  virtual Result<bool> Resume(const std::string& run_id) = 0;
  // Starts a new run `run_id`. REQUIRES: not resumed().
  virtual Status Create(const std::string& run_id) = 0;
  // What Resume found: sub-tasks done and sent back to pending.
  virtual int64_t redispatched() const = 0;

 protected:
  using TaskStore::TaskStore;
};

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_POSTGRESQL_PG_TASK_STORE_H_
