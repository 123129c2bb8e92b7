// SqlConnection: the little of a database client the tracing storage needs (statements with
// parameters, transactions, rows as text), over SQLite (sqlite3), PostgreSQL (libpq) and
// MySQL/MariaDB (libmariadb). Statements are written with `?` placeholders; each backend
// binds them its own way.
//
// Thread safety: none (one connection, one thread).
#ifndef ELASTICJOB_TRACING_SQL_CONNECTION_H_
#define ELASTICJOB_TRACING_SQL_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "elasticjob/status.h"
#include "tracing/events/tracing_url.h"

namespace elasticjob::tracing {

using SqlValue = std::variant<std::nullptr_t, int64_t, std::string>;
using SqlRow = std::vector<std::optional<std::string>>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs `sql` with `params` bound to its `?`s. Returns the rows it changed. Errors are
  // UNAVAILABLE when the connection is gone (reconnect and retry), INTERNAL otherwise; the
  // message is the database's.
  virtual Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params) = 0;
  // Runs a query; every column as text (NULL: nullopt).
  virtual Result<std::vector<SqlRow>> Query(const std::string& sql,
                                            const std::vector<SqlValue>& params) = 0;
  // BEGIN / COMMIT / ROLLBACK.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
};

// Connects to `url`'s database. `create`: a missing SQLite file is created (the writer);
// else it is UNAVAILABLE (a reader). UNAVAILABLE with the client's reason on failure.
Result<std::unique_ptr<SqlConnection>> ConnectSql(const TracingUrl& url, bool create);

// The backends (each in its folder).
Result<std::unique_ptr<SqlConnection>> ConnectSqlite(const TracingUrl& url, bool create);
Result<std::unique_ptr<SqlConnection>> ConnectPostgreSql(const TracingUrl& url);
Result<std::unique_ptr<SqlConnection>> ConnectMySql(const TracingUrl& url);

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_SQL_CONNECTION_H_
