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
#include <functional>
#include <map>
#include <vector>

#include "tracing/events/tracing_url.h"
#include "tracing/postgresql/pg_connect.h"

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
  void Add4(int32_t v) {
    const uint32_t be = htonl(static_cast<uint32_t>(v));
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
constexpr uint32_t kInt4Oid = 23;
constexpr uint32_t kTextOid = 25;
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

// A failed outcome: pending again while attempts are left (one retry more), else done
// with the message ($3); RETURNING the new state. Conditions follow.
#define EJ_TASK_FAIL_SET                                                       \
  "UPDATE ej_task_subtask SET state=CASE WHEN attempts<$4 THEN 0 ELSE 2 END, " \
  "retries=retries+CASE WHEN attempts<$4 THEN 1 ELSE 0 END, "                  \
  "success=CASE WHEN attempts<$4 THEN NULL ELSE FALSE END, "                   \
  "result=CASE WHEN attempts<$4 THEN NULL ELSE $3::bytea END, "                \
  "payload=CASE WHEN attempts<$4 THEN payload ELSE NULL END "

// Sub-tasks added: one per (name, payload) of the arrays (at most kIdsPerBlock - 1). Their
// ids are a block of their own: one value of the sequence per statement, times the block's
// size, plus each one's place (one nextval per row costs a third more).
constexpr size_t kIdsPerBlock = 16384;
constexpr const char* kInsertAll =
    "INSERT INTO ej_task_subtask(run_id, id, name, payload, state, attempts) SELECT $1, "
    "b.base + u.i, u.n, u.p, 0, 0 FROM (SELECT nextval('ej_task_subtask_block') * 16384 AS "
    "base) AS b, unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS u(n, p, i)";

// Statements, prepared once per connection: the coordinator's.
constexpr const char* kStatements[][2] = {
    {"pending",
     "SELECT id, name, payload, attempts FROM ej_task_subtask WHERE run_id=$1 AND state=0 "
     "ORDER BY id LIMIT $2"},
    // The rows just selected, by id (workers add rows meanwhile, so not by range): a join
    // with the array, one index probe per id.
    {"dispatch",
     "UPDATE ej_task_subtask AS t SET state=1, attempts=t.attempts+1, worker=$3 FROM "
     "unnest($2::bigint[]) AS u(id) WHERE t.run_id=$1 AND t.id=u.id AND t.state=0"},
    {"finish",
     "UPDATE ej_task_subtask SET state=2, success=$3, result=$4, payload=NULL WHERE "
     "run_id=$1 AND id=$2 AND state=1"},
    {"fail", EJ_TASK_FAIL_SET "WHERE run_id=$1 AND id=$2 AND state=1 RETURNING state"},
    // Every commit: the run is still this coordinator's (the fence). A share lock: a
    // takeover waits for the transaction, whose commit then comes before it.
    {"fence", "SELECT 1 FROM ej_task_run WHERE run_id=$1 AND owner=$2 FOR SHARE"},
    // Many successes in one statement: the ids it returns were dispatched (first outcomes).
    {"finish_all",
     "UPDATE ej_task_subtask AS t SET state=2, success=TRUE, result=u.r, payload=NULL FROM "
     "unnest($2::bigint[], $3::bytea[]) AS u(id, r) WHERE t.run_id=$1 AND t.id=u.id AND "
     "t.state=1 RETURNING t.id"},
    {"insert_all", kInsertAll},
};

// The worker's: an outcome counts only for a sub-task dispatched to this worker ($5) with
// this attempt (the row is the fence, whichever coordinator is current).
constexpr const char* kWriterStatements[][2] = {
    {"w_finish_all",
     "UPDATE ej_task_subtask AS t SET state=2, success=TRUE, result=u.r, payload=NULL FROM "
     "unnest($2::bigint[], $3::int4[], $4::bytea[]) AS u(id, a, r) WHERE t.run_id=$1 AND "
     "t.id=u.id AND t.state=1 AND t.worker=$5 AND t.attempts=u.a RETURNING t.id"},
    {"w_fail",
     EJ_TASK_FAIL_SET "WHERE run_id=$1 AND id=$2 AND state=1 AND worker=$5 AND attempts=$6 "
                      "RETURNING state"},
    {"w_insert_all", kInsertAll},
};

// Prepares `statements` on `conn`; the failure names the statement.
template <size_t N>
Status PrepareAll(PGconn* conn, const char* const (&statements)[N][2],
                  const std::function<Status(PGresult*, std::string_view)>& error) {
  for (const auto& [name, sql] : statements) {
    Res r(PQprepare(conn, name, sql, 0, nullptr));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return error(r.get(), name);
  }
  return Status::Ok();
}

int64_t Changed(PGresult* r) {
  const char* n = PQcmdTuples(r);
  return n != nullptr && *n != 0 ? std::atoll(n) : 0;
}

// A statement's error, naming the store and what failed.
Status PgError(PGconn* conn, const std::string& url, PGresult* r, std::string_view what) {
  std::string msg = r != nullptr ? PQresultErrorMessage(r) : "";
  if (msg.empty()) msg = PQerrorMessage(conn);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  const StatusCode code =
      PQstatus(conn) == CONNECTION_BAD ? StatusCode::kUnavailable : StatusCode::kInternal;
  return Status(code, fmt::format("task store '{}': {}: {}", url, what, msg));
}

Result<Res> RunPrepared(PGconn* conn, const std::string& url, const char* name, const Params& p) {
  Res r(PQexecPrepared(conn, name, p.size(), p.values(), p.lengths(), p.formats(), 1));
  ExecStatusType st = PQresultStatus(r.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return PgError(conn, url, r.get(), name);
  return r;
}

// Adds the sub-tasks (names[i], payloads[i]) of run `run_id`, 10,000 a statement (arrays in
// PostgreSQL's binary format); `statement` is kInsertAll prepared.
Status InsertAll(PGconn* conn, const std::string& url, const char* statement,
                 const std::string& run_id, const std::vector<std::string_view>& names,
                 const std::vector<std::string_view>& payloads) {
  constexpr size_t kPerStatement = 10000;
  static_assert(kPerStatement < kIdsPerBlock);
  for (size_t from = 0; from < payloads.size(); from += kPerStatement) {
    const size_t n = std::min(kPerStatement, payloads.size() - from);
    BinaryArray name_array(kTextOid);
    BinaryArray payload_array(kByteaOid);
    for (size_t i = from; i < from + n; ++i) {
      name_array.Add(names[i]);
      payload_array.Add(payloads[i]);
    }
    auto r = RunPrepared(
        conn, url, statement,
        Params().Text(run_id).Binary(name_array.Encode()).Binary(payload_array.Encode()));
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

// The recorded kind of a failure statement's result (RETURNING state).
TaskStore::Recorded FailedAs(PGresult* r) {
  if (PQntuples(r) == 0) return TaskStore::Recorded::kDuplicate;
  uint16_t state = 0;
  std::memcpy(&state, PQgetvalue(r, 0, 0), sizeof state);
  return ntohs(state) == 0 ? TaskStore::Recorded::kRetry : TaskStore::Recorded::kFailed;
}

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
  bool workers_record() const override { return true; }
  uint64_t epoch() const override { return epoch_; }
  std::map<std::string, int64_t> awaited() const override { return awaited_; }
  int64_t redispatched() const override { return redispatched_; }

  Status Setup() {
    // Two coordinators creating the tables at once: one may fail on the catalog; again.
    Status s;
    for (int i = 0; i < 2; ++i) {
      s = Exec(
          "CREATE TABLE IF NOT EXISTS ej_task_run(run_id VARCHAR(512) PRIMARY KEY,"
          " job_name VARCHAR(512) NOT NULL, root_done BOOLEAN NOT NULL DEFAULT FALSE,"
          " owner VARCHAR(200), epoch BIGINT NOT NULL DEFAULT 0,"
          " created_time TIMESTAMP NOT NULL DEFAULT now());"
          "CREATE TABLE IF NOT EXISTS ej_task_subtask(run_id VARCHAR(512) NOT NULL,"
          " id BIGINT NOT NULL, name TEXT NOT NULL, payload BYTEA, state SMALLINT NOT NULL,"
          " attempts INTEGER NOT NULL, retries INTEGER NOT NULL DEFAULT 0,"
          " worker VARCHAR(200), success BOOLEAN, result BYTEA, PRIMARY KEY(run_id, id));"
          "CREATE INDEX IF NOT EXISTS ej_task_subtask_pending ON ej_task_subtask(run_id, id)"
          " WHERE state=0;"
          "CREATE SEQUENCE IF NOT EXISTS ej_task_subtask_block;");
      if (s.ok()) break;
    }
    if (!s.ok()) return s;
    // Tables of an earlier version: the columns added since (ALTER only when missing: it
    // locks the table).
    auto missing = Query(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema=current_schema() "
        "AND ((table_name='ej_task_run' AND column_name='epoch') OR "
        "(table_name='ej_task_subtask' AND column_name IN ('worker', 'retries')))",
        Params());
    if (!missing.ok()) return missing.status();
    if (Int8(missing->get(), 0, 0) < 3) {
      s = Exec(
          "ALTER TABLE ej_task_run ADD COLUMN IF NOT EXISTS epoch BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE ej_task_subtask ADD COLUMN IF NOT EXISTS worker VARCHAR(200),"
          " ADD COLUMN IF NOT EXISTS retries INTEGER NOT NULL DEFAULT 0;");
      if (!s.ok()) return s;
    }
    return PrepareAll(conn_, kStatements,
                      [this](PGresult* r, std::string_view what) { return Error(r, what); });
  }

  Result<bool> Resume(const std::string& run_id,
                      const std::vector<std::string>& live_workers) override {
    auto run = Query("SELECT root_done FROM ej_task_run WHERE run_id=$1", Params().Text(run_id));
    if (!run.ok()) return run.status();
    if (PQntuples(run->get()) == 0) return false;
    if (*PQgetvalue(run->get(), 0, 0) == 0) {  // the root had not finished: drop it all
      if (Status s = Delete(run_id, /*fenced=*/false); !s.ok()) return s;
      return false;
    }
    run_id_ = run_id;
    // The run is ours from now on: a coordinator still at it fails its next commit. Its own
    // statement, before the reset, so that the reset never waits on a transaction of the
    // other's that waits on the run's row.
    auto taken = Query(
        "UPDATE ej_task_run SET owner=$2, epoch=epoch+1 WHERE run_id=$1 "
        "RETURNING epoch",
        Params().Text(run_id).Text(token_));
    if (!taken.ok()) return taken.status();
    if (PQntuples(taken->get()) != 1) return false;  // deleted meanwhile
    epoch_ = static_cast<uint64_t>(Int8(taken->get(), 0, 0));
    if (Status s = Begin(); !s.ok()) return s;
    // Dispatched to a worker that is gone: pending again. A live worker keeps its own.
    BinaryArray live(kTextOid);
    for (const std::string& w : live_workers) live.Add(w);
    auto back = Command(
        "UPDATE ej_task_subtask SET state=0, attempts=GREATEST(attempts-1, 0) WHERE "
        "run_id=$1 AND state=1 AND (worker IS NULL OR NOT (worker = ANY($2::text[])))",
        Params().Text(run_id).Binary(live.Encode()));
    if (!back.ok()) return back.status();
    redispatched_ = *back;
    auto held = Query(
        "SELECT worker, count(*) FROM ej_task_subtask WHERE run_id=$1 AND state=1 GROUP BY "
        "worker",
        Params().Text(run_id));
    if (!held.ok()) return held.status();
    awaited_.clear();
    for (int i = 0; i < PQntuples(held->get()); ++i) {
      awaited_[std::string(Bytes(held->get(), i, 0))] = Int8(held->get(), i, 1);
    }
    if (Status s = Reload(false); !s.ok()) return s;
    if (Status s = Commit(); !s.ok()) return s;
    resumed_ = true;
    return true;
  }

  Status Reload(bool pending_only) override {
    if (pending_only) {
      auto pending = Query("SELECT count(*) FROM ej_task_subtask WHERE run_id=$1 AND state=0",
                           Params().Text(run_id_));
      if (!pending.ok()) return pending.status();
      pending_ = Int8(pending->get(), 0, 0);
      return Status::Ok();
    }
    auto counts = Query(
        "SELECT count(*), count(*) FILTER (WHERE state=2), count(*) FILTER (WHERE state=2 AND "
        "NOT success), count(*) FILTER (WHERE state=0), COALESCE(sum(retries), 0)::bigint FROM "
        "ej_task_subtask WHERE run_id=$1",
        Params().Text(run_id_));
    if (!counts.ok()) return counts.status();
    PGresult* r = counts->get();
    total_ = Int8(r, 0, 0);
    done_ = Int8(r, 0, 1);
    failed_ = Int8(r, 0, 2);
    pending_ = Int8(r, 0, 3);
    retried_ = Int8(r, 0, 4);
    return Status::Ok();
  }

  Status RequeueWorker(const std::string& worker, bool lost, std::string_view reason) override {
    auto r = lost ? Command(EJ_TASK_FAIL_SET "WHERE run_id=$1 AND state=1 AND worker=$2",
                            Params().Text(run_id_).Text(worker).Bytes(reason).Int(max_attempts_))
                  : Command(
                        "UPDATE ej_task_subtask SET state=0, attempts=GREATEST(attempts-1, "
                        "0) WHERE run_id=$1 AND state=1 AND worker=$2",
                        Params().Text(run_id_).Text(worker));
    if (!r.ok()) return r.status();
    return Reload(false);
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
    auto r = Prepared("fence", Params().Text(run_id_).Text(token_));
    if (!r.ok() || PQntuples(r->get()) != 1) {
      (void)Exec("ROLLBACK");
      return r.ok() ? TakenOver() : r.status();
    }
    return Exec("COMMIT");
  }

  Result<std::vector<StoredTask>> TakePending(int n, size_t max_bytes,
                                              std::string_view worker) override {
    auto res = Prepared("pending", Params().Text(run_id_).Int(n));
    if (!res.ok()) return res.status();
    PGresult* r = res->get();
    std::vector<StoredTask> out;
    BinaryArray ids(kInt8Oid);
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
      ids.Add8(static_cast<int64_t>(t.id));
      out.push_back(std::move(t));
    }
    if (!out.empty()) {
      auto d = Prepared("dispatch",
                        Params().Text(run_id_).Binary(ids.Encode()).Text(std::string(worker)));
      if (!d.ok()) return d.status();
    }
    pending_ -= static_cast<int64_t>(out.size());
    return out;
  }

  Result<Recorded> Record(uint64_t id, bool success, std::string_view data) override {
    const auto sid = static_cast<int64_t>(id);
    if (!success) {
      auto r = Prepared("fail", Params().Text(run_id_).Int(sid).Bytes(data).Int(max_attempts_));
      if (!r.ok()) return r.status();
      const Recorded rec = FailedAs(r->get());
      Count(rec, 0);
      return rec;
    }
    auto r = Prepared("finish", Params().Text(run_id_).Int(sid).Bool(success).Bytes(data));
    if (!r.ok()) return r.status();
    if (Changed(r->get()) == 0) return Recorded::kDuplicate;
    Count(Recorded::kFirst, 0);
    return Recorded::kFirst;
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
    return AddAll(name, {payload});
  }

  Status AddAll(std::string_view name, const std::vector<std::string_view>& payloads) override {
    const std::vector<std::string_view> names(payloads.size(), name);
    if (Status s = InsertAll(conn_, url_, kInsertName, run_id_, names, payloads); !s.ok()) {
      return s;
    }
    total_ += static_cast<int64_t>(payloads.size());
    pending_ += static_cast<int64_t>(payloads.size());
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

  Status Error(PGresult* r, std::string_view what) const { return PgError(conn_, url_, r, what); }

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
    return RunPrepared(conn_, url_, name, p);
  }

  static constexpr const char* kInsertName = "insert_all";

  PGconn* const conn_;
  const std::string url_;
  const std::string job_name_;
  std::string run_id_;
  // This coordinator's mark on the runs it owns (ej_task_run.owner).
  const std::string token_ =
      fmt::format("{}:{}", getpid(), std::chrono::steady_clock::now().time_since_epoch().count());
  uint64_t epoch_ = 0;
  std::map<std::string, int64_t> awaited_;
  int64_t redispatched_ = 0;
  bool resumed_ = false;
};

// The shared store's URL, parsed; INVALID_ARGUMENT naming it (password hidden) when it is not
// a postgresql:// one.
Result<tracing::TracingUrl> ParseStoreUrl(std::string_view url) {
  auto parsed = tracing::ParseTracingUrl(url);
  if (!parsed.ok()) return parsed.status().WithContext("task store");
  if (parsed->kind != tracing::TracingUrl::Kind::kPostgreSql) {
    return InvalidArgument(fmt::format(
        "task store: '{}' is not a postgresql:// URL (the shared task store is PostgreSQL)",
        parsed->redacted));
  }
  return parsed;
}

}  // namespace

Result<std::unique_ptr<PgTaskStore>> PgTaskStore::Connect(std::string_view url,
                                                          std::string job_name, int max_attempts) {
  auto parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
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

Result<std::unique_ptr<PgOutcomeWriter>> PgOutcomeWriter::Create(std::string_view url) {
  auto parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  return std::unique_ptr<PgOutcomeWriter>(new PgOutcomeWriter(std::string(url), parsed->redacted));
}

PgOutcomeWriter::~PgOutcomeWriter() {
  MutexLock lock(&mu_);
  for (PGconn* c : idle_) PQfinish(c);
}

Result<PGconn*> PgOutcomeWriter::Take() {
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      PGconn* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  auto parsed = ParseStoreUrl(url_);
  if (!parsed.ok()) return parsed.status();
  auto opened = tracing::OpenPgConnection(*parsed);
  if (!opened.ok()) {
    return Status(StatusCode::kUnavailable, fmt::format("task store '{}': cannot connect: {}",
                                                        redacted_, opened.status().message()));
  }
  PGconn* conn = *opened;
  if (Status s = PrepareAll(
          conn, kWriterStatements,
          [&](PGresult* r, std::string_view what) { return PgError(conn, redacted_, r, what); });
      !s.ok()) {
    PQfinish(conn);
    return s;
  }
  return conn;
}

void PgOutcomeWriter::Give(PGconn* conn) {
  if (PQstatus(conn) != CONNECTION_OK || PQtransactionStatus(conn) != PQTRANS_IDLE) {
    PQfinish(conn);
    return;
  }
  MutexLock lock(&mu_);
  idle_.push_back(conn);
}

Result<std::vector<TaskStore::Recorded>> PgOutcomeWriter::Write(
    const std::string& run_id, const std::string& worker, int max_attempts,
    const std::vector<Outcome>& outcomes) {
  using Recorded = TaskStore::Recorded;
  std::vector<Recorded> out(outcomes.size(), Recorded::kDuplicate);
  if (outcomes.empty()) return out;
  auto taken = Take();
  if (!taken.ok()) return taken.status();
  PGconn* conn = *taken;
  auto exec = [&](const char* sql) -> Status {
    Res r(PQexec(conn, sql));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return PgError(conn, redacted_, r.get(), sql);
    return Status::Ok();
  };
  auto write = [&]() -> Status {
    if (Status s = exec("BEGIN"); !s.ok()) return s;
    BinaryArray ids(kInt8Oid);
    BinaryArray attempts(kInt4Oid);
    BinaryArray results(kByteaOid);
    std::map<uint64_t, size_t> index;  // the successes' ids -> their place
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const Outcome& o = outcomes[i];
      if (o.success) {
        ids.Add8(static_cast<int64_t>(o.id));
        attempts.Add4(o.attempt);
        results.Add(o.data);
        index[o.id] = i;
        continue;
      }
      auto r = RunPrepared(conn, redacted_, "w_fail",
                           Params()
                               .Text(run_id)
                               .Int(static_cast<int64_t>(o.id))
                               .Bytes(o.data)
                               .Int(max_attempts)
                               .Text(worker)
                               .Int(o.attempt));
      if (!r.ok()) return r.status();
      out[i] = FailedAs(r->get());
    }
    if (ids.size() > 0) {
      auto r = RunPrepared(conn, redacted_, "w_finish_all",
                           Params()
                               .Text(run_id)
                               .Binary(ids.Encode())
                               .Binary(attempts.Encode())
                               .Binary(results.Encode())
                               .Text(worker));
      if (!r.ok()) return r.status();
      for (int row = 0; row < PQntuples(r->get()); ++row) {
        auto it = index.find(static_cast<uint64_t>(Int8(r->get(), row, 0)));
        if (it != index.end()) out[it->second] = Recorded::kFirst;
      }
    }
    // What the first successes mapped, in one statement per 10,000.
    std::vector<std::string_view> names;
    std::vector<std::string_view> payloads;
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (out[i] != Recorded::kFirst) continue;
      for (const auto& [name, payload] : outcomes[i].mapped) {
        names.push_back(name);
        payloads.push_back(payload);
      }
    }
    if (Status s = InsertAll(conn, redacted_, "w_insert_all", run_id, names, payloads); !s.ok()) {
      return s;
    }
    return exec("COMMIT");
  };
  Status s = write();
  if (!s.ok() && PQtransactionStatus(conn) != PQTRANS_IDLE) (void)exec("ROLLBACK");
  Give(conn);
  if (!s.ok()) return s;
  return out;
}

}  // namespace elasticjob::task
