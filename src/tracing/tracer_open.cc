// Tracer::Open and TraceReader::Open: the event bus (core) over the databases of the tracing
// component (tracing_storage.h and its clients).
#include <fmt/format.h>

#include "elasticjob/tracing/trace_reader.h"
#include "elasticjob/tracing/tracer.h"
#include "tracing/events/event_bus.h"
#include "tracing/events/tracing_url.h"
#include "tracing/tracing_storage.h"

namespace elasticjob {

Result<std::shared_ptr<Tracer>> Tracer::Open(const TracingConfiguration& config) {
  auto url = tracing::ParseTracingUrl(config.url);
  if (!url.ok()) return url.status();
  auto positive = [&](const char* field, size_t v) -> Status {
    if (v == 0) {
      return InvalidArgument(fmt::format("tracing.{}: must be greater than 0, got 0", field));
    }
    return Status::Ok();
  };
  for (Status s : {positive("queue_capacity", config.queue_capacity),
                   positive("batch_size", config.batch_size),
                   positive("log_line_limit", config.log_line_limit),
                   positive("log_byte_limit", config.log_byte_limit)}) {
    if (!s.ok()) return s;
  }
  if (config.max_backoff.count() <= 0) {
    return InvalidArgument(fmt::format("tracing.max_backoff: must be positive, got {} ms",
                                       config.max_backoff.count()));
  }
  return std::shared_ptr<Tracer>(std::make_shared<tracing::EventBus>(
      config, *url, [u = *url] { return tracing::OpenSink(u); }));
}

Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& url) {
  auto parsed = tracing::ParseTracingUrl(url);
  if (!parsed.ok()) return parsed.status();
  auto storage = tracing::TracingStorage::Open(*parsed, /*writer=*/false);
  if (!storage.ok()) return storage.status();
  return std::unique_ptr<TraceReader>(std::move(storage).value());
}

}  // namespace elasticjob
