// Parsing of tracing database URLs (include/elasticjob/tracing/tracer.h):
//   sqlite:///absolute/path.db (or sqlite://relative/path.db)
//   postgresql://user:password@host:port/database (postgres:// too)
//   mysql://user:password@host:port/database
// User and password may be percent-encoded (%40 for '@').
#ifndef ELASTICJOB_TRACING_EVENTS_TRACING_URL_H_
#define ELASTICJOB_TRACING_EVENTS_TRACING_URL_H_

#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::tracing {

struct TracingUrl {
  enum class Kind { kSqlite, kPostgreSql, kMySql };
  Kind kind = Kind::kSqlite;
  std::string path;  // SQLite's file
  std::string user;
  std::string password;
  std::string host;
  int port = 0;  // 0: the client's default
  std::string database;
  std::string redacted;  // the URL with the password replaced by ***
};

// Fails with INVALID_ARGUMENT naming the problem and the URL without its password.
Result<TracingUrl> ParseTracingUrl(std::string_view url);

// `url` with the password of its user info replaced by "***" (any scheme).
std::string RedactUrl(std::string_view url);

}  // namespace elasticjob::tracing

#endif  // ELASTICJOB_TRACING_EVENTS_TRACING_URL_H_
