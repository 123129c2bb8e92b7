// PgTaskStore: the shared task store (BootstrapOptions::task_store, `postgresql://...`;
// docs/task-models.md). A run's sub-tasks and results in two tables of a PostgreSQL
// database every instance of the job reaches, so that when the coordinator is lost a new
// one resumes the run: finished sub-tasks are kept, the ones dispatched to a worker still
// registered stay with it (the new coordinator waits for them), the others go back to
// pending, the root is not run again. The workers write their outcomes and the sub-tasks
// they map themselves (PgOutcomeWriter), so an outcome never depends on which coordinator
// is current.
//
//   ej_task_run(run_id PK, job_name, root_done, owner, epoch, created_time)
//   ej_task_subtask(run_id, id, name, payload, state, attempts, retries, worker, success,
//                   result; PK (run_id, id); state 0 pending, 1 dispatched (to `worker`),
//                   2 done); ids from the sequence ej_task_subtask_id
//
// Fencing: a run belongs to the store that created or last resumed it (`owner`; each
// resume one `epoch` more); every Commit, MarkRootDone and Finish of another fails with
// FAILED_PRECONDITION (the run was taken over) and changes nothing. A worker's write is
// fenced by the row instead: it takes an outcome only for a sub-task still dispatched to
// that worker with that attempt.
//
// Thread safety: PgTaskStore none (the run's coordinator thread owns it, one connection);
// PgOutcomeWriter is safe to share (a pool of connections, one per concurrent Write).
#ifndef ELASTICJOB_TASK_POSTGRESQL_PG_TASK_STORE_H_
#define ELASTICJOB_TASK_POSTGRESQL_PG_TASK_STORE_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"
#include "task/task_store.h"

typedef struct pg_conn PGconn;

namespace elasticjob::task {

class PgTaskStore : public TaskStore {
 public:
  // Connects to `url` (postgresql://user:password@host:port/db) and creates the tables when
  // missing. UNAVAILABLE naming the URL (without its password) and the server's reason.
  static Result<std::unique_ptr<PgTaskStore>> Connect(std::string_view url, std::string job_name,
                                                      int max_attempts);

  // Takes over run `run_id` when the store holds it with its root done (one epoch more):
  // the sub-tasks dispatched to a worker among `live_workers` (instance ids) stay
  // dispatched to it (awaited()), the other dispatched ones go back to pending (that
  // dispatch does not count as an attempt), the counts are read back; returns true, and
  // resumed() is true. A run whose root had not finished is deleted (it starts again from
  // the root under a new id); none: false.
  virtual Result<bool> Resume(const std::string& run_id,
                              const std::vector<std::string>& live_workers = {}) = 0;
  // Starts a new run `run_id`. REQUIRES: not resumed().
  virtual Status Create(const std::string& run_id) = 0;
  // What Resume found: sub-tasks done and sent back to pending.
  virtual int64_t redispatched() const = 0;

 protected:
  using TaskStore::TaskStore;
};

// The worker's side of the shared store: writes a batch's outcomes, and the sub-tasks the
// successful ones mapped, in one transaction.
class PgOutcomeWriter {
 public:
  // Checks `url` (postgresql://...); connects on the first Write.
  static Result<std::unique_ptr<PgOutcomeWriter>> Create(std::string_view url);
  ~PgOutcomeWriter();
  PgOutcomeWriter(const PgOutcomeWriter&) = delete;
  PgOutcomeWriter& operator=(const PgOutcomeWriter&) = delete;

  struct Outcome {
    uint64_t id = 0;
    int attempt = 0;  // the dispatch's number, as sent
    bool success = false;
    std::string_view data;  // the result, or the failure's message
    // (name, payload) of each sub-task it mapped: added with a first success only.
    std::vector<std::pair<std::string_view, std::string_view>> mapped;
  };
  // Records each outcome of run `run_id` whose sub-task is dispatched to `worker` with that
  // attempt: a success is done (kFirst), a failure pending again (kRetry) or, at its
  // `max_attempts`-th attempt, done (kFailed); anything else is ignored (kDuplicate: the
  // sub-task went elsewhere or is done). One transaction; on failure nothing is recorded
  // and the reason names the store.
  Result<std::vector<TaskStore::Recorded>> Write(const std::string& run_id,
                                                 const std::string& worker, int max_attempts,
                                                 const std::vector<Outcome>& outcomes);

 private:
  explicit PgOutcomeWriter(std::string url, std::string redacted)
      : url_(std::move(url)), redacted_(std::move(redacted)) {}
  Result<PGconn*> Take();
  void Give(PGconn* conn);

  const std::string url_;
  const std::string redacted_;
  Mutex mu_;
  std::vector<PGconn*> idle_ ELASTICJOB_GUARDED_BY(mu_);  // connections between writes
};

}  // namespace elasticjob::task

#endif  // ELASTICJOB_TASK_POSTGRESQL_PG_TASK_STORE_H_
