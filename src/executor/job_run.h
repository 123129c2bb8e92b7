// JobExecutor::Run and JobExecutor::Prepared: the state of one run, private to the executor
// and to the run path's steps (RunPath's Claim and Complete act on it: run_path.h).
//
// Thread safety: each field says how it is shared; a run is handed from step to step.
#ifndef ELASTICJOB_EXECUTOR_JOB_RUN_H_
#define ELASTICJOB_EXECUTOR_JOB_RUN_H_

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/job_executor.h"

namespace elasticjob::executor {

// What a prepared run's item start reads of it comes first, in one cache line (the launch
// board prefetches it): its fire time, its cancellation and its count of items left.
struct alignas(64) JobExecutor::Run {
  std::optional<Clock::WallTime> fire_time;  // a cron run's, until its misfire re-run
  // Requested by Fence and by an operator's stop; the items' contexts carry it (a SCRIPT
  // item's group is killed). A misfire re-run of a stopped run gets a new one (it stands for
  // a later fire). Replaced only between passes, under item_cancels_mu; read there by
  // CancelRun, and without the lock by the pass's own threads.
  std::shared_ptr<Cancellation> cancel = std::make_shared<Cancellation>();
  std::atomic<size_t> remaining{0};
  std::shared_ptr<const JobConfiguration> config;
  std::shared_ptr<const Plan> plan;  // the plan it was started from, if any
  std::vector<int> items;
  bool normal = true;           // the normal lane's run (else a failover run)
  bool failover_items = false;  // the items are failover items
  bool misfire = false;         // this pass is a misfire re-run
  bool holding = false;         // `items` are in running_items_ (ours to release)
  std::shared_ptr<const std::map<int, std::string>> params;
  std::string task_id;
  // While it waits for the sharding: its fire time (ticks), which a later trigger moves.
  std::atomic<Clock::WallTime::rep> sharding_fire{0};
  uint64_t session = 0;  // the registry session its items were claimed in
  // Its claim's (ExecutionService::ClaimAsync): written once, under claim_mu, when the claim
  // answers (JobExecutor::ClaimAnswered), before the run goes on to start its items.
  int64_t fencing_token = 0;
  // An operator's stop stamped with its place in the order of writes (`before`) that came
  // while the claim was out: whether the run is of a fire before the stop or after it is
  // known only from the claim's token, so the stop waits here for it.
  struct StopRequest {
    std::optional<int> item;
    std::string reason;
    int64_t before = 0;
  };
  Mutex claim_mu;
  bool claim_answered ELASTICJOB_GUARDED_BY(claim_mu) = false;
  std::vector<StopRequest> stops_waiting ELASTICJOB_GUARDED_BY(claim_mu);
  // That session ended before the run did (Complete saw it, or Fence): others may own the
  // items now. atomic: Fence sets it on the job's strand while the run goes on elsewhere.
  std::atomic<bool> session_lost{false};
  // A run of several items gives each its own cancellation (an operator's stop of one item
  // ends that item only), requested with `cancel` by CancelRun; a one-item run's item
  // carries `cancel` itself.
  Mutex item_cancels_mu;
  std::map<int, std::shared_ptr<Cancellation>> item_cancels ELASTICJOB_GUARDED_BY(item_cancels_mu);
  // An operator's one-time job parameter (`trigger/{id}`'s value), in place of the config's.
  std::optional<std::string> parameter;
  Done done;
  // Every item of this pass has returned (its end is being written): nothing left to cancel.
  std::atomic<bool> items_done{false};
  // Tracing: what the pass's events share, and its failed items' errors (TASK_ERROR).
  std::shared_ptr<const tracing::RunInfo> trace;
  // The pass's last status event, allocated ahead (a prepared trigger's), taken by its last
  // item.
  std::unique_ptr<tracing::Event> last_status;
  Mutex errors_mu;
  std::vector<std::pair<int, std::string>> errors ELASTICJOB_GUARDED_BY(errors_mu);
};

// A cache line of its own for what admission reads (the first of a job's item starts at the
// fire time), then what the starts read.
struct alignas(64) JobExecutor::Prepared {
  enum State { kPending, kAdmitted, kLetGo };
  JobExecutor* executor = nullptr;
  std::atomic<int> state{kPending};
  // infra::ChangeEpoch() before the preparation read the flag and the count (0: the flag
  // was down then, or there is no flag: no shortcut).
  uint64_t epoch = 0;
  uint64_t changes = 0;  // the plan's change count, copied: one object to read at the fire
  const std::atomic<bool>* admissible = nullptr;
  const std::atomic<uint64_t>* change_counter = nullptr;  // null: registry_changes_
  // Its running marks, claimed at the preparation: admission requires them confirmed.
  enum Claim { kClaiming, kClaimedAll, kClaimedPart };
  std::atomic<int> claim{kClaiming};
  // The claim's end and a let-go (admission or Abandon) both count down; the second to
  // come does what the let-go leaves to do (JobExecutor::LetGo).
  std::atomic<int> meet{2};
  // Why it was let go (JobExecutor::LetGoReason), written by whoever let it go, before it
  // counts `meet` down.
  int reason = 0;
  // The run's configuration times its items out or retries them (RunControlled), read
  // here once at the preparation: the start reads no configuration.
  bool controlled = false;
  // The second and third lines: what an item's start reads.
  std::shared_ptr<Run> run;
  // The job's state its starts read (PinningJob::Pin at the preparation; null: none), held
  // until the run's items have ended.
  std::shared_ptr<const void> pin;
  // Per item, worked out ahead: its context and its report (strings and all), so that the
  // start at the fire time reads this object and the job's, and allocates nothing.
  std::vector<ShardingContext> contexts;
  std::vector<ItemRun> reports;
  std::vector<std::chrono::nanoseconds> took;  // each item's user code, till its end's turn
  // Tracing: the items' start and end events and the pass's first two status events, built
  // ahead (the last one is the run's last_status).
  std::vector<std::unique_ptr<tracing::Event>> starts;
  std::vector<std::unique_ptr<tracing::Event>> ends;
  std::unique_ptr<tracing::Event> staging;
  std::unique_ptr<tracing::Event> running;
  // Read after the starts.
  std::weak_ptr<Prepared> self;
  Result<std::vector<int>> claimed{std::vector<int>{}};  // written before `claim` is
  std::function<void()> skipped;
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_JOB_RUN_H_
