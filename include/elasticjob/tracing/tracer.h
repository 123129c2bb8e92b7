// Tracer: event tracing into a database, as ElasticJob's tracing (RDB) does, for one process.
// Open one Tracer per process and give it to every job (BootstrapOptions::tracer, or
// `elasticjob run --tracing URL`); every item run, trigger step and job log line of those
// jobs is then written to the database at `url`:
//
//   sqlite:///var/lib/elasticjob/events.db            (a file; WAL mode)
//   postgresql://user:password@host:5432/database
//   mysql://user:password@host:3306/database          (MySQL or MariaDB)
//
// The tables (JOB_EXECUTION_LOG, JOB_STATUS_TRACE_LOG with its index TASK_ID_STATE_INDEX,
// as ElasticJob 3.0.5 creates them for that database, and JOB_EXECUTION_LOG_LINE) are
// created when missing. The URL's password is never logged nor written to the registry.
//
// Posting costs a queue push: it never blocks a job or a trigger. One writer thread per
// Tracer (at a lower CPU priority than the jobs' threads) writes the queue in batches, one
// transaction each. While the database is down or
// restarting, the writer retries with backoff (up to max_backoff) and loses nothing as long
// as the queue holds (queue_capacity); a retried batch writes nothing twice. When the queue
// overflows, the oldest events are dropped and counted (dropped()), logged once per episode.
// Shutdown (and the destructor) flushes the queue first, bounded by a timeout.
//
// Thread safety: every method may be called from any thread.
//
//   auto tracer = elasticjob::Tracer::Open({.url = "sqlite:///tmp/events.db"});
//   if (!tracer.ok()) { std::cerr << tracer.status() << "\n"; return 1; }
//   elasticjob::BootstrapOptions options;
//   options.tracer = *tracer;
//   elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<OrderSyncJob>(), *config,
//                                        options);
//   ...
//   job.Shutdown();
//   (*tracer)->Shutdown(std::chrono::seconds(5));
#ifndef ELASTICJOB_TRACING_TRACER_H_
#define ELASTICJOB_TRACING_TRACER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "elasticjob/logger.h"
#include "elasticjob/status.h"
#include "elasticjob/tracing/job_event.h"

namespace elasticjob {

struct TracingConfiguration {
  // sqlite:///path, postgresql://user:pass@host:port/db or mysql://user:pass@host:port/db.
  std::string url;
  // Events held while the database is slow or down; beyond it the oldest are dropped.
  size_t queue_capacity = 100000;
  // Events written per transaction, at most.
  size_t batch_size = 1000;
  // How long the writer, woken by a post after it went idle, waits for more before it
  // writes: the events of a burst of triggers go in one transaction, after the burst.
  std::chrono::milliseconds batch_delay{100};
  // The longest wait between two attempts while the database is unreachable.
  std::chrono::milliseconds max_backoff{std::chrono::seconds(5)};
  // An execution's log keeps at most this many lines and bytes (then a marker line).
  size_t log_line_limit = 1000;
  size_t log_byte_limit = 256 * 1024;
  // Bound on the flush of the destructor (Shutdown's own timeout is its argument).
  std::chrono::milliseconds shutdown_timeout{std::chrono::seconds(5)};
  // Where the tracer's own lines go (a full queue, the database down and back, events
  // dropped: elasticjob/logger.h); null: the process default.
  std::shared_ptr<Logger> logger = nullptr;
};

// What a Tracer has done so far.
struct TracerStats {
  uint64_t written = 0;    // events (rows) written
  uint64_t dropped = 0;    // events dropped: the queue overflowed, or left at shutdown
  uint64_t pending = 0;    // events the writer holds, not yet written
  uint64_t retries = 0;    // failed writes retried
  std::string last_error;  // the last database error ("" if none), without credentials
};

class Tracer {
 public:
  // Opens the tracer for `config.url` and starts its writer. Fails with INVALID_ARGUMENT
  // naming the field and value (password hidden) for a bad URL or limit. An unreachable
  // database does not fail it: the writer retries (the events wait in the queue).
  static Result<std::shared_ptr<Tracer>> Open(const TracingConfiguration& config);

  virtual ~Tracer() = default;

  // Queue an event (the storage's statement for it is chosen by its fields: a
  // JobExecutionEvent without complete_time inserts the row, with it completes the row).
  virtual void Post(JobExecutionEvent event) = 0;
  virtual void Post(JobStatusTraceEvent event) = 0;
  virtual void Post(JobLogLine line) = 0;

  // Waits until every event posted before the call is written (or dropped). OK, or TIMEOUT
  // naming what is left and the last database error.
  virtual Status Flush(std::chrono::milliseconds timeout) = 0;
  // Flush(timeout), then stops the writer; what is left is dropped (counted, logged). Later
  // posts are dropped. Idempotent.
  virtual Status Shutdown(std::chrono::milliseconds timeout) = 0;

  virtual TracerStats stats() = 0;
  // stats().dropped.
  virtual uint64_t dropped() = 0;
  // The URL with its password replaced by "***".
  virtual std::string redacted_url() const = 0;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_TRACING_TRACER_H_
