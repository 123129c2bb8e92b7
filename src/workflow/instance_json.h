// A workflow instance as the JSON the CLI (`workflow instance --json`, `history --json`) and
// the console's REST API (`/api/workflows/...`) both print: one shape, built here.
//
// Thread safety: a pure function.
#ifndef ELASTICJOB_WORKFLOW_INSTANCE_JSON_H_
#define ELASTICJOB_WORKFLOW_INSTANCE_JSON_H_

#include <nlohmann/json.hpp>

#include "elasticjob/workflow/workflow_api.h"

namespace elasticjob::workflow {

// {"id","workflow","status","trigger","message","createdMs","endedMs","context","nodes":
// [{"id","state","attempt","result","error","startedMs","endedMs"}]}; a context that is not
// JSON becomes {}.
nlohmann::json InstanceStatusJson(const WorkflowInstanceStatus& s);

}  // namespace elasticjob::workflow

#endif  // ELASTICJOB_WORKFLOW_INSTANCE_JSON_H_
