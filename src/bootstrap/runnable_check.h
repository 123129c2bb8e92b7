// What a job configuration names that a process must know to run it, beyond what
// ValidateJobConfiguration checks (docs/config.md, "Values that must be known"): the sharding
// strategy (jobShardingStrategyType), the item limit (jobExecutorThreadPoolSizeProviderType),
// the error handler (jobErrorHandlerType, with its props) and the listener types
// (jobListenerTypes). A running instance checks them against what it registered (a
// configuration that fails is refused as a whole and the last good one kept); a writer
// (JobConfigurationAPI: the CLI, the console) against the built-in names (WriterCheck).
//
// Thread safety: stateless functions; `strategies` is only read.
#ifndef ELASTICJOB_BOOTSTRAP_RUNNABLE_CHECK_H_
#define ELASTICJOB_BOOTSTRAP_RUNNABLE_CHECK_H_

#include <optional>
#include <set>
#include <string>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "elasticjob/status.h"

namespace elasticjob::config {

// OK when `strategies` has the config's strategy, the item limit type
// and the error handler type are known (and the handler's props good), and every listener type is a
// built-in one or in `listener_types`. Else INVALID_ARGUMENT naming the field, the value and the
// known names.
Status CheckRunnable(const JobConfiguration& config, const JobShardingStrategyRegistry& strategies,
                     const std::set<std::string>& listener_types);

// The check of a configuration about to be written, by a process that runs no instance of
// the job: CheckRunnable against the built-in names, then, when `job_type` is a type this
// process knows (SCRIPT, HTTP, or one RegisterJobType registered), the type's own check of
// the props (a SCRIPT command that does not parse, an HTTP URL that is not one). Names a
// process registered elsewhere (an embedding application's strategy, listener or job type)
// cannot be known here: a value the registry's `current` configuration already has is taken
// as known (it was written by the instance that registered it), any other is refused.
Status WriterCheck(const JobConfiguration& config, const std::string& job_type,
                   const std::optional<JobConfiguration>& current);

}  // namespace elasticjob::config

#endif  // ELASTICJOB_BOOTSTRAP_RUNNABLE_CHECK_H_
