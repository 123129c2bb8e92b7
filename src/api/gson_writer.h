// Gson-compatible JSON string escaping. Hand-written because ElasticJob's peers compare the
// exact bytes Gson writes (its default escapes <, >, &, = and ' as \u003c.. for HTML safety,
// which general JSON libraries do not do).
//
// Thread safety: pure function.
#ifndef ELASTICJOB_API_GSON_WRITER_H_
#define ELASTICJOB_API_GSON_WRITER_H_

#include <string>
#include <string_view>

namespace elasticjob::api {

// Appends `value` (UTF-8) to `out` as a quoted JSON string, escaped as Gson's default
// (HTML-safe) JsonWriter escapes it.
void AppendGsonString(std::string& out, std::string_view value);

}  // namespace elasticjob::api

#endif  // ELASTICJOB_API_GSON_WRITER_H_
