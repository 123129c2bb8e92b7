#include "elasticjob/api/dataflow_job.h"

#include "infra/props.h"

namespace elasticjob {

Result<bool> DataflowStreamingProcess(const JobConfiguration& config) {
  return infra::BoolProp(config.props, "streaming.process", false);
}

}  // namespace elasticjob
