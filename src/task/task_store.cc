#include "task/task_store.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>

namespace elasticjob::task {

namespace {

// States: 0 pending, 1 dispatched, 2 done.

std::string_view Blob(sqlite3_stmt* stmt, int col) {
  const void* p = sqlite3_column_blob(stmt, col);
  int n = sqlite3_column_bytes(stmt, col);
  return p == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(p), n);
}

// The local store: SQLite in a temp file, removed with the store.
class SqliteTaskStore final : public TaskStore {
 public:
  SqliteTaskStore(sqlite3* db, std::string path, int max_attempts)
      : TaskStore(max_attempts), db_(db), path_(std::move(path)) {}
  ~SqliteTaskStore() override;

  const std::string& path() const override { return path_; }
  Status Begin() override { return Exec("BEGIN"); }
  Status Commit() override { return Exec("COMMIT"); }
  Result<std::vector<StoredTask>> TakePending(int n, size_t max_bytes,
                                              std::string_view worker) override;
  Result<Recorded> Record(uint64_t id, bool success, std::string_view data) override;
  Status ForEach(const std::function<void(const SubtaskResult&)>& fn) const override;

  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** stmt);

  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* select_pending_ = nullptr;
  sqlite3_stmt* mark_dispatched_ = nullptr;
  sqlite3_stmt* finish_ = nullptr;
  sqlite3_stmt* repend_ = nullptr;

 private:
  Status AddOne(std::string_view name, std::string_view payload) override;
  Status Error(std::string_view what) const;

  sqlite3* const db_;
  const std::string path_;
};

}  // namespace

Status TaskStore::AddAll(std::string_view name, const std::vector<std::string_view>& payloads) {
  for (std::string_view p : payloads) {
    if (Status s = AddOne(name, p); !s.ok()) return s;
  }
  return Status::Ok();
}

void TaskStore::Count(Recorded recorded, int64_t mapped) {
  switch (recorded) {
    case Recorded::kFirst:
      ++done_;
      total_ += mapped;
      pending_ += mapped;
      break;
    case Recorded::kRetry:
      ++pending_;
      ++retried_;
      break;
    case Recorded::kFailed:
      ++done_;
      ++failed_;
      break;
    case Recorded::kDuplicate:
      break;
  }
}

Result<std::vector<TaskStore::Recorded>> TaskStore::RecordAll(
    const std::vector<Outcome>& outcomes) {
  std::vector<Recorded> out;
  out.reserve(outcomes.size());
  for (const Outcome& o : outcomes) {
    auto r = Record(o.id, o.success, o.data);
    if (!r.ok()) return r.status();
    out.push_back(*r);
  }
  return out;
}

Result<std::unique_ptr<TaskStore>> TaskStore::OpenTemp(int max_attempts, std::string dir) {
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string templ = dir + "/elasticjob-task-XXXXXX";
  int fd = mkstemp(templ.data());
  if (fd < 0) {
    return Status(StatusCode::kInternal,
                  fmt::format("task store: cannot create a temp file in '{}'", dir));
  }
  close(fd);
  sqlite3* db = nullptr;
  if (int rc = sqlite3_open(templ.c_str(), &db); rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    unlink(templ.c_str());
    return Status(StatusCode::kInternal,
                  fmt::format("task store '{}': cannot open: {}", templ, msg));
  }
  auto store = std::make_unique<SqliteTaskStore>(db, templ, max_attempts);
  // A run's store dies with its coordinator (docs/task-models.md): no journal, no syncs.
  if (Status s = store->Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                             "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;"
                             "CREATE TABLE tasks(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                             " payload BLOB, state INTEGER NOT NULL, attempts INTEGER NOT NULL,"
                             " success INTEGER, result BLOB);"
                             "CREATE INDEX pending_tasks ON tasks(id) WHERE state=0;");
      !s.ok()) {
    return s;
  }
  for (auto [sql, stmt] : {
           std::pair{"INSERT INTO tasks(name, payload, state, attempts) VALUES(?, ?, 0, 0)",
                     &store->insert_},
           std::pair{"SELECT id, name, payload, attempts FROM tasks WHERE state=0 ORDER BY id "
                     "LIMIT ?",
                     &store->select_pending_},
           // The rows just selected: the pending ones in [first, last] (id order).
           std::pair{"UPDATE tasks SET state=1, attempts=attempts+1 WHERE state=0 AND id "
                     "BETWEEN ? AND ?",
                     &store->mark_dispatched_},
           std::pair{"UPDATE tasks SET state=2, success=?, result=?, payload=NULL WHERE id=? "
                     "AND state=1",
                     &store->finish_},
           std::pair{"UPDATE tasks SET state=0 WHERE id=? AND state=1 AND attempts<?",
                     &store->repend_},
       }) {
    if (Status s = store->Prepare(sql, stmt); !s.ok()) return s;
  }
  return std::unique_ptr<TaskStore>(std::move(store));
}

