// The shared task store over libpq: prepared statements, bytea payloads and results in
// binary, every result row in binary (ids decoded from network order).
#include "task/postgresql/pg_task_store.h"

#include <arpa/inet.h>
#include <endian.h>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <vector>

#include "tracing/postgresql/pg_connect.h"
#include "tracing/tracing_url.h"

namespace elasticjob::task {

namespace {

struct Clear {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Res = std::unique_ptr<PGresult, Clear>;

// One statement's parameters: text (format 0) or binary (format 1) values.
class Params {
 public:
  Params& Text(std::string v) {
    owned_.push_back(std::make_unique<std::string>(std::move(v)));
    return Add(owned_.back()->data(), owned_.back()->size(), 0);
  }
  Params& Int(int64_t v) { return Text(std::to_string(v)); }
  Params& Bytes(std::string_view v) { return Add(v.data(), v.size(), 1); }
  Params& Binary(std::string v) {  // owned binary bytes (an encoded array)
    owned_.push_back(std::make_unique<std::string>(std::move(v)));
    return Add(owned_.back()->data(), owned_.back()->size(), 1);
  }
  Params& Bool(bool v) { return Text(v ? "t" : "f"); }
  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  Params& Add(const char* p, size_t n, int format) {
    values_.push_back(p != nullptr ? p : "");
    lengths_.push_back(static_cast<int>(n));
    formats_.push_back(format);
    return *this;
  }
  std::vector<std::unique_ptr<std::string>> owned_;
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

// PostgreSQL's binary array format, one dimension: the header, then each element's length
// and bytes (all integers big-endian).
class BinaryArray {
 public:
  explicit BinaryArray(uint32_t element_oid) : oid_(element_oid) {}
  void Add(std::string_view bytes) {
    Put32(static_cast<uint32_t>(bytes.size()));
    body_.append(bytes);
    ++n_;
  }
  void Add8(int64_t v) {
    const uint64_t be = htobe64(static_cast<uint64_t>(v));
    Add(std::string_view(reinterpret_cast<const char*>(&be), sizeof be));
  }
  size_t size() const { return n_; }
  std::string Encode() const {
    std::string out;
    out.reserve(20 + body_.size());
    for (uint32_t v : {1u, 0u, oid_, static_cast<uint32_t>(n_), 1u}) {
      const uint32_t be = htonl(v);
      out.append(reinterpret_cast<const char*>(&be), sizeof be);
    }
    return out + body_;
  }

