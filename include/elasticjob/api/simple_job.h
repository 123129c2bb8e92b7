// SimpleJob: the C++ job a user writes. Execute runs one sharding item; items of one trigger
// run in parallel on the job's thread pool. Throwing (any exception) reports the item as
// failed; it never kills a worker thread.
//
// Thread safety: Execute may be called concurrently for different items; implementations
// must be safe for that.
//
// clang-format off
//   class OrderSyncJob : public elasticjob::SimpleJob {
//    public:
//     void Execute(const elasticjob::ShardingContext& ctx) override {
//       SyncRegion(ctx.sharding_parameter.value_or(""));
//     }
//   };
// clang-format on
#ifndef ELASTICJOB_API_SIMPLE_JOB_H_
#define ELASTICJOB_API_SIMPLE_JOB_H_

#include "elasticjob/api/sharding_context.h"

namespace elasticjob {

class SimpleJob {
 public:
  virtual ~SimpleJob() = default;
  virtual void Execute(const ShardingContext& context) = 0;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_API_SIMPLE_JOB_H_