SqliteTaskStore::~SqliteTaskStore() {
  for (sqlite3_stmt* s : {insert_, select_pending_, mark_dispatched_, finish_, repend_}) {
    sqlite3_finalize(s);
  }
  sqlite3_close(db_);
  unlink(path_.c_str());
}

Status SqliteTaskStore::Error(std::string_view what) const {
  return Status(StatusCode::kInternal,
                fmt::format("task store '{}': {}: {}", path_, what, sqlite3_errmsg(db_)));
}

Status SqliteTaskStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return Status(StatusCode::kInternal, fmt::format("task store '{}': {}", path_, msg));
  }
  return Status::Ok();
}

Status SqliteTaskStore::Prepare(const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr) != SQLITE_OK) return Error(sql);
  return Status::Ok();
}

Status SqliteTaskStore::AddOne(std::string_view name, std::string_view p) {
  sqlite3_reset(insert_);
  sqlite3_bind_text(insert_, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
  sqlite3_bind_blob(insert_, 2, p.data(), static_cast<int>(p.size()), SQLITE_STATIC);
  if (sqlite3_step(insert_) != SQLITE_DONE) return Error("insert");
  ++total_;
  ++pending_;
  return Status::Ok();
}

Result<std::vector<StoredTask>> SqliteTaskStore::TakePending(int n, size_t max_bytes,
                                                             std::string_view /*worker*/) {
  std::vector<StoredTask> out;
  size_t bytes = 0;
  sqlite3_reset(select_pending_);
  sqlite3_bind_int(select_pending_, 1, n);
  int rc;
  while ((rc = sqlite3_step(select_pending_)) == SQLITE_ROW) {
    const size_t size = static_cast<size_t>(sqlite3_column_bytes(select_pending_, 2));
    if (!out.empty() && bytes + size > max_bytes) {
      rc = SQLITE_DONE;
      break;
    }
    bytes += size;
    StoredTask t;
    t.id = static_cast<uint64_t>(sqlite3_column_int64(select_pending_, 0));
    t.name = std::string(Blob(select_pending_, 1));
    t.payload = std::string(Blob(select_pending_, 2));
    t.attempt = sqlite3_column_int(select_pending_, 3) + 1;
    out.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) return Error("select pending");
  sqlite3_reset(select_pending_);
  if (!out.empty()) {
    sqlite3_reset(mark_dispatched_);
    sqlite3_bind_int64(mark_dispatched_, 1, static_cast<int64_t>(out.front().id));
    sqlite3_bind_int64(mark_dispatched_, 2, static_cast<int64_t>(out.back().id));
    if (sqlite3_step(mark_dispatched_) != SQLITE_DONE) return Error("mark dispatched");
  }
  pending_ -= static_cast<int64_t>(out.size());
  return out;
}

Result<TaskStore::Recorded> SqliteTaskStore::Record(uint64_t id, bool success,
                                                    std::string_view data) {
  // A failure with attempts left: back to pending (only if dispatched).
  if (!success) {
    sqlite3_reset(repend_);
    sqlite3_bind_int64(repend_, 1, static_cast<int64_t>(id));
    sqlite3_bind_int(repend_, 2, max_attempts_);
    if (sqlite3_step(repend_) != SQLITE_DONE) return Error("re-pend");
    if (sqlite3_changes(db_) > 0) {
      ++pending_;
      ++retried_;
      return Recorded::kRetry;
    }
  }
  // Done, if dispatched: the first outcome wins; anything later changes no row.
  sqlite3_reset(finish_);
  sqlite3_bind_int(finish_, 1, success ? 1 : 0);
  sqlite3_bind_blob(finish_, 2, data.data(), static_cast<int>(data.size()), SQLITE_STATIC);
  sqlite3_bind_int64(finish_, 3, static_cast<int64_t>(id));
  if (sqlite3_step(finish_) != SQLITE_DONE) return Error("finish");
  if (sqlite3_changes(db_) == 0) return Recorded::kDuplicate;
  ++done_;
  if (!success) ++failed_;
  return success ? Recorded::kFirst : Recorded::kFailed;
}

Status SqliteTaskStore::ForEach(const std::function<void(const SubtaskResult&)>& fn) const {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT id, name, success, result FROM tasks WHERE state=2 "
                         "ORDER BY id",
                         -1, &stmt, nullptr) != SQLITE_OK) {
    return Error("select results");
  }
  int rc;
  SubtaskResult r;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    r.id = static_cast<uint64_t>(sqlite3_column_int64(stmt, 0));
    r.name.assign(Blob(stmt, 1));
    r.success = sqlite3_column_int(stmt, 2) != 0;
    r.data.assign(Blob(stmt, 3));
    fn(r);
  }
  Status s = rc == SQLITE_DONE ? Status::Ok() : Error("select results");
  sqlite3_finalize(stmt);
  return s;
}

}  // namespace elasticjob::task