 private:
  void Put32(uint32_t v) {
    const uint32_t be = htonl(v);
    body_.append(reinterpret_cast<const char*>(&be), sizeof be);
  }
  const uint32_t oid_;
  std::string body_;
  size_t n_ = 0;
};
constexpr uint32_t kInt8Oid = 20;
constexpr uint32_t kByteaOid = 17;

int64_t Int8(const PGresult* r, int row, int col) {
  uint64_t v = 0;
  std::memcpy(&v, PQgetvalue(r, row, col), sizeof v);
  return static_cast<int64_t>(be64toh(v));
}
int32_t Int4(const PGresult* r, int row, int col) {
  uint32_t v = 0;
  std::memcpy(&v, PQgetvalue(r, row, col), sizeof v);
  return static_cast<int32_t>(ntohl(v));
}
std::string_view Bytes(const PGresult* r, int row, int col) {
  if (PQgetisnull(r, row, col)) return {};
  return std::string_view(PQgetvalue(r, row, col), PQgetlength(r, row, col));
}

// Statements, prepared once per connection.
constexpr const char* kStatements[][2] = {
    {"insert",
     "INSERT INTO ej_task_subtask(run_id, id, name, payload, state, attempts) "
     "VALUES($1, $2, $3, $4, 0, 0)"},
    {"pending",
     "SELECT id, name, payload, attempts FROM ej_task_subtask WHERE run_id=$1 AND state=0 "
     "ORDER BY id LIMIT $2"},
    // The rows just selected: the pending ones in [first, last] (id order).
    {"dispatch",
     "UPDATE ej_task_subtask SET state=1, attempts=attempts+1 WHERE run_id=$1 AND state=0 "
     "AND id BETWEEN $2 AND $3"},
    {"finish",
     "UPDATE ej_task_subtask SET state=2, success=$3, result=$4, payload=NULL WHERE "
     "run_id=$1 AND id=$2 AND state=1"},
    {"repend",
     "UPDATE ej_task_subtask SET state=0 WHERE run_id=$1 AND id=$2 AND state=1 AND "
     "attempts<$3"},
    // Every commit: the run is still this coordinator's (the fence), and its retry count.
    {"fence", "UPDATE ej_task_run SET retried=$2 WHERE run_id=$1 AND owner=$3"},
    // Many sub-tasks in one statement: ids from $2 on, one per payload of the array.
    {"insert_all",
     "INSERT INTO ej_task_subtask(run_id, id, name, payload, state, attempts) SELECT $1, "
     "$2::bigint + u.i - 1, $3, u.p, 0, 0 FROM unnest($4::bytea[]) WITH ORDINALITY AS u(p, i)"},
    // Many successes in one statement: the ids it returns were dispatched (first outcomes).
    {"finish_all",
     "UPDATE ej_task_subtask AS t SET state=2, success=TRUE, result=u.r, payload=NULL FROM "
     "unnest($2::bigint[], $3::bytea[]) AS u(id, r) WHERE t.run_id=$1 AND t.id=u.id AND "
     "t.state=1 RETURNING t.id"},
};

class PgTaskStoreImpl final : public PgTaskStore {
 public:
  PgTaskStoreImpl(PGconn* conn, std::string redacted, std::string job_name, int max_attempts)
      : PgTaskStore(max_attempts),
        conn_(conn),
        url_(std::move(redacted)),
        job_name_(std::move(job_name)) {}
  ~PgTaskStoreImpl() override { PQfinish(conn_); }

  const std::string& path() const override { return url_; }
  bool shared() const override { return true; }
  bool resumed() const override { return resumed_; }
  int64_t redispatched() const override { return redispatched_; }

  Status Setup() {
    // Two coordinators creating the tables at once: one may fail on the catalog; again.
    Status s;
    for (int i = 0; i < 2; ++i) {
      s = Exec(
          "CREATE TABLE IF NOT EXISTS ej_task_run(run_id VARCHAR(512) PRIMARY KEY,"
          " job_name VARCHAR(512) NOT NULL, root_done BOOLEAN NOT NULL DEFAULT FALSE,"
          " retried BIGINT NOT NULL DEFAULT 0, owner VARCHAR(200),"
          " created_time TIMESTAMP NOT NULL DEFAULT now());"
          "CREATE TABLE IF NOT EXISTS ej_task_subtask(run_id VARCHAR(512) NOT NULL,"
          " id BIGINT NOT NULL, name TEXT NOT NULL, payload BYTEA, state SMALLINT NOT NULL,"
          " attempts INTEGER NOT NULL, success BOOLEAN, result BYTEA,"
          " PRIMARY KEY(run_id, id));"
          "CREATE INDEX IF NOT EXISTS ej_task_subtask_pending ON ej_task_subtask(run_id, id)"
          " WHERE state=0;");
      if (s.ok()) break;
    }
    if (!s.ok()) return s;
    for (const auto& [name, sql] : kStatements) {
      Res r(PQprepare(conn_, name, sql, 0, nullptr));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return Error(r.get(), name);
    }
    return Status::Ok();
  }

