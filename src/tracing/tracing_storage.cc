#include "tracing/tracing_storage.h"

#include <fmt/format.h>

#include <charconv>

namespace elasticjob::tracing {

namespace {

constexpr size_t kMaxText = 4000;  // failure_cause, message, log text: VARCHAR(4000)

using Kind = TracingUrl::Kind;

// ElasticJob's SQL92.properties (its default, which SQLite gets), with IF NOT EXISTS.
const Ddl kSqliteDdl{
    "CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG (id CHARACTER(40) NOT NULL, job_name "
    "CHARACTER(100) NOT NULL, task_id CHARACTER(255) NOT NULL, hostname CHARACTER(255) NOT "
    "NULL, ip CHARACTER(50) NOT NULL, sharding_item INTEGER NOT NULL, execution_source "
    "CHARACTER(20) NOT NULL, failure_cause CHARACTER VARYING(4000) NULL, is_success INTEGER NOT "
    "NULL, start_time TIMESTAMP NULL, complete_time TIMESTAMP NULL, PRIMARY KEY (id))",
    "CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG (id CHARACTER(40) NOT NULL, job_name "
    "CHARACTER(100) NOT NULL, original_task_id CHARACTER(255) NOT NULL, task_id CHARACTER(255) "
    "NOT NULL, slave_id CHARACTER(50) NOT NULL, execution_type CHARACTER(20) NOT NULL, "
    "sharding_item CHARACTER(100) NOT NULL, state CHARACTER(20) NOT NULL, message CHARACTER "
    "VARYING(4000) NULL, creation_time TIMESTAMP NULL, PRIMARY KEY (id))",
    "CREATE INDEX IF NOT EXISTS TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id, state)",
    "CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG_LINE (execution_id CHARACTER(40) NOT NULL, "
    "line_no INTEGER NOT NULL, log_time TIMESTAMP NOT NULL, log_level CHARACTER(10) NOT NULL, "
    "log_text CHARACTER VARYING(4000) NOT NULL, PRIMARY KEY (execution_id, line_no))",
    ""};

// PostgreSQL.properties.
const Ddl kPostgreSqlDdl{
    "CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG (id VARCHAR(40) NOT NULL, job_name "
    "VARCHAR(100) NOT NULL, task_id VARCHAR(255) NOT NULL, hostname VARCHAR(255) NOT NULL, ip "
    "VARCHAR(50) NOT NULL, sharding_item INT NOT NULL, execution_source VARCHAR(20) NOT NULL, "
    "failure_cause VARCHAR(4000) NULL, is_success BOOLEAN NOT NULL, start_time TIMESTAMP NULL, "
    "complete_time TIMESTAMP NULL, PRIMARY KEY (id))",
    "CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG (id VARCHAR(40) NOT NULL, job_name "
    "VARCHAR(100) NOT NULL, original_task_id VARCHAR(255) NOT NULL, task_id VARCHAR(255) NOT "
    "NULL, slave_id VARCHAR(50) NOT NULL, execution_type VARCHAR(20) NOT NULL, sharding_item "
    "VARCHAR(100) NOT NULL, state VARCHAR(20) NOT NULL, message VARCHAR(4000) NULL, "
    "creation_time TIMESTAMP NULL, PRIMARY KEY (id))",
    "CREATE INDEX IF NOT EXISTS TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id, state)",
    "CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG_LINE (execution_id VARCHAR(40) NOT NULL, "
    "line_no BIGINT NOT NULL, log_time TIMESTAMP NOT NULL, log_level VARCHAR(10) NOT NULL, "
    "log_text VARCHAR(4000) NOT NULL, PRIMARY KEY (execution_id, line_no))",
    ""};

// MySQL.properties. The index statements run only when information_schema lacks them.
const Ddl kMySqlDdl{
    "CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG (auto_id int NOT NULL AUTO_INCREMENT, id "
    "VARCHAR (40) NOT NULL, job_name VARCHAR (100) NOT NULL, task_id VARCHAR (255) NOT NULL, "
    "hostname VARCHAR (255) NOT NULL, ip VARCHAR (50) NOT NULL, sharding_item INT NOT NULL, "
    "execution_source VARCHAR (20) NOT NULL, failure_cause VARCHAR (4000) NULL, is_success INT "
    "NOT NULL, start_time TIMESTAMP NULL, complete_time TIMESTAMP NULL, PRIMARY KEY (auto_id), "
    "UNIQUE KEY `id` (`id`)) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG (auto_id int NOT NULL AUTO_INCREMENT, id "
    "VARCHAR (40) NOT NULL, job_name VARCHAR (100) NOT NULL, original_task_id VARCHAR (255) NOT "
    "NULL, task_id VARCHAR (255) NOT NULL, slave_id VARCHAR (50) NOT NULL, execution_type "
    "VARCHAR (20) NOT NULL, sharding_item VARCHAR (100) NOT NULL, state VARCHAR (20) NOT NULL, "
    "message VARCHAR (4000) NULL, creation_time TIMESTAMP NULL, PRIMARY KEY (auto_id)) "
    "ENGINE=InnoDB",
    "CREATE INDEX TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id(128), state)",
    "CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG_LINE (execution_id VARCHAR(40) NOT NULL, "
    "line_no BIGINT NOT NULL, log_time TIMESTAMP(3) NULL, log_level VARCHAR(10) NOT NULL, "
    "log_text VARCHAR(4000) NOT NULL, PRIMARY KEY (execution_id, line_no)) ENGINE=InnoDB",
    "CREATE UNIQUE INDEX STATUS_TRACE_ID_INDEX ON JOB_STATUS_TRACE_LOG (id)"};

std::string Str(std::string_view s) { return std::string(s); }

int64_t ToInt(const std::optional<std::string>& v) {
  int64_t n = 0;
  if (v.has_value()) std::from_chars(v->data(), v->data() + v->size(), n);
  return n;
}

Clock::WallTime ToTime(const std::optional<std::string>& v) {
  if (!v.has_value()) return {};
  auto t = ParseTimestamp(*v);
  return t.ok() ? *t : Clock::WallTime{};
}

}  // namespace

const Ddl& DdlOf(TracingUrl::Kind kind) {
  switch (kind) {
    case Kind::kSqlite:
      return kSqliteDdl;
    case Kind::kPostgreSql:
      return kPostgreSqlDdl;
    case Kind::kMySql:
      return kMySqlDdl;
  }
  return kSqliteDdl;
}

Result<std::unique_ptr<SqlConnection>> ConnectSql(const TracingUrl& url, bool create) {
  switch (url.kind) {
    case Kind::kSqlite:
      return ConnectSqlite(url, create);
    case Kind::kPostgreSql:
      return ConnectPostgreSql(url);
    case Kind::kMySql:
      return ConnectMySql(url);
  }
  return InvalidArgument("tracing URL: unknown kind");
}

Result<std::unique_ptr<TracingStorage>> TracingStorage::Open(const TracingUrl& url, bool writer) {
  auto conn = ConnectSql(url, writer);
  if (!conn.ok()) return conn.status();
  auto storage = std::make_unique<TracingStorage>(url, std::move(conn).value());
  if (writer) {
    if (Status s = storage->CreateTables(); !s.ok()) return s;
  }
  return storage;
}

Result<std::unique_ptr<EventSink>> OpenSink(const TracingUrl& url) {
  auto storage = TracingStorage::Open(url, /*writer=*/true);
  if (!storage.ok()) return storage.status();
  return std::unique_ptr<EventSink>(std::move(storage).value());
}

Status TracingStorage::CreateTables() {
  const Ddl& ddl = DdlOf(url_.kind);
  for (const std::string* sql : {&ddl.execution_log, &ddl.status_trace_log, &ddl.log_line}) {
    if (auto r = conn_->Execute(*sql, {}); !r.ok()) return r.status();
  }
  if (url_.kind != Kind::kMySql) {
    return conn_->Execute(ddl.task_id_state_index, {}).status();
  }
  // MySQL has no CREATE INDEX IF NOT EXISTS.
  for (auto [name, sql] : {std::pair{"TASK_ID_STATE_INDEX", &ddl.task_id_state_index},
                           std::pair{"STATUS_TRACE_ID_INDEX", &ddl.status_id_index}}) {
    auto rows = conn_->Query(
        "SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() AND "
        "table_name = 'JOB_STATUS_TRACE_LOG' AND index_name = ?",
        {Str(name)});
    if (!rows.ok()) return rows.status();
    if (!rows->empty()) continue;
    if (auto r = conn_->Execute(*sql, {}); !r.ok()) return r.status();
  }
  return Status::Ok();
}

SqlValue TracingStorage::Bool(bool b) const {
  if (url_.kind == Kind::kPostgreSql) return std::string(b ? "true" : "false");
  return static_cast<int64_t>(b ? 1 : 0);
}

bool TracingStorage::IsTrue(const std::optional<std::string>& v) const {
  return v.has_value() && (*v == "1" || *v == "t" || *v == "true");
}

namespace {

// The idempotent writes of each dialect: a row already there (a retried batch) is left or,
// for a completion, updated to the same values. One statement is `head`, one or more
// `tuple`s separated by commas, then `tail`.
struct Statement {
  std::string head, tuple, tail;
};
struct Statements {
  Statement start, end, status, line;  // in Event::Kind's order
  const Statement& Of(Event::Kind kind) const {
    switch (kind) {
      case Event::Kind::kExecutionStart:
        return start;
      case Event::Kind::kExecutionEnd:
        return end;
      case Event::Kind::kStatus:
        return status;
      default:
        return line;
    }
  }
};

std::string Tuple(int n) {
  std::string t = "(";
  for (int i = 0; i < n; ++i) t += i == 0 ? "?" : ", ?";
  return t + ")";
}

Statements StatementsOf(Kind kind) {
  Statements s;
  s.start = {
      "INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, "
      "execution_source, is_success, start_time) VALUES ",
      Tuple(9), ""};
  s.end = {
      "INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, "
      "execution_source, failure_cause, is_success, start_time, complete_time) VALUES ",
      Tuple(11), ""};
  s.status = {
      "INSERT INTO JOB_STATUS_TRACE_LOG (id, job_name, original_task_id, task_id, "
      "slave_id, execution_type, sharding_item, state, message, creation_time) VALUES ",
      Tuple(10), ""};
  s.line = {
      "INSERT INTO JOB_EXECUTION_LOG_LINE (execution_id, line_no, log_time, log_level, "
      "log_text) VALUES ",
      Tuple(5), ""};
  if (kind == Kind::kMySql) {
    s.start.tail = " ON DUPLICATE KEY UPDATE id = id";
    s.end.tail =
        " ON DUPLICATE KEY UPDATE is_success = VALUES(is_success), complete_time = "
        "VALUES(complete_time), failure_cause = VALUES(failure_cause)";
    s.status.tail = " ON DUPLICATE KEY UPDATE id = id";
    s.line.tail = " ON DUPLICATE KEY UPDATE line_no = line_no";
  } else {
    s.start.tail = " ON CONFLICT (id) DO NOTHING";
    s.end.tail =
        " ON CONFLICT (id) DO UPDATE SET is_success = excluded.is_success, complete_time = "
        "excluded.complete_time, failure_cause = excluded.failure_cause";
    s.status.tail = " ON CONFLICT (id) DO NOTHING";
    s.line.tail = " ON CONFLICT (execution_id, line_no) DO NOTHING";
  }
  return s;
}

const Statements& StatementsFor(Kind kind) {
  static const Statements kSqlite = StatementsOf(Kind::kSqlite);
  static const Statements kPg = StatementsOf(Kind::kPostgreSql);
  static const Statements kMy = StatementsOf(Kind::kMySql);
  return kind == Kind::kMySql ? kMy : kind == Kind::kPostgreSql ? kPg : kSqlite;
}

// Rows per multi-row statement (a server round trip each).
constexpr size_t kRowsPerStatement = 200;

}  // namespace

void TracingStorage::AppendParams(const Event& e, std::vector<SqlValue>& params) const {
  switch (e.kind) {
    case Event::Kind::kExecutionStart: {
      const RunInfo& r = *e.run;
      params.insert(params.end(), {Str(UuidText(e.id)), r.job_name, r.task_id, r.hostname, r.ip,
                                   static_cast<int64_t>(e.item), Str(ExecutionSourceName(e.source)),
                                   Bool(false), FormatTimestamp(e.time)});
      return;
    }
    case Event::Kind::kExecutionEnd: {
      const RunInfo& r = *e.run;
      SqlValue cause = nullptr;
      if (!e.success) cause = Truncate(e.text, kMaxText);
      params.insert(params.end(), {Str(UuidText(e.id)), r.job_name, r.task_id, r.hostname, r.ip,
                                   static_cast<int64_t>(e.item), Str(ExecutionSourceName(e.source)),
                                   std::move(cause), Bool(e.success), FormatTimestamp(e.start),
                                   FormatTimestamp(e.complete)});
      return;
    }
    case Event::Kind::kStatus: {
      const RunInfo& r = *e.run;
      params.insert(params.end(),
                    {Str(UuidText(e.id)), r.job_name, std::string(), r.task_id, r.slave_id,
                     r.execution_type, r.items_text, Str(TraceStateName(e.state)),
                     Truncate(e.text, kMaxText), FormatTimestamp(e.time)});
      return;
    }
    case Event::Kind::kLogLine:
      params.insert(params.end(), {Str(UuidText(e.id)), e.line_no, FormatTimestamp(e.time),
                                   Str(LogLevelName(e.level)), Truncate(e.text, kMaxText)});
      return;
    case Event::Kind::kFlush:
      return;
  }
}

Status TracingStorage::WriteOne(const Event& e) {
  if (e.kind == Event::Kind::kFlush) return Status::Ok();
  const Statement& st = StatementsFor(url_.kind).Of(e.kind);
  std::vector<SqlValue> params;
  AppendParams(e, params);
  return conn_->Execute(st.head + st.tuple + st.tail, params).status();
}

Status TracingStorage::WriteGrouped(std::span<Event* const> batch) {
  // Each kind's rows together, in their order (a run's end after its start: starts go
  // first), up to kRowsPerStatement rows a statement.
  for (Event::Kind kind : {Event::Kind::kExecutionStart, Event::Kind::kExecutionEnd,
                           Event::Kind::kStatus, Event::Kind::kLogLine}) {
    const Statement& st = StatementsFor(url_.kind).Of(kind);
    std::vector<SqlValue> params;
    std::string sql;
    size_t rows = 0;
    auto flush = [&]() -> Status {
      if (rows == 0) return Status::Ok();
      auto r = conn_->Execute(sql + st.tail, params);
      sql.clear();
      params.clear();
      rows = 0;
      return r.status();
    };
    for (Event* e : batch) {
      if (e->kind != kind) continue;
      sql += rows == 0 ? st.head + st.tuple : ", " + st.tuple;
      AppendParams(*e, params);
      if (++rows == kRowsPerStatement) {
        if (Status s = flush(); !s.ok()) return s;
      }
    }
    if (Status s = flush(); !s.ok()) return s;
  }
  return Status::Ok();
}

TracingStorage::WriteResult TracingStorage::Write(std::span<Event* const> batch) {
  if (Status s = conn_->Begin(); !s.ok()) return {s, std::nullopt};
  // A server database: few statements of many rows (a round trip each). SQLite, in the
  // process: one prepared statement a row.
  if (url_.kind != Kind::kSqlite) {
    Status s = WriteGrouped(batch);
    if (s.ok()) {
      if (Status c = conn_->Commit(); !c.ok()) {
        conn_->Rollback();
        return {Status(StatusCode::kUnavailable, c.message()), std::nullopt};
      }
      return {Status::Ok(), std::nullopt};
    }
    conn_->Rollback();
    if (s.code() == StatusCode::kUnavailable) return {s, std::nullopt};
    // The database refused a row: row by row, to find it.
    if (Status b = conn_->Begin(); !b.ok()) return {b, std::nullopt};
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (Status s = WriteOne(*batch[i]); !s.ok()) {
      conn_->Rollback();
      // The connection failed: the whole batch again later. The database refused this row
      // (a value it rejects): the batch without it.
      if (s.code() == StatusCode::kUnavailable) return {s, std::nullopt};
      return {s, i};
    }
  }
  if (Status s = conn_->Commit(); !s.ok()) {
    conn_->Rollback();
    return {Status(StatusCode::kUnavailable, s.message()), std::nullopt};
  }
  return {Status::Ok(), std::nullopt};
}

Result<std::vector<JobExecutionEvent>> TracingStorage::ExecutionRows(const std::string& where,
                                                                     std::vector<SqlValue> params,
                                                                     size_t limit, size_t offset) {
  std::string sql =
      "SELECT id, hostname, ip, task_id, job_name, execution_source, sharding_item, start_time, "
      "complete_time, is_success, failure_cause FROM JOB_EXECUTION_LOG" +
      where + " ORDER BY start_time DESC, id LIMIT ? OFFSET ?";
  params.emplace_back(static_cast<int64_t>(limit));
  params.emplace_back(static_cast<int64_t>(offset));
  auto rows = conn_->Query(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<JobExecutionEvent> out;
  out.reserve(rows->size());
  for (SqlRow& r : *rows) {
    JobExecutionEvent e;
    e.id = r[0].value_or("");
    e.hostname = r[1].value_or("");
    e.ip = r[2].value_or("");
    e.task_id = r[3].value_or("");
    e.job_name = r[4].value_or("");
    e.source = ParseExecutionSource(r[5].value_or("")).value_or(ExecutionSource::kNormalTrigger);
    e.sharding_item = static_cast<int>(ToInt(r[6]));
    e.start_time = ToTime(r[7]);
    if (r[8].has_value()) e.complete_time = ToTime(r[8]);
    e.success = IsTrue(r[9]);
    e.failure_cause = r[10].value_or("");
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<JobExecutionEvent>> TracingStorage::Executions(const ExecutionQuery& q) {
  std::string where;
  std::vector<SqlValue> params;
  auto add = [&](const char* cond, SqlValue v) {
    where += where.empty() ? " WHERE " : " AND ";
    where += cond;
    params.push_back(std::move(v));
  };
  if (q.job_name) add("job_name = ?", *q.job_name);
  if (q.sharding_item) add("sharding_item = ?", static_cast<int64_t>(*q.sharding_item));
  if (q.since) add("start_time >= ?", FormatTimestamp(*q.since));
  if (q.until) add("start_time < ?", FormatTimestamp(*q.until));
  if (q.failed_only) {
    where += where.empty() ? " WHERE " : " AND ";
    where += url_.kind == Kind::kPostgreSql ? "complete_time IS NOT NULL AND NOT is_success"
                                            : "complete_time IS NOT NULL AND is_success = 0";
  }
  return ExecutionRows(where, std::move(params), q.limit, q.offset);
}

Result<JobExecutionEvent> TracingStorage::Execution(const std::string& execution_id) {
  auto rows = ExecutionRows(" WHERE id = ?", {execution_id}, 1, 0);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFound(fmt::format("no execution '{}'", execution_id));
  return std::move(rows->front());
}

Result<std::vector<JobStatusTraceEvent>> TracingStorage::StatusTraces(const StatusQuery& q) {
  std::string sql =
      "SELECT id, job_name, original_task_id, task_id, slave_id, execution_type, sharding_item, "
      "state, message, creation_time FROM JOB_STATUS_TRACE_LOG";
  std::string where;
  std::vector<SqlValue> params;
  auto add = [&](const char* cond, SqlValue v) {
    where += where.empty() ? " WHERE " : " AND ";
    where += cond;
    params.push_back(std::move(v));
  };
  if (q.job_name) add("job_name = ?", *q.job_name);
  if (q.task_id) add("task_id = ?", *q.task_id);
  if (q.since) add("creation_time >= ?", FormatTimestamp(*q.since));
  if (q.until) add("creation_time < ?", FormatTimestamp(*q.until));
  sql += where + " ORDER BY creation_time DESC LIMIT ? OFFSET ?";
  params.emplace_back(static_cast<int64_t>(q.limit));
  params.emplace_back(static_cast<int64_t>(q.offset));
  auto rows = conn_->Query(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<JobStatusTraceEvent> out;
  out.reserve(rows->size());
  for (SqlRow& r : *rows) {
    JobStatusTraceEvent e;
    e.id = r[0].value_or("");
    e.job_name = r[1].value_or("");
    e.original_task_id = r[2].value_or("");
    e.task_id = r[3].value_or("");
    e.slave_id = r[4].value_or("");
    e.execution_type = r[5].value_or("");
    e.sharding_items = r[6].value_or("");
    e.state = ParseTraceState(r[7].value_or("")).value_or(TraceState::kTaskUnknown);
    e.message = r[8].value_or("");
    e.creation_time = ToTime(r[9]);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<JobLogLine>> TracingStorage::LogLines(const std::string& execution_id,
                                                         int64_t after_line, size_t limit) {
  auto rows = conn_->Query(
      "SELECT execution_id, line_no, log_time, log_level, log_text FROM JOB_EXECUTION_LOG_LINE "
      "WHERE execution_id = ? AND line_no > ? ORDER BY line_no LIMIT ?",
      {execution_id, after_line, static_cast<int64_t>(limit)});
  if (!rows.ok()) return rows.status();
  std::vector<JobLogLine> out;
  out.reserve(rows->size());
  for (SqlRow& r : *rows) {
    JobLogLine l;
    l.execution_id = r[0].value_or("");
    l.line_no = ToInt(r[1]);
    l.time = ToTime(r[2]);
    std::string level = r[3].value_or("INFO");
    for (auto lv :
         {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
      if (level == LogLevelName(lv)) l.level = lv;
    }
    l.text = r[4].value_or("");
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace elasticjob::tracing
