// SQLite backend of SqlConnection: WAL mode, a busy timeout so that a reader and the writer
// share the file.
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <map>

#include "tracing/sql_connection.h"

namespace elasticjob::tracing {

namespace {

class SqliteConnection final : public SqlConnection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() override {
    cache_.clear();  // statements before the connection
    sqlite3_close_v2(db_);
  }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // The writer's statements are the same few again and again: prepared once, kept.
  Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params) override {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
      sqlite3_stmt* raw = nullptr;
      if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                             SQLITE_PREPARE_PERSISTENT, &raw, nullptr) != SQLITE_OK) {
        return Error("prepare");
      }
      it = cache_.emplace(sql, Stmt(raw)).first;
    }
    sqlite3_stmt* stmt = it->second.get();
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    Bind(stmt, params);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
      Status error = Error("execute");
      sqlite3_reset(stmt);
      return error;
    }
    sqlite3_reset(stmt);
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Result<std::vector<SqlRow>> Query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override {
    auto stmt = Prepare(sql, params);
    if (!stmt.ok()) return stmt.status();
    std::vector<SqlRow> rows;
    while (true) {
      int rc = sqlite3_step(stmt->get());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Error("query");
      int n = sqlite3_column_count(stmt->get());
      SqlRow row(n);
      for (int i = 0; i < n; ++i) {
        if (sqlite3_column_type(stmt->get(), i) == SQLITE_NULL) continue;
        const unsigned char* text = sqlite3_column_text(stmt->get(), i);
        row[i] = std::string(reinterpret_cast<const char*>(text),
                             static_cast<size_t>(sqlite3_column_bytes(stmt->get(), i)));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status Begin() override { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() override { return Exec("COMMIT"); }
  void Rollback() override { (void)Exec("ROLLBACK"); }

  Status Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err != nullptr ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      return Internal(fmt::format("sqlite: {}: {}", sql, msg));
    }
    return Status::Ok();
  }

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  using Stmt = std::unique_ptr<sqlite3_stmt, Finalize>;

  Result<Stmt> Prepare(const std::string& sql, const std::vector<SqlValue>& params) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr) !=
        SQLITE_OK) {
      return Error("prepare");
    }
    Stmt stmt(raw);
    Bind(raw, params);
    return stmt;
  }

  static void Bind(sqlite3_stmt* raw, const std::vector<SqlValue>& params) {
    for (size_t i = 0; i < params.size(); ++i) {
      int idx = static_cast<int>(i + 1);
      if (const auto* s = std::get_if<std::string>(&params[i])) {
        sqlite3_bind_text(raw, idx, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else if (const auto* n = std::get_if<int64_t>(&params[i])) {
        sqlite3_bind_int64(raw, idx, *n);
      } else {
        sqlite3_bind_null(raw, idx);
      }
    }
  }

  Status Error(const char* what) {
    int code = sqlite3_errcode(db_);
    std::string msg = fmt::format("sqlite {}: {}", what, sqlite3_errmsg(db_));
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_IOERR ||
        code == SQLITE_CANTOPEN || code == SQLITE_FULL) {
      return Status(StatusCode::kUnavailable, msg);
    }
    return Internal(msg);
  }

  sqlite3* const db_;
  std::map<std::string, Stmt> cache_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> ConnectSqlite(const TracingUrl& url, bool create) {
  if (!create) {
    struct stat st {};
    if (stat(url.path.c_str(), &st) != 0) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("sqlite: no database file '{}'", url.path));
    }
  }
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(url.path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status(StatusCode::kUnavailable,
                  fmt::format("sqlite: cannot open '{}': {}", url.path, msg));
  }
  sqlite3_busy_timeout(db, 5000);
  auto conn = std::make_unique<SqliteConnection>(db);
  // WAL: readers (`elasticjob trace`) never block the writer, nor it them.
  if (Status s = conn->Exec("PRAGMA journal_mode=WAL"); !s.ok()) {
    return Status(StatusCode::kUnavailable, s.message());
  }
  // NORMAL: a commit does not wait for the disk (a power cut may lose the last commits,
  // never corrupt the file). The page cache stays SQLite's default (2 MB): a larger one
  // wrote no faster here, and what it touches would crowd the triggers' data out of the CPU
  // caches.
  for (const char* pragma : {"PRAGMA synchronous=NORMAL"}) {
    if (Status s = conn->Exec(pragma); !s.ok()) {
      return Status(StatusCode::kUnavailable, s.message());
    }
  }
  return std::unique_ptr<SqlConnection>(std::move(conn));
}

}  // namespace elasticjob::tracing
