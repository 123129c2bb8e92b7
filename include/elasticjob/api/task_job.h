// Task jobs: PowerJob's processor models run by the decentralised runtime
// (docs/task-models.md). The job's leader coordinates each run; every live instance works.
//
//   BroadcastJob   PreProcess once on the leader, Process once on every live instance,
//                  PostProcess on the leader with every instance's result.
//   MapJob         Process runs the root task on the leader; ctx.Map() turns it into any
//                  number of sub-tasks (opaque payloads) that every live instance runs, and
//                  a sub-task may Map again (multi-level).
//   MapReduceJob   a MapJob whose Reduce sees every sub-task's result once, on the leader.
//
// A task job is scheduled by ScheduleJobBootstrap / OneOffJobBootstrap like a SimpleJob
// (cron, one-off, operator trigger); a run is one execution for listeners and error
// handling. Its configuration has one sharding item (shardingTotalCount 1).
//
// Thread safety: Process may be called concurrently (sub-tasks run in parallel on an
// instance); implementations must be safe for that. An exception from Process fails that
// task (a sub-task is retried up to `task.max.attempts`); from PreProcess, PostProcess or
// Reduce it fails the run.
//
// clang-format off
//   class SumJob : public elasticjob::MapReduceJob {
//    public:
//     elasticjob::TaskResult Process(elasticjob::TaskContext& ctx) override {
//       if (ctx.IsRootTask()) {
//         std::vector<elasticjob::Subtask> parts;
//         for (int i = 1; i <= 100; ++i) parts.push_back({std::to_string(i)});
//         if (auto s = ctx.Map(std::move(parts), "PART"); !s.ok()) return {false, s.ToString()};
//         return {true, ""};
//       }
//       return {true, ctx.payload()};  // a leaf: its number
//     }
//     void Reduce(elasticjob::TaskContext&, const elasticjob::SubtaskResults& results) override {
//       long sum = 0;
//       (void)results.ForEach([&](const elasticjob::SubtaskResult& r) { sum += std::stol(r.data); });
//     }
//   };
// clang-format on
#ifndef ELASTICJOB_API_TASK_JOB_H_
#define ELASTICJOB_API_TASK_JOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/workflow_node_run.h"
#include "elasticjob/status.h"

namespace elasticjob {

// One sub-task to create: an opaque payload (at most `task.max.payload.bytes`).
struct Subtask {
  std::string payload;
};

// What a task returns: success, and bytes (a failure's message when !success).
struct TaskResult {
  bool success = true;
  std::string data;
};

// A finished sub-task, as Reduce sees it. A sub-task that failed every attempt has
// success false and its last failure's message in `data`.
struct SubtaskResult {
  uint64_t id = 0;
  std::string name;  // the Map name it was created under
  bool success = false;
  std::string data;
};

// One instance's broadcast result, as PostProcess sees it. An instance that died or could
// not be reached during the run has success false and the reason in `data`.
struct InstanceResult {
  std::string instance_id;
  bool success = false;
  std::string data;
};

// What one task knows about itself. Not thread-safe: one per task call.
class TaskContext {
 public:
  static constexpr std::string_view kRootTaskName = "ROOT_TASK";
  static constexpr std::string_view kBroadcastTaskName = "BROADCAST";

  virtual ~TaskContext() = default;
  virtual const std::string& job_name() const = 0;
  virtual const std::string& job_parameter() const = 0;
  // The run's id: `{job}@{leader instance}@{start ms}`, the same on every instance.
  virtual const std::string& run_id() const = 0;
  // 0 for the root task (and PreProcess/PostProcess/Reduce); a sub-task's id otherwise.
  virtual uint64_t task_id() const = 0;
  // kRootTaskName, kBroadcastTaskName or the Map name the sub-task was created under.
  virtual const std::string& task_name() const = 0;
  virtual const std::string& payload() const = 0;
  // 1 for the first try of a sub-task.
  virtual int attempt() const = 0;
  // This instance's id (`ip@-@pid`).
  virtual const std::string& instance_id() const = 0;
  // The workflow node this run is (elasticjob/api/workflow_node_run.h, docs/workflows.md),
  // in the leader's calls (the root task, PreProcess, PostProcess, Reduce): Reduce or
  // PostProcess sets the node's result through it. Null otherwise, and in sub-tasks.
  virtual WorkflowNodeRun* workflow() const { return nullptr; }
  bool IsRootTask() const { return task_name() == kRootTaskName; }

  // Creates sub-tasks named `name` from this task (root or sub-task of a MapJob). They run
  // after this task returns successfully (a failed task's sub-tasks are dropped).
  // INVALID_ARGUMENT naming the sub-task and the limit when a payload exceeds
  // `task.max.payload.bytes`, or when `name` is empty or kRootTaskName; nothing of the call is
  // kept then. FAILED_PRECONDITION in a broadcast job.
  [[nodiscard]] virtual Status Map(std::vector<Subtask> subtasks, std::string_view name) = 0;
};

// The results of a run's sub-tasks, read from the coordinator's task store in id order.
class SubtaskResults {
 public:
  virtual ~SubtaskResults() = default;
  virtual int64_t size() const = 0;
  virtual int64_t failed() const = 0;
  // Calls `fn` once per sub-task (every level), in id order. A store error is returned.
  [[nodiscard]] virtual Status ForEach(
      const std::function<void(const SubtaskResult&)>& fn) const = 0;
};

// The base of the task models; a job is one of the three below.
class TaskJob {
 public:
  virtual ~TaskJob() = default;
};

class BroadcastJob : public TaskJob {
 public:
  // Once per run on the leader, before any Process. Throwing fails the run.
  virtual void PreProcess(TaskContext& /*ctx*/) {}
  // Once per run on every instance alive when the run started (the leader included).
  virtual TaskResult Process(TaskContext& ctx) = 0;
  // Once per run on the leader, with one result per instance. Throwing fails the run. The
  // default fails the run when an instance failed, naming it.
  virtual void PostProcess(TaskContext& ctx, const std::vector<InstanceResult>& results);
};

class MapJob : public TaskJob {
 public:
  // The root task (ctx.IsRootTask(), on the leader) and every sub-task (on any instance).
  // A MapJob's run fails when the root, or a sub-task after its last attempt, failed.
  virtual TaskResult Process(TaskContext& ctx) = 0;
};

class MapReduceJob : public MapJob {
 public:
  // On the leader once every sub-task has finished, with each one's result exactly once.
  // The run's outcome is Reduce's: throwing fails it.
  virtual void Reduce(TaskContext& ctx, const SubtaskResults& results) = 0;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_API_TASK_JOB_H_
