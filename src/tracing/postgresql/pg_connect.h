// Opening a libpq connection from a postgresql:// URL, shared by the tracing storage and the
// task models' shared store.
#ifndef ELASTICJOB_TRACING_POSTGRESQL_PG_CONNECT_H_
#define ELASTICJOB_TRACING_POSTGRESQL_PG_CONNECT_H_

#include <libpq-fe.h>

#include "elasticjob/status.h"
#include "tracing/events/tracing_url.h"

namespace elasticjob::tracing {

// Connects to `url` (5 s connect timeout, UTF-8; `options` is libpq's "options" parameter
// when not null, e.g. "-c TimeZone=UTC") with the server's notices silenced. The caller owns
// the connection (PQfinish). UNAVAILABLE with libpq's message (never the password) when the
// server cannot be reached or refuses.
Result<PGconn*> OpenPgConnection(const TracingUrl& url, const char* options = nullptr);

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_POSTGRESQL_PG_CONNECT_H_
