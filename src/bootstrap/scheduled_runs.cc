// Runs at a time (`elasticjob job trigger NAME --at ...`, docs/scheduling.md): the request is
// a node `triggerAt/{epochMs}-{id}` whose value is the run's parameter. Every instance arms a
// timer for it; when it is due, each tries one multi-op: delete the node and create every
// live instance's `trigger/{instanceId}` (the operator trigger ElasticJob has). The delete
// lets exactly one succeed, so the run happens once, whichever instances are alive then,
// and whether or not the process that wrote the request still is.
#include <fmt/format.h>

#include <charconv>

#include "bootstrap/job_runtime.h"
#include "infra/log.h"
#include "listener/listener_manager.h"

namespace elasticjob::bootstrap {

void JobRuntime::ScheduleRunAt(const std::string& name) {
  int64_t ms = 0;
  const size_t dash = name.find('-');
  auto [end, ec] = std::from_chars(name.data(), name.data() + std::min(dash, name.size()), ms);
  if (ec != std::errc() || end != name.data() + std::min(dash, name.size())) {
    Log("WARN", fmt::format("job '{}': triggerAt/{}: not a time, ignored", config_.job_name, name));
    return;
  }
  const Clock::WallTime due{std::chrono::milliseconds(ms)};
  // A weak hold: a run due in a week must not keep a stopped runtime alive until then.
  RunAtTime(std::max(due, clock_.WallNow()), [weak = weak_from_this(), name] {
    if (auto self = weak.lock()) self->FireRunAt(name);
  });
}

void JobRuntime::FireRunAt(const std::string& name) {
  if (IsShutdown()) return;
  const std::string node = fmt::format("{}/{}", listener::kTriggerAtRoot, name);
  auto parameter = storage_.GetJobNodeDataDirectly(node);
  if (!parameter.ok()) return;  // gone: another instance ran it (or an operator removed it)
  auto instances = storage_.GetJobNodeChildrenKeys("instances");
  if (!instances.ok() || instances->empty()) return;
  // The multi-op creates no parents: `trigger` first (persistent, as ElasticJob's is).
  if (Status s = storage_.CreateJobNodeIfNeeded("trigger"); !s.ok()) {
    Log("WARN", fmt::format("job '{}': run at {}: {}", config_.job_name, name, s.ToString()));
    return;
  }
  std::vector<TransactionOp> ops = {TransactionOp::Delete(node)};
  for (const std::string& id : *instances) {
    ops.push_back(TransactionOp::Create("trigger/" + id, *parameter));
  }
  Status s = storage_.ExecuteInTransaction(std::move(ops));
  if (s.ok()) {
    Log("INFO", fmt::format("job '{}': run at {} triggered on {} instance(s)", config_.job_name,
                            name, instances->size()));
    return;
  }
  // Still there (from the server: the cache may lag): the request was not taken, by us or
  // anyone (an operator trigger pending for an instance, a lost connection). Tried again a
  // moment later, so that it is not lost until a restart.
  auto left = storage_.GetJobNodeDataDirectly(node);
  if (!left.ok() && left.status().code() == StatusCode::kNotFound) return;  // taken
  Log("WARN", fmt::format("job '{}': run at {}: {} (tried again in {} ms)", config_.job_name, name,
                          s.ToString(), kRunAtRetry.count()));
  RunAtTime(clock_.WallNow() + kRunAtRetry, [weak = weak_from_this(), name] {
    if (auto self = weak.lock()) self->FireRunAt(name);
  });
}

}  // namespace elasticjob::bootstrap
