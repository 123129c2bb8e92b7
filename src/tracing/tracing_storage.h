// TracingStorage: ElasticJob's RDB event storage (RDBJobEventRepository) for SQLite,
// PostgreSQL and MySQL/MariaDB: the tables of each dialect (created when missing), the
// writes of the bus's batches (one transaction each, every statement idempotent: a batch
// retried after a commit whose answer was lost writes nothing twice) and the reads of
// TraceReader.
//
// Thread safety: none (one connection); the bus's writer owns one, each reader another.
#ifndef ELASTICJOB_TRACING_TRACING_STORAGE_H_
#define ELASTICJOB_TRACING_TRACING_STORAGE_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "elasticjob/tracing/trace_reader.h"
#include "tracing/events/event.h"
#include "tracing/events/event_sink.h"
#include "tracing/events/tracing_url.h"
#include "tracing/sql_connection.h"

namespace elasticjob::tracing {

// The DDL of `kind`: ElasticJob 3.0.5's two tables and index (IF NOT EXISTS where the
// database has it), our log line table, and on MySQL a unique index on
// JOB_STATUS_TRACE_LOG.id (ElasticJob's MySQL table has none; it keeps retried rows single).
struct Ddl {
  std::string execution_log;
  std::string status_trace_log;
  std::string task_id_state_index;
  std::string log_line;
  std::string status_id_index;  // MySQL only
};
const Ddl& DdlOf(TracingUrl::Kind kind);

class TracingStorage final : public TraceReader, public EventSink {
 public:
  // Connects (a writer creates a missing SQLite file, a reader does not) and, for a
  // writer, creates the tables when missing. UNAVAILABLE with the database's reason.
  static Result<std::unique_ptr<TracingStorage>> Open(const TracingUrl& url, bool writer);

  // EventSink
  WriteResult Write(std::span<Event* const> batch) override;

  // TraceReader
  Result<std::vector<JobExecutionEvent>> Executions(const ExecutionQuery& query) override;
  Result<std::vector<JobStatusTraceEvent>> StatusTraces(const StatusQuery& query) override;
  Result<std::vector<JobLogLine>> LogLines(const std::string& execution_id, int64_t after_line,
                                           size_t limit) override;
  Result<JobExecutionEvent> Execution(const std::string& execution_id) override;

  TracingStorage(TracingUrl url, std::unique_ptr<SqlConnection> conn)
      : url_(std::move(url)), conn_(std::move(conn)) {}

 private:
  Status CreateTables();
  Status WriteOne(const Event& e);
  // The batch as multi-row statements, one kind after another.
  Status WriteGrouped(std::span<Event* const> batch);
  void AppendParams(const Event& e, std::vector<SqlValue>& params) const;
  SqlValue Bool(bool b) const;
  bool IsTrue(const std::optional<std::string>& v) const;
  Result<std::vector<JobExecutionEvent>> ExecutionRows(const std::string& where,
                                                       std::vector<SqlValue> params, size_t limit,
                                                       size_t offset);

  const TracingUrl url_;
  const std::unique_ptr<SqlConnection> conn_;
};

// TracingStorage::Open(url, /*writer=*/true), as the event bus's sink (EventBus::Opener).
Result<std::unique_ptr<EventSink>> OpenSink(const TracingUrl& url);

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_TRACING_STORAGE_H_
