// MySQL/MariaDB backend of SqlConnection (Debian's libmariadb client). Parameters are bound
// as literals escaped by the client library (mysql_real_escape_string, for the connection's
// character set), which keeps one code path for statements and queries; the session runs in
// UTC so that TIMESTAMP columns hold what was written.
#include <errmsg.h>
#include <fmt/format.h>
#include <mysql.h>

#include "tracing/sql_connection.h"

namespace elasticjob::tracing {

namespace {

class MySqlConnection final : public SqlConnection {
 public:
  explicit MySqlConnection(MYSQL* db) : db_(db) {}
  ~MySqlConnection() override { mysql_close(db_); }
  MySqlConnection(const MySqlConnection&) = delete;
  MySqlConnection& operator=(const MySqlConnection&) = delete;

  Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params) override {
    if (Status s = Run(sql, params); !s.ok()) return s;
    MYSQL_RES* res = mysql_store_result(db_);
    if (res != nullptr) mysql_free_result(res);
    return static_cast<int64_t>(mysql_affected_rows(db_));
  }

  Result<std::vector<SqlRow>> Query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override {
    if (Status s = Run(sql, params); !s.ok()) return s;
    MYSQL_RES* res = mysql_store_result(db_);
    if (res == nullptr) {
      if (mysql_field_count(db_) != 0) return Error();
      return std::vector<SqlRow>{};
    }
    std::vector<SqlRow> rows;
    unsigned cols = mysql_num_fields(res);
    while (MYSQL_ROW r = mysql_fetch_row(res)) {
      unsigned long* lengths = mysql_fetch_lengths(res);
      SqlRow row(cols);
      for (unsigned c = 0; c < cols; ++c) {
        if (r[c] != nullptr) row[c] = std::string(r[c], lengths[c]);
      }
      rows.push_back(std::move(row));
    }
    mysql_free_result(res);
    return rows;
  }

  Status Begin() override { return Run("START TRANSACTION", {}); }
  Status Commit() override { return Run("COMMIT", {}); }
  void Rollback() override { (void)Run("ROLLBACK", {}); }

 private:
  Status Run(const std::string& sql, const std::vector<SqlValue>& params) {
    std::string text;
    text.reserve(sql.size() + 64 * params.size());
    size_t next = 0;
    for (char c : sql) {
      if (c != '?' || next >= params.size()) {
        text += c;
        continue;
      }
      const SqlValue& v = params[next++];
      if (const auto* s = std::get_if<std::string>(&v)) {
        std::string escaped(s->size() * 2 + 1, '\0');
        unsigned long n = mysql_real_escape_string(db_, escaped.data(), s->data(), s->size());
        escaped.resize(n);
        text += '\'';
        text += escaped;
        text += '\'';
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        text += std::to_string(*i);
      } else {
        text += "NULL";
      }
    }
    if (mysql_real_query(db_, text.data(), text.size()) != 0) return Error();
    return Status::Ok();
  }

  Status Error() {
    unsigned code = mysql_errno(db_);
    std::string msg = fmt::format("mysql: {} ({})", mysql_error(db_), code);
    if (code == CR_SERVER_GONE_ERROR || code == CR_SERVER_LOST || code == CR_CONNECTION_ERROR ||
        code == CR_CONN_HOST_ERROR || code == 1053 /* ER_SERVER_SHUTDOWN */) {
      return Status(StatusCode::kUnavailable, msg);
    }
    return Internal(msg);
  }

  MYSQL* const db_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> ConnectMySql(const TracingUrl& url) {
  MYSQL* db = mysql_init(nullptr);
  if (db == nullptr) return Status(StatusCode::kUnavailable, "mysql: out of memory");
  unsigned int timeout = 5;
  mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  unsigned int io_timeout = 30;
  mysql_options(db, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
  mysql_options(db, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
  mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  mysql_options(db, MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
  if (mysql_real_connect(db, url.host.c_str(), url.user.empty() ? nullptr : url.user.c_str(),
                         url.password.empty() ? nullptr : url.password.c_str(),
                         url.database.c_str(), static_cast<unsigned>(url.port), nullptr,
                         0) == nullptr) {
    std::string msg = fmt::format("mysql: {} ({})", mysql_error(db), mysql_errno(db));
    mysql_close(db);
    return Status(StatusCode::kUnavailable, msg);
  }
  return std::unique_ptr<SqlConnection>(std::make_unique<MySqlConnection>(db));
}

}  // namespace elasticjob::tracing