  Result<bool> Resume(const std::string& run_id) override {
    auto run =
        Query("SELECT root_done, retried FROM ej_task_run WHERE run_id=$1", Params().Text(run_id));
    if (!run.ok()) return run.status();
    if (PQntuples(run->get()) == 0) return false;
    if (*PQgetvalue(run->get(), 0, 0) == 0) {  // the root had not finished: drop it all
      if (Status s = Delete(run_id, /*fenced=*/false); !s.ok()) return s;
      return false;
    }
    run_id_ = run_id;
    retried_ = Int8(run->get(), 0, 1);
    // The run is ours from now on: a coordinator still at it fails its next commit. Its own
    // statement, before the reset, so that the reset never waits on a transaction of the
    // other's that waits on the run's row.
    if (auto taken = Command("UPDATE ej_task_run SET owner=$2 WHERE run_id=$1",
                             Params().Text(run_id).Text(token_));
        !taken.ok()) {
      return taken.status();
    }
    if (Status s = Begin(); !s.ok()) return s;
    auto back = Command(
        "UPDATE ej_task_subtask SET state=0, attempts=GREATEST(attempts-1, 0) WHERE "
        "run_id=$1 AND state=1",
        Params().Text(run_id));
    if (!back.ok()) return back.status();
    redispatched_ = *back;
    auto counts = Query(
        "SELECT count(*), count(*) FILTER (WHERE state=2), count(*) FILTER (WHERE state=2 AND "
        "NOT success), count(*) FILTER (WHERE state=0), COALESCE(max(id), 0) FROM "
        "ej_task_subtask WHERE run_id=$1",
        Params().Text(run_id));
    if (!counts.ok()) return counts.status();
    if (Status s = Commit(); !s.ok()) return s;
    PGresult* r = counts->get();
    total_ = Int8(r, 0, 0);
    done_ = Int8(r, 0, 1);
    failed_ = Int8(r, 0, 2);
    pending_ = Int8(r, 0, 3);
    next_id_ = static_cast<uint64_t>(Int8(r, 0, 4)) + 1;
    resumed_ = true;
    return true;
  }

  Status Create(const std::string& run_id) override {
    run_id_ = run_id;
    return Command("INSERT INTO ej_task_run(run_id, job_name, owner) VALUES($1, $2, $3)",
                   Params().Text(run_id).Text(job_name_).Text(token_))
        .status();
  }

  Status MarkRootDone() override {
    auto r = Command("UPDATE ej_task_run SET root_done=TRUE WHERE run_id=$1 AND owner=$2",
                     Params().Text(run_id_).Text(token_));
    if (!r.ok()) return r.status();
    return *r == 1 ? Status::Ok() : TakenOver();
  }

  Status Finish() override { return Delete(run_id_, /*fenced=*/true); }

  Status Begin() override { return Exec("BEGIN"); }
  Status Commit() override {
    auto r = Prepared("fence", Params().Text(run_id_).Int(retried_).Text(token_));
    if (!r.ok() || Changed(r->get()) != 1) {
      (void)Exec("ROLLBACK");
      return r.ok() ? TakenOver() : r.status();
    }
    return Exec("COMMIT");
  }

  Result<std::vector<StoredTask>> TakePending(int n, size_t max_bytes) override {
    auto res = Prepared("pending", Params().Text(run_id_).Int(n));
    if (!res.ok()) return res.status();
    PGresult* r = res->get();
    std::vector<StoredTask> out;
    size_t bytes = 0;
    for (int i = 0; i < PQntuples(r); ++i) {
      std::string_view payload = Bytes(r, i, 2);
      if (!out.empty() && bytes + payload.size() > max_bytes) break;
      bytes += payload.size();
      StoredTask t;
      t.id = static_cast<uint64_t>(Int8(r, i, 0));
      t.name = std::string(Bytes(r, i, 1));
      t.payload = std::string(payload);
      t.attempt = Int4(r, i, 3) + 1;
      out.push_back(std::move(t));
    }
    if (!out.empty()) {
      auto d = Prepared("dispatch", Params()
                                        .Text(run_id_)
                                        .Int(static_cast<int64_t>(out.front().id))
                                        .Int(static_cast<int64_t>(out.back().id)));
      if (!d.ok()) return d.status();
    }
    pending_ -= static_cast<int64_t>(out.size());
    return out;
  }

  Result<Recorded> Record(uint64_t id, bool success, std::string_view data) override {
    const auto sid = static_cast<int64_t>(id);
    if (!success) {
      auto r = Prepared("repend", Params().Text(run_id_).Int(sid).Int(max_attempts_));
      if (!r.ok()) return r.status();
      if (Changed(r->get()) > 0) {
        ++pending_;
        ++retried_;
        return Recorded::kRetry;
      }
    }
    auto r = Prepared("finish", Params().Text(run_id_).Int(sid).Bool(success).Bytes(data));
    if (!r.ok()) return r.status();
    if (Changed(r->get()) == 0) return Recorded::kDuplicate;
    ++done_;
    if (!success) ++failed_;
    return success ? Recorded::kFirst : Recorded::kFailed;
  }

