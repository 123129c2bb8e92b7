// Job listeners: code that runs before and after each execution of a job, as ElasticJob's
// ElasticJobListener and AbstractDistributeOnceElasticJobListener.
//
// An ElasticJobListener runs on every instance, around that instance's items of each
// execution (also when it has no items). A DistributeOnceElasticJobListener runs once per
// execution across the whole cluster: every instance registers its items under
// `guarantee/started` (then `guarantee/completed`); the instance that completes the set
// runs the hook under a latch and clears the nodes; the others wait, without holding a
// thread, until the nodes are cleared or the timeout passes. A timeout clears the nodes and
// is logged; the execution goes on.
//
// Listeners come from BootstrapOptions::listeners (objects) and from the configuration's
// jobListenerTypes (names; built in: LOG and DISTRIBUTE_ONCE_LOG, see docs/runtime.md; more
// through BootstrapOptions::listener_types). They run in ascending order(). A listener that
// throws is logged and the execution goes on, as ElasticJob's error handler does.
//
// clang-format off
//   class AuditListener : public elasticjob::ElasticJobListener {
//    public:
//     void BeforeJobExecuted(const elasticjob::ShardingContexts& c) override { Audit("begin", c); }
//     void AfterJobExecuted(const elasticjob::ShardingContexts& c) override { Audit("end", c); }
//   };
//   options.listeners.push_back(std::make_shared<AuditListener>());
// clang-format on
//
// Thread safety: the hooks of one job are never called concurrently for one execution, but
// listeners shared by several jobs are called from several threads.
#ifndef ELASTICJOB_API_JOB_LISTENER_H_
#define ELASTICJOB_API_JOB_LISTENER_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "elasticjob/config/job_configuration.h"

namespace elasticjob {

// What one instance runs in one execution (ElasticJob's ShardingContexts).
struct ShardingContexts {
  std::string task_id;
  std::string job_name;
  int sharding_total_count = 0;
  std::string job_parameter;
  // This instance's items in this execution, each with its parameter ("" when none).
  std::map<int, std::string> sharding_item_parameters;
};

class ElasticJobListener {
 public:
  virtual ~ElasticJobListener() = default;
  virtual void BeforeJobExecuted(const ShardingContexts& contexts) = 0;
  virtual void AfterJobExecuted(const ShardingContexts& contexts) = 0;
  // Lower runs first.
  virtual int order() const { return 0; }
};

class DistributeOnceElasticJobListener {
 public:
  // How long an instance waits for the rest of the cluster to start, and to complete.
  DistributeOnceElasticJobListener(std::chrono::milliseconds started_timeout,
                                   std::chrono::milliseconds completed_timeout)
      : started_timeout_(started_timeout), completed_timeout_(completed_timeout) {}
  virtual ~DistributeOnceElasticJobListener() = default;

  // Once per execution, on the instance whose items started last; `contexts` are its own.
  virtual void DoBeforeJobExecutedAtLastStarted(const ShardingContexts& contexts) = 0;
  // Once per execution, on the instance whose items completed last.
  virtual void DoAfterJobExecutedAtLastCompleted(const ShardingContexts& contexts) = 0;
  virtual int order() const { return 0; }

  std::chrono::milliseconds started_timeout() const { return started_timeout_; }
  std::chrono::milliseconds completed_timeout() const { return completed_timeout_; }

 private:
  const std::chrono::milliseconds started_timeout_;
  const std::chrono::milliseconds completed_timeout_;
};

using JobListener = std::variant<std::shared_ptr<ElasticJobListener>,
                                 std::shared_ptr<DistributeOnceElasticJobListener>>;

// Makes the listener a jobListenerTypes name stands for; it may read the job's props, and
// fails (naming the prop and its value) when they are wrong.
using JobListenerFactory = std::function<Result<JobListener>(const JobConfiguration& config)>;

}  // namespace elasticjob

#endif  // ELASTICJOB_API_JOB_LISTENER_H_
