// DataflowJob<T>: ElasticJob's DataflowJob. Each item fetches data, then processes it.
// Prop `streaming.process` (default false):
//   false  fetch once; process when the fetch is not empty;
//   true   fetch, process, fetch again ... until a fetch comes back empty, or the job is no
//          longer eligible to run here (shutting down, paused, or the cluster needs
//          resharding: JobRunState::IsEligibleForJobRunning, checked between rounds as
//          ElasticJob's DataflowJobExecutor does).
// An exception from either step fails the item and reaches the job's error handler.
// `streaming.process` must read true or false (any case, as Java's Boolean.parseBoolean
// accepts); anything else fails Schedule() naming the prop and the value.
//
// Give the object to a bootstrap (the `/{job}` node holds "CPP_DATAFLOW" unless
// BootstrapOptions::job_type_name says otherwise):
//
//   class OrderFeed : public elasticjob::DataflowJob<Order> {
//    public:
//     std::vector<Order> FetchData(const elasticjob::ShardingContext& ctx) override {
//       return db.Pending(ctx.sharding_item, 100);
//     }
//     void ProcessData(const elasticjob::ShardingContext&, std::vector<Order> orders) override {
//       for (auto& o : orders) db.MarkDone(o);
//     }
//   };
//   elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<OrderFeed>(), *config);
//
// Thread safety: FetchData and ProcessData may be called concurrently for different items.
#ifndef ELASTICJOB_API_DATAFLOW_JOB_H_
#define ELASTICJOB_API_DATAFLOW_JOB_H_

#include <string>
#include <utility>
#include <vector>

#include "elasticjob/api/job_item_executor.h"

namespace elasticjob {

// The `streaming.process` prop of `config`: false when absent; INVALID_ARGUMENT naming the
// prop and the value unless it reads true or false (any case).
Result<bool> DataflowStreamingProcess(const JobConfiguration& config);

template <typename T>
class DataflowJob : public JobItemExecutor {
 public:
  virtual std::vector<T> FetchData(const ShardingContext& context) = 0;
  virtual void ProcessData(const ShardingContext& context, std::vector<T> data) = 0;

  void Process(const JobConfiguration& config, const ShardingContext& context,
               JobRunState& state) final {
    auto streaming = DataflowStreamingProcess(config);
    std::vector<T> data = FetchData(context);
    if (!streaming.ok() || !*streaming) {
      if (!data.empty()) ProcessData(context, std::move(data));
      return;
    }
    while (!data.empty()) {
      ProcessData(context, std::move(data));
      if (!state.IsEligibleForJobRunning()) return;
      data = FetchData(context);
    }
  }
  Status Validate(const JobConfiguration& config) override {
    return DataflowStreamingProcess(config).status();
  }
  std::string type_name() const override { return "CPP_DATAFLOW"; }
};

}  // namespace elasticjob

#endif  // ELASTICJOB_API_DATAFLOW_JOB_H_
