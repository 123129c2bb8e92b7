// What a running job reports: each item run (ItemRunReport) and each trigger handled
// (TriggerReport), through BootstrapOptions::on_item_run and on_trigger.
#ifndef ELASTICJOB_RUN_REPORTS_H_
#define ELASTICJOB_RUN_REPORTS_H_

#include <chrono>
#include <optional>
#include <string>

#include "elasticjob/clock.h"

namespace elasticjob {

// One run of one item, reported after it ends.
struct ItemRunReport {
  std::string job_name;
  int item = 0;
  std::string instance_id;
  bool success = false;
  std::string error;
  std::chrono::milliseconds duration{0};
  bool misfire_rerun = false;
  bool failover = false;      // taken over from a crashed instance
  Clock::WallTime started{};  // when the user code began
  // The cron fire time this run answers, when it started as that fire's run (not for
  // operator triggers, failover runs or misfire re-runs). `started - *fire_time` is the
  // trigger's lateness as users see it.
  std::optional<Clock::WallTime> fire_time;
};

// One trigger of one job, reported after it is handled.
struct TriggerReport {
  enum class Source {
    kCron,      // the job's cron fired
    kOperator,  // `trigger/{instanceId}` (an operator, or OneOffJobBootstrap::Execute)
    kFailover,  // this instance claimed a crashed instance's items
  };
  enum class Outcome {
    kRan,      // this instance ran its items (and any misfire re-runs)
    kNoItems,  // nothing to run here (no items, all disabled, server disabled)
    kMisfire,  // items still running: marked misfire, skipped
    kFailed,   // a coordination error (logged); the next trigger tries again
  };
  std::string job_name;
  Clock::WallTime scheduled;  // the cron fire time
  Clock::WallTime started;    // when the trigger began to be handled
  Outcome outcome = Outcome::kRan;
  std::string error;  // for kFailed
  Source source = Source::kCron;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_RUN_REPORTS_H_