  Result<std::vector<Recorded>> RecordAll(const std::vector<Outcome>& outcomes) override {
    std::vector<Recorded> out(outcomes.size(), Recorded::kDuplicate);
    BinaryArray ids(kInt8Oid);
    BinaryArray results(kByteaOid);
    std::map<uint64_t, size_t> index;  // the successes' ids -> their place
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const Outcome& o = outcomes[i];
      if (!o.success) {  // rare: one statement each
        auto r = Record(o.id, false, o.data);
        if (!r.ok()) return r.status();
        out[i] = *r;
        continue;
      }
      ids.Add8(static_cast<int64_t>(o.id));
      results.Add(o.data);
      index[o.id] = i;
    }
    if (ids.size() == 0) return out;
    auto r = Prepared("finish_all",
                      Params().Text(run_id_).Binary(ids.Encode()).Binary(results.Encode()));
    if (!r.ok()) return r.status();
    for (int row = 0; row < PQntuples(r->get()); ++row) {
      auto it = index.find(static_cast<uint64_t>(Int8(r->get(), row, 0)));
      if (it == index.end()) continue;
      out[it->second] = Recorded::kFirst;
      ++done_;
    }
    return out;
  }

  Status ForEach(const std::function<void(const SubtaskResult&)>& fn) const override {
    // One row at a time: a million results need no million rows in memory.
    Params p;
    p.Text(run_id_);
    if (PQsendQueryParams(conn_,
                          "SELECT id, name, success, result FROM ej_task_subtask WHERE "
                          "run_id=$1 AND state=2 ORDER BY id",
                          p.size(), nullptr, p.values(), p.lengths(), p.formats(), 1) == 0 ||
        PQsetSingleRowMode(conn_) == 0) {
      return Error(nullptr, "select results");
    }
    Status status;
    SubtaskResult out;
    while (Res r{PQgetResult(conn_)}) {
      ExecStatusType st = PQresultStatus(r.get());
      if (st == PGRES_SINGLE_TUPLE) {
        if (!status.ok()) continue;  // drain
        out.id = static_cast<uint64_t>(Int8(r.get(), 0, 0));
        out.name.assign(Bytes(r.get(), 0, 1));
        out.success = *PQgetvalue(r.get(), 0, 2) != 0;
        out.data.assign(Bytes(r.get(), 0, 3));
        fn(out);
      } else if (st != PGRES_TUPLES_OK && status.ok()) {
        status = Error(r.get(), "select results");
      }
    }
    return status;
  }

 private:
  Status AddOne(std::string_view name, std::string_view payload) override {
    auto r = Prepared("insert", Params()
                                    .Text(run_id_)
                                    .Int(static_cast<int64_t>(next_id_))
                                    .Text(std::string(name))
                                    .Bytes(payload));
    if (!r.ok()) return r.status();
    ++next_id_;
    ++total_;
    ++pending_;
    return Status::Ok();
  }

  Status AddAll(std::string_view name, const std::vector<std::string_view>& payloads) override {
    constexpr size_t kPerStatement = 10000;
    for (size_t from = 0; from < payloads.size(); from += kPerStatement) {
      const size_t n = std::min(kPerStatement, payloads.size() - from);
      BinaryArray array(kByteaOid);
      for (size_t i = from; i < from + n; ++i) array.Add(payloads[i]);
      auto r = Prepared("insert_all", Params()
                                          .Text(run_id_)
                                          .Int(static_cast<int64_t>(next_id_))
                                          .Text(std::string(name))
                                          .Binary(array.Encode()));
      if (!r.ok()) return r.status();
      next_id_ += n;
      total_ += static_cast<int64_t>(n);
      pending_ += static_cast<int64_t>(n);
    }
    return Status::Ok();
  }

