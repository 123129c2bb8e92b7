// EventSink: where the event bus writes its batches. The tracing component's database
// storage (tracing/tracing_storage.h) is the one Tracer::Open gives the bus; tests give their
// own. The bus and its events belong to the core library, the databases to the tracing
// component (docs/embedding.md, the package's components).
#ifndef ELASTICJOB_TRACING_EVENTS_EVENT_SINK_H_
#define ELASTICJOB_TRACING_EVENTS_EVENT_SINK_H_

#include <cstddef>
#include <optional>
#include <span>

#include "elasticjob/status.h"
#include "tracing/events/event.h"

namespace elasticjob::tracing {

class EventSink {
 public:
  // The outcome of Write: OK, or the error and, when one event was refused by the database
  // (not the connection), its index in the batch (the bus drops it and writes the rest).
  struct WriteResult {
    Status status;
    std::optional<size_t> refused;
  };

  virtual ~EventSink() = default;

  // Writes `batch` in one transaction (kFlush events are skipped). Called by the bus's
  // writer thread only.
  virtual WriteResult Write(std::span<Event* const> batch) = 0;
};

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_EVENTS_EVENT_SINK_H_
