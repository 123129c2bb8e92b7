// RunFile: what an `elasticjob run` file declares (ElasticJob Spring Boot's property names,
// see examples/quickstart.yaml): the registry center and the jobs, each validated.
//
// Parsing never throws: whatever the bytes (binary garbage, a scalar document, a list where
// a name belongs), the result is a RunFile or one INVALID_ARGUMENT naming the field and the
// value found.
//
// Thread safety: stateless function.
#ifndef ELASTICJOB_CLI_RUN_FILE_H_
#define ELASTICJOB_CLI_RUN_FILE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/status.h"

namespace elasticjob::cli {

struct RunJobSpec {
  std::string type;  // elasticJobType (SCRIPT, HTTP, ...)
  JobConfiguration config;
};

struct RunFile {
  // `registry_flag` when given, else built from `elasticjob.regCenter`: memory://NAMESPACE
  // without serverLists, zookeeper://SERVERS/NAMESPACE?... with them. Not yet checked.
  std::string registry_url;
  std::vector<RunJobSpec> jobs;  // in the file's order
  // `elasticjob.shutdownGraceMilliseconds`: how long running scripts get between SIGTERM and
  // SIGKILL at shutdown (nullopt: not set).
  std::optional<int64_t> shutdown_grace_ms;
  // `elasticjob.tracing`: event tracing's database URL (docs/tracing.md), given as
  // `tracing: URL` or `tracing: {url: URL}` (ElasticJob's `type: RDB` beside it is accepted);
  // an empty map: kDefaultTracingUrl. nullopt: not set (tracing off). Not yet checked.
  std::optional<std::string> tracing_url;
  // `elasticjob.dump.address`: where the jobs' dump ports listen (nullopt: not set, the
  // default 127.0.0.1). `elasticjob.dump.port` (ElasticJob 3 Spring Boot's key) is the
  // monitorPort of every job that sets none; it is applied to `jobs` already.
  std::optional<std::string> dump_address;
};

// Where `elasticjob run` traces when tracing is asked for without a URL: a SQLite file in
// the working directory.
inline constexpr const char* kDefaultTracingUrl = "sqlite://elasticjob-events.db";

// How a job's schedule reads in the commands' messages: `cron '0/5 * * * * ?'`,
// `fixedRate 30s`, `fixedDelay 5m`.
std::string ScheduleWords(const JobConfiguration& config);

// Parses the text of a run file. Fails with INVALID_ARGUMENT naming the field and value:
// no top-level `elasticjob:` map, a regCenter that is not a map of strings, no jobs, a job
// name that is not a string, a job whose settings are not a map, a setting of the wrong type,
// a job that ValidateJobConfiguration rejects, no elasticJobType (an unknown one fails when
// the job starts, naming the known ones), a shutdownGraceMilliseconds that is not a
// non-negative number of milliseconds, a `dump` that is not a map of an address string
// and a port from -1 to 65535, or a tracing that is neither a URL nor a map (with a string
// url). Appends one line
// per unknown key to `*warnings` (when not null), also when the file is refused.
Result<RunFile> ParseRunFile(std::string_view text, std::string_view registry_flag = {},
                             std::vector<std::string>* warnings = nullptr);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_RUN_FILE_H_
