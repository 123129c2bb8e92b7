// PostgreSQL backend of SqlConnection (libpq): text parameters ($1, $2, ...) and text rows.
#include <fmt/format.h>
#include <libpq-fe.h>

#include "tracing/postgresql/pg_connect.h"
#include "tracing/sql_connection.h"

namespace elasticjob::tracing {

namespace {

class PgConnection final : public SqlConnection {
 public:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  ~PgConnection() override { PQfinish(conn_); }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params) override {
    auto res = Run(sql, params);
    if (!res.ok()) return res.status();
    const char* n = PQcmdTuples(res->get());
    return static_cast<int64_t>(n != nullptr && *n != 0 ? std::atoll(n) : 0);
  }

  Result<std::vector<SqlRow>> Query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override {
    auto res = Run(sql, params);
    if (!res.ok()) return res.status();
    PGresult* r = res->get();
    std::vector<SqlRow> rows;
    int n = PQntuples(r);
    int cols = PQnfields(r);
    rows.reserve(n);
    for (int i = 0; i < n; ++i) {
      SqlRow row(cols);
      for (int c = 0; c < cols; ++c) {
        if (!PQgetisnull(r, i, c)) row[c] = std::string(PQgetvalue(r, i, c), PQgetlength(r, i, c));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status Begin() override { return Execute("BEGIN", {}).status(); }
  Status Commit() override { return Execute("COMMIT", {}).status(); }
  void Rollback() override { (void)Execute("ROLLBACK", {}); }

 private:
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  using Res = std::unique_ptr<PGresult, Clear>;

  Result<Res> Run(const std::string& sql, const std::vector<SqlValue>& params) {
    // `?` becomes $n (the statements here have no `?` inside literals).
    std::string text;
    text.reserve(sql.size() + params.size() * 2);
    int n = 0;
    for (char c : sql) {
      if (c == '?') {
        text += fmt::format("${}", ++n);
      } else {
        text += c;
      }
    }
    std::vector<std::string> values(params.size());
    std::vector<const char*> ptrs(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* s = std::get_if<std::string>(&params[i])) {
        values[i] = *s;
        ptrs[i] = values[i].c_str();
      } else if (const auto* v = std::get_if<int64_t>(&params[i])) {
        values[i] = std::to_string(*v);
        ptrs[i] = values[i].c_str();
      }
    }
    Res res(PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr, ptrs.data(),
                         nullptr, nullptr, 0));
    ExecStatusType st = res != nullptr ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    std::string msg = PQerrorMessage(conn_);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (PQstatus(conn_) == CONNECTION_BAD) {
      return Status(StatusCode::kUnavailable, fmt::format("postgresql: {}", msg));
    }
    const char* state = res != nullptr ? PQresultErrorField(res.get(), PG_DIAG_SQLSTATE) : nullptr;
    // Class 08 (connection exception), 57P (operator intervention: shutdown).
    if (state != nullptr && (std::string_view(state).substr(0, 2) == "08" ||
                             std::string_view(state).substr(0, 3) == "57P")) {
      return Status(StatusCode::kUnavailable, fmt::format("postgresql: {}", msg));
    }
    return Internal(fmt::format("postgresql: {}", msg));
  }

  PGconn* const conn_;
};

}  // namespace

Result<PGconn*> OpenPgConnection(const TracingUrl& url, const char* options) {
  std::string port = url.port != 0 ? std::to_string(url.port) : "";
  const char* keys[] = {
      "host",    "port", "user", "password", "dbname", "connect_timeout", "client_encoding",
      "options", nullptr};
  const char* values[] = {url.host.c_str(),
                          port.empty() ? nullptr : port.c_str(),
                          url.user.empty() ? nullptr : url.user.c_str(),
                          url.password.empty() ? nullptr : url.password.c_str(),
                          url.database.c_str(),
                          "5",
                          "UTF8",
                          options,
                          nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 0);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string msg = conn != nullptr ? PQerrorMessage(conn) : "out of memory";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    PQfinish(conn);
    return Status(StatusCode::kUnavailable, msg);
  }
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);  // "relation exists" notices
  return conn;
}

Result<std::unique_ptr<SqlConnection>> ConnectPostgreSql(const TracingUrl& url) {
  auto conn = OpenPgConnection(url, "-c TimeZone=UTC");
  if (!conn.ok()) {
    return Status(StatusCode::kUnavailable, fmt::format("postgresql: {}", conn.status().message()));
  }
  return std::unique_ptr<SqlConnection>(std::make_unique<PgConnection>(*conn));
}

}  // namespace elasticjob::tracing