  // Deletes a run's rows; `fenced`: only while the run is this coordinator's.
  Status Delete(const std::string& run_id, bool fenced) {
    if (Status s = Begin(); !s.ok()) return s;
    auto run = fenced ? Command("DELETE FROM ej_task_run WHERE run_id=$1 AND owner=$2",
                                Params().Text(run_id).Text(token_))
                      : Command("DELETE FROM ej_task_run WHERE run_id=$1", Params().Text(run_id));
    if (!run.ok() || (fenced && *run != 1)) {
      (void)Exec("ROLLBACK");
      return run.ok() ? TakenOver() : run.status();
    }
    if (auto r = Command("DELETE FROM ej_task_subtask WHERE run_id=$1", Params().Text(run_id));
        !r.ok()) {
      (void)Exec("ROLLBACK");
      return r.status();
    }
    return Exec("COMMIT");
  }

  Status TakenOver() const {
    return FailedPrecondition(
        fmt::format("task store '{}': run {} was taken over by another coordinator (or is gone)",
                    url_, run_id_));
  }

  static int64_t Changed(PGresult* r) {
    const char* n = PQcmdTuples(r);
    return n != nullptr && *n != 0 ? std::atoll(n) : 0;
  }

  Status Error(PGresult* r, std::string_view what) const {
    std::string msg = r != nullptr ? PQresultErrorMessage(r) : "";
    if (msg.empty()) msg = PQerrorMessage(conn_);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const StatusCode code =
        PQstatus(conn_) == CONNECTION_BAD ? StatusCode::kUnavailable : StatusCode::kInternal;
    return Status(code, fmt::format("task store '{}': {}: {}", url_, what, msg));
  }

  Status Exec(const char* sql) {
    Res r(PQexec(conn_, sql));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return Error(r.get(), sql);
    return Status::Ok();
  }
  Result<int64_t> Command(const char* sql, const Params& p) {
    Res r(PQexecParams(conn_, sql, p.size(), nullptr, p.values(), p.lengths(), p.formats(), 1));
    ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Error(r.get(), sql);
    return Changed(r.get());
  }
  Result<Res> Query(const char* sql, const Params& p) {
    Res r(PQexecParams(conn_, sql, p.size(), nullptr, p.values(), p.lengths(), p.formats(), 1));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return Error(r.get(), sql);
    return r;
  }
  Result<Res> Prepared(const char* name, const Params& p) {
    Res r(PQexecPrepared(conn_, name, p.size(), p.values(), p.lengths(), p.formats(), 1));
    ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Error(r.get(), name);
    return r;
  }

  PGconn* const conn_;
  const std::string url_;
  const std::string job_name_;
  std::string run_id_;
  uint64_t next_id_ = 1;
  // This coordinator's mark on the runs it owns (ej_task_run.owner).
  const std::string token_ =
      fmt::format("{}:{}", getpid(), std::chrono::steady_clock::now().time_since_epoch().count());
  int64_t redispatched_ = 0;
  bool resumed_ = false;
};

}  // namespace

Result<std::unique_ptr<PgTaskStore>> PgTaskStore::Connect(std::string_view url,
                                                          std::string job_name, int max_attempts) {
  auto parsed = tracing::ParseTracingUrl(url);
  if (!parsed.ok()) return parsed.status().WithContext("task store");
  if (parsed->kind != tracing::TracingUrl::Kind::kPostgreSql) {
    return InvalidArgument(fmt::format(
        "task store: '{}' is not a postgresql:// URL (the shared task store is PostgreSQL)",
        parsed->redacted));
  }
  const tracing::TracingUrl& u = *parsed;
  auto opened = tracing::OpenPgConnection(u);
  if (!opened.ok()) {
    return Status(StatusCode::kUnavailable, fmt::format("task store '{}': cannot connect: {}",
                                                        u.redacted, opened.status().message()));
  }
  PGconn* conn = *opened;
  auto store =
      std::make_unique<PgTaskStoreImpl>(conn, u.redacted, std::move(job_name), max_attempts);
  if (Status s = store->Setup(); !s.ok()) return s;
  return std::unique_ptr<PgTaskStore>(std::move(store));
}

}  // namespace elasticjob::task
