// The console API's JSON shapes (docs/console-openapi.yaml): job configurations both ways,
// jobs, servers, executions; and the mapping of Status codes to HTTP statuses.
//
// Thread safety: stateless functions.
#ifndef ELASTICJOB_CONSOLE_API_JSON_H_
#define ELASTICJOB_CONSOLE_API_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "console/registry_view.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/status.h"
#include "elasticjob/tracing/job_event.h"

namespace elasticjob::console {

// Milliseconds since the epoch.
int64_t EpochMs(TimePoint t);

// The configuration with the YAML's key names (camelCase).
nlohmann::json ConfigToJson(const JobConfiguration& config);
// Applies the fields of `json` (the YAML's key names) onto `*config`; fields not given keep
// their value. INVALID_ARGUMENT "<field>: ..." for an unknown field or a value of the wrong
// type. Does not validate (ValidateJobConfiguration does).
Status ConfigFromJson(const nlohmann::json& json, JobConfiguration* config);

// The field an error message names ("cron: ..." -> "cron"; "jobListenerTypes[1]: ..." ->
// "jobListenerTypes"), or "" when it names none.
std::string FieldOf(const std::string& message);

// The HTTP status for a failed call: 400 INVALID_ARGUMENT, 404 NOT_FOUND, 409 ALREADY_EXISTS
// and FAILED_PRECONDITION, 503 for an unreachable registry, else 500.
int HttpStatusOf(const Status& status);

nlohmann::json JobRowToJson(const JobRow& row);
// One job: name, status, jobType, config, yaml, sharding, instances, servers, nextFireTimes.
nlohmann::json JobToJson(const JobNodes& job, TimePoint now);

// One server: ip, hostname (from the tracing database's executions; null when unknown),
// instances (ids), instanceDetails ({id, pid, jobs, version, hostname, startTime, uptimeMs,
// registeredTime, heartbeatWithinMs}: those after jobs from the instance's `runtime/{id}`
// node, null without one, as for a Java instance; heartbeatWithinMs null too when the
// console is not `connected`), jobs, disabledJobs.
nlohmann::json ServerToJson(const ServerBriefInfo& server,
                            const std::map<std::string, std::vector<std::string>>& jobs_by_instance,
                            const std::string& hostname,
                            const std::map<std::string, instance::InstanceRuntime>& runtimes,
                            TimePoint now, bool connected);

nlohmann::json ExecutionToJson(const JobExecutionEvent& e);
// The overview's execution statistics of `rows` (newest first), completed ones only, in
// buckets of `width` ms from `from` to `now` (epoch ms): {buckets: [{start, succeeded,
// failed}], successRate (null without executions), timedOut (failed with the cause `timeout
// after N ms`: timeoutMs, docs/scheduling.md), recentFailures (the newest 10)}.
nlohmann::json ExecutionStatsJson(const std::vector<JobExecutionEvent>& rows, int64_t from,
                                  int64_t width, int64_t now);
nlohmann::json StatusTraceToJson(const JobStatusTraceEvent& e);

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_API_JSON_H_
