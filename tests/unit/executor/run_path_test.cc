#include "executor/run_path.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "config/config_service.h"
#include "elasticjob/executor.h"
#include "elasticjob/simulated_clock.h"
#include "election/leader_service.h"
#include "execution/execution_service.h"
#include "failover/failover_service.h"
#include "instance/instance_service.h"
#include "instance/server_service.h"
#include "reg/memory/memory_registry.h"
#include "sharding/sharding_node.h"
#include "sharding/sharding_service.h"
#include "storage/change_notifier.h"
#include "storage/job_node_storage.h"
#include "trigger/launch_board.h"
#include "trigger/timer_scheduler.h"

namespace elasticjob::executor {
namespace {

using namespace std::chrono_literals;
using Source = RunPath::Source;
using Outcome = RunPath::Outcome;

// An owner that records the calls the steps make, in order.
class FakeOwner final : public RunPath::Owner, public std::enable_shared_from_this<FakeOwner> {
 public:
  Admission admission = Admission::kRun;

  std::shared_ptr<Owner> Hold() override { return shared_from_this(); }
  std::function<void()> LimitedStart(std::function<void()> run, std::shared_ptr<const void>,
                                     const void** touch) override {
    *touch = nullptr;
    return run;
  }
  std::array<const void*, kStartTouches> StartTouches() override { return {}; }
  Admission AdmitFire() override { return admission; }
  void FireSkipped() override { Note("skipped"); }
  void ClaimedAhead(Clock::WallTime, std::chrono::nanoseconds took) override {
    std::lock_guard<std::mutex> l(mu_);
    claimed_ahead_.push_back(took);
    cv_.notify_all();
  }
  void LookForFailover() override { Note("failover"); }
  void RunEnded(Source, const Result<Outcome>&) override { Note("ended"); }
  void Reported(const TriggerReport& report) override {
    std::lock_guard<std::mutex> l(mu_);
    reports_.push_back(report);
    calls_.push_back("reported");
  }
  void Released() override {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back("released");
    ++released_;
    cv_.notify_all();
  }
  void Log(std::string_view level, std::string_view message) const override {
    if (level != "ERROR") return;
    std::lock_guard<std::mutex> l(mu_);
    errors_.emplace_back(message);
  }

  // Waits until `n` runs released their count (false after 20 s).
  bool WaitReleased(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return released_ >= n; });
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  std::vector<TriggerReport> reports() {
    std::lock_guard<std::mutex> l(mu_);
    return reports_;
  }
  // The ERROR lines logged (a step out of order, a run reported twice).
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> l(mu_);
    return errors_;
  }
  // What ClaimedAhead was told each time (how long after its preparation was due), once
  // it has been told `n` times (empty after 20 s).
  std::vector<std::chrono::nanoseconds> claimed_ahead(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    if (!cv_.wait_for(l, 20s, [&] { return claimed_ahead_.size() >= n; })) return {};
    return claimed_ahead_;
  }

 private:
  void Note(std::string call) {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back(std::move(call));
  }
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> calls_;
  std::vector<TriggerReport> reports_;
  mutable std::vector<std::string> errors_;
  std::vector<std::chrono::nanoseconds> claimed_ahead_;
  int released_ = 0;
};

// Counts its runs; while held, each run waits until let go.
class CountingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {
    std::unique_lock<std::mutex> l(mu_);
    ++runs;
    cv_.notify_all();
    cv_.wait(l, [&] { return !held_; });
  }
  void Hold() {
    std::lock_guard<std::mutex> l(mu_);
    held_ = true;
  }
  void LetGo() {
    std::lock_guard<std::mutex> l(mu_);
    held_ = false;
    cv_.notify_all();
  }
  // Waits until `n` runs have started (false after 20 s).
  bool WaitRuns(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return runs >= n; });
  }
  std::atomic<int> runs{0};

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
};

// The executor's control executor: hands every task to `to`, but keeps them while held (a
// registry answer held back, to change the registry before it is delivered).
class HoldingExecutor final : public Executor {
 public:
  explicit HoldingExecutor(Executor& to) : to_(to) {}
  void Post(std::function<void()> task) override { Hand(std::move(task), false); }
  void PostUrgent(std::function<void()> task) override { Hand(std::move(task), true); }
  void Hold() {
    std::lock_guard<std::mutex> l(mu_);
    held_ = true;
  }
  // Hands on what was kept, in order, and no longer holds; returns how many tasks that was.
  size_t Release() {
    std::vector<std::pair<std::function<void()>, bool>> kept;
    {
      std::lock_guard<std::mutex> l(mu_);
      held_ = false;
      kept.swap(kept_);
    }
    for (auto& [task, urgent] : kept) Forward(std::move(task), urgent);
    return kept.size();
  }

 private:
  void Hand(std::function<void()> task, bool urgent) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (held_) {
        kept_.emplace_back(std::move(task), urgent);
        return;
      }
    }
    Forward(std::move(task), urgent);
  }
  void Forward(std::function<void()> task, bool urgent) {
    if (urgent) {
      to_.PostUrgent(std::move(task));
    } else {
      to_.Post(std::move(task));
    }
  }
  Executor& to_;
  std::mutex mu_;
  bool held_ = false;
  std::vector<std::pair<std::function<void()>, bool>> kept_;
};

// One instance of a two-item job on the memory registry, wired as the runtime wires it, and a
// run path over its executor.
class RunPathTest : public ::testing::Test {
 protected:
  RunPathTest()
      : clock_(Clock::WallTime(std::chrono::seconds(1'700'000'000))),
        memory_(reg::NewMemoryRegistry(std::make_shared<reg::MemoryServer>(), "ns")),
        storage_(*memory_, "job"),
        config_(storage_, clock_),
        servers_(storage_, "10.0.0.1"),
        instances_(storage_, servers_, instance::JobInstance::For("10.0.0.1", 100)),
        leader_(storage_, instances_.self().instance_id),
        sharding_(storage_, config_, leader_, instances_, servers_, strategies_, notifier_),
        execution_(storage_, instances_.self().instance_id),
        failover_(storage_, instances_.self().instance_id),
        executor_(
            config_, sharding_, execution_, failover_, instances_.self().instance_id, job_, pool_,
            control_, clock_, [](const ItemRun&) {}, nullptr,
            // The registry never changes here: a run's plan holds for the next one.
            [] { return std::optional<uint64_t>(1); }),
        path_(executor_, *owner_, clock_, "job", instances_.self().instance_id) {
    EXPECT_TRUE(memory_->Init().ok());
    auto c = *JobConfiguration::Builder("job", 2).Cron("0/5 * * * * ?").Overwrite(true).Build();
    EXPECT_TRUE(config_.SetUp("SIMPLE", c).ok());
    EXPECT_TRUE(servers_.PersistOnline(true).ok());
    EXPECT_TRUE(instances_.PersistOnline().ok());
    EXPECT_TRUE(sharding_.SetReshardingFlag().ok());
  }
  ~RunPathTest() override {
    executor_.Stop();
    notifier_.Cancel();
    // The work still queued (a run's last continuations after its done) ends before the
    // executor and its services go.
    for (ThreadPool* p : {&timer_pool_, &pool_}) {
      p->Stop();
      p->Join();
    }
  }

  // With failover on, the items' running marks are persistent: they outlive a session.
  void FailoverOn() {
    auto c = *JobConfiguration::Builder("job", 2)
                  .Cron("0/5 * * * * ?")
                  .Failover(true)
                  .Overwrite(true)
                  .Build();
    ASSERT_TRUE(config_.SetUp("SIMPLE", c).ok());
  }
  // A first run (the registry read: the plan the next run takes), then the next fire time,
  // 200 ms on (set in `*fire`), prepared and launched on `board`.
  void PrepareAndLaunchAfterAFirstRun(trigger::LaunchBoard& board, Clock::WallTime* fire) {
    path_.Fire(clock_.WallNow());
    ASSERT_TRUE(owner_->WaitReleased(1));
    *fire = clock_.WallNow() + 200ms;
    auto prepared = path_.Prepare(*fire, &admissible_, nullptr);
    ASSERT_NE(prepared, nullptr);
    path_.Launch(prepared, *fire, board);
  }
  // The registry's place in its order of writes now: the stamp of a write, as an operator's
  // stop takes it (JobOperateAPI::Stop).
  int64_t StampNow() {
    std::promise<Result<int64_t>> stamped;
    memory_->ExecuteInTransactionStampedAsync(
        {TransactionOp::Create("/stamp-" + std::to_string(++stamps_), "")}, pool_,
        [&](Result<int64_t> r) { stamped.set_value(std::move(r)); });
    Result<int64_t> stamp = stamped.get_future().get();
    EXPECT_TRUE(stamp.ok()) << stamp.status();
    return stamp.value_or(0);
  }
  // Prepares and launches the next fire time after a first run, with its claim written but
  // its answer held back; an operator's stop stamped before the claim (`stop_first`) or after
  // it is then seen; then the answer comes and the fire time. Returns the report of the run.
  TriggerReport StopSeenWhileAPreparedRunsClaimIsOut(bool stop_first) {
    path_.Fire(clock_.WallNow());
    EXPECT_TRUE(owner_->WaitReleased(1));
    const int64_t before_claim = StampNow();
    const auto fire = clock_.WallNow() + 200ms;
    control_.Hold();
    auto prepared = path_.Prepare(fire, &admissible_, nullptr);
    EXPECT_NE(prepared, nullptr);
    EXPECT_TRUE(Exists(sharding::RunningNode(0)));  // the claim is written, its answer held
    const int64_t stamp = stop_first ? before_claim : StampNow();
    EXPECT_TRUE(executor_.CancelRunning(std::nullopt, "stopped by an operator", stamp).empty());
    control_.Release();
    trigger::LaunchBoard board(timer_, pool_, /*drains=*/1, /*most=*/2, pool_);
    path_.Launch(prepared, fire, board);
    clock_.Advance(200ms);
    EXPECT_TRUE(owner_->WaitReleased(2));
    auto reports = owner_->reports();
    EXPECT_EQ(reports.size(), 2u);
    return reports.empty() ? TriggerReport{} : reports.back();
  }
  bool Exists(const std::string& node) {
    auto exists = storage_.IsJobNodeExisted(node);
    EXPECT_TRUE(exists.ok());
    return exists.ok() && *exists;
  }

  SimulatedClock clock_;
  ThreadPool pool_{2};
  HoldingExecutor control_{pool_};
  ThreadPool timer_pool_{1};
  trigger::TimerScheduler timer_{clock_, timer_pool_};
  std::unique_ptr<reg::ComposedRegistry> memory_;
  storage::JobNodeStorage storage_;
  config::ConfigService config_;
  server::ServerService servers_;
  instance::InstanceService instances_;
  election::LeaderService leader_;
  JobShardingStrategyRegistry strategies_ = JobShardingStrategyRegistry::WithBuiltins(clock_);
  storage::ChangeNotifier notifier_;
  sharding::ShardingService sharding_;
  execution::ExecutionService execution_;
  failover::FailoverService failover_;
  std::shared_ptr<CountingJob> job_ = std::make_shared<CountingJob>();
  std::shared_ptr<FakeOwner> owner_ = std::make_shared<FakeOwner>();
  std::atomic<bool> admissible_{true};  // a prepared run's admission flag
  int stamps_ = 0;
  JobExecutor executor_;
  RunPath path_;
};

TEST(RunPathStepTest, AReportFollowsOnlyAStartedOrPreparedRunAndComesOnce) {
  RunPath::Ticket ticket{Source::kCron, {}, {}, RunPath::Step::kPrepared};
  EXPECT_TRUE(RunPath::Advance(ticket, RunPath::Step::kReported));
  EXPECT_EQ(ticket.step, RunPath::Step::kReported);
  EXPECT_FALSE(RunPath::Advance(ticket, RunPath::Step::kReported));
  EXPECT_FALSE(RunPath::CanAdvance(RunPath::Step::kStarted, RunPath::Step::kPrepared));
  EXPECT_FALSE(RunPath::CanAdvance(RunPath::Step::kPrepared, RunPath::Step::kStarted));
  EXPECT_TRUE(RunPath::CanAdvance(RunPath::Step::kStarted, RunPath::Step::kReported));
}

TEST(RunPathStepTest, ARunIsClaimedThenCompletedThenReportedAndAClaimMayComeAgainBeforeItsEnd) {
  RunPath::Ticket ticket{Source::kCron, {}, {}, RunPath::Step::kStarted};
  EXPECT_TRUE(RunPath::Advance(ticket, RunPath::Step::kClaimed));
  EXPECT_TRUE(RunPath::Advance(ticket, RunPath::Step::kClaimed));  // a misfire re-run's claim
  EXPECT_TRUE(RunPath::Advance(ticket, RunPath::Step::kCompleted));
  EXPECT_TRUE(RunPath::Advance(ticket, RunPath::Step::kReported));
  EXPECT_TRUE(RunPath::CanAdvance(RunPath::Step::kPrepared, RunPath::Step::kClaimed));
  // A claim that failed or claimed nothing is reported from where it was.
  EXPECT_TRUE(RunPath::CanAdvance(RunPath::Step::kClaimed, RunPath::Step::kReported));
}

TEST(RunPathStepTest, AStepOutOfOrderIsCaughtAndLeavesTheTicketWhereItWas) {
  // A completion without a claim.
  RunPath::Ticket started{Source::kCron, {}, {}, RunPath::Step::kStarted};
  EXPECT_FALSE(RunPath::Advance(started, RunPath::Step::kCompleted));
  EXPECT_EQ(started.step, RunPath::Step::kStarted);
  EXPECT_FALSE(RunPath::CanAdvance(RunPath::Step::kPrepared, RunPath::Step::kCompleted));
  // A claim after the run's completion, a second completion.
  RunPath::Ticket completed{Source::kCron, {}, {}, RunPath::Step::kCompleted};
  EXPECT_FALSE(RunPath::Advance(completed, RunPath::Step::kClaimed));
  EXPECT_FALSE(RunPath::Advance(completed, RunPath::Step::kCompleted));
  EXPECT_EQ(completed.step, RunPath::Step::kCompleted);
  // Nothing after the report; no step goes back to where a run begins.
  for (auto to : {RunPath::Step::kPrepared, RunPath::Step::kStarted, RunPath::Step::kClaimed,
                  RunPath::Step::kCompleted, RunPath::Step::kReported}) {
    EXPECT_FALSE(RunPath::CanAdvance(RunPath::Step::kReported, to));
    EXPECT_FALSE(RunPath::CanAdvance(RunPath::Step::kClaimed, RunPath::Step::kPrepared));
    EXPECT_FALSE(RunPath::CanAdvance(RunPath::Step::kClaimed, RunPath::Step::kStarted));
  }
}

TEST(RunPathStepTest, EachOutcomeReportsAsTheTriggerReportNamesIt) {
  const RunPath::Ticket ticket{Source::kOperator, Clock::WallTime(1s), Clock::WallTime(2s),
                               RunPath::Step::kStarted};
  auto ran = RunPath::ReportOf("job", ticket, Outcome::kRan);
  EXPECT_EQ(ran.outcome, TriggerReport::Outcome::kRan);
  EXPECT_EQ(ran.source, Source::kOperator);
  EXPECT_EQ(ran.scheduled, Clock::WallTime(1s));
  EXPECT_EQ(ran.started, Clock::WallTime(2s));
  EXPECT_EQ(RunPath::ReportOf("job", ticket, Outcome::kNoItems).outcome,
            TriggerReport::Outcome::kNoItems);
  EXPECT_EQ(RunPath::ReportOf("job", ticket, Outcome::kQueued).outcome,
            TriggerReport::Outcome::kNoItems);
  EXPECT_EQ(RunPath::ReportOf("job", ticket, Outcome::kMisfire).outcome,
            TriggerReport::Outcome::kMisfire);
  auto failed = RunPath::ReportOf("job", ticket, Result<Outcome>(Internal("gone")));
  EXPECT_EQ(failed.outcome, TriggerReport::Outcome::kFailed);
  EXPECT_NE(failed.error.find("gone"), std::string::npos);
}

TEST_F(RunPathTest, AFireThatRunsItsItemsReportsAfterLookingForFailoverThenReleases) {
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(1));
  EXPECT_EQ(job_->runs.load(), 2);
  EXPECT_EQ(owner_->calls(),
            (std::vector<std::string>{"failover", "ended", "reported", "released"}));
  ASSERT_EQ(owner_->reports().size(), 1u);
  EXPECT_EQ(owner_->reports()[0].outcome, TriggerReport::Outcome::kRan);
  EXPECT_EQ(owner_->reports()[0].source, Source::kCron);
  // Claimed, completed, reported: each step in its order.
  EXPECT_TRUE(owner_->errors().empty());
  EXPECT_FALSE(Exists(sharding::RunningNode(0)));
}

TEST_F(RunPathTest, AClaimAnsweredInALaterSessionStartsNoItemReportsTheRunFailedAndLeavesNoMarks) {
  FailoverOn();
  path_.Fire(clock_.WallNow());  // the run plan the next run takes
  ASSERT_TRUE(owner_->WaitReleased(1));
  ASSERT_EQ(job_->runs.load(), 2);
  control_.Hold();
  path_.Fire(clock_.WallNow());
  // The claim is written (failover on: persistent marks), its answer held back.
  EXPECT_TRUE(Exists(sharding::RunningNode(0)));
  EXPECT_TRUE(Exists(sharding::RunningNode(1)));
  memory_->ExpireSession();  // the answer now comes in a later session than the claim's
  ASSERT_GE(control_.Release(), 1u);
  ASSERT_TRUE(owner_->WaitReleased(2));
  EXPECT_EQ(job_->runs.load(), 2);  // the first run's only
  ASSERT_EQ(owner_->reports().size(), 2u);
  EXPECT_EQ(owner_->reports()[1].outcome, TriggerReport::Outcome::kFailed);
  EXPECT_NE(owner_->reports()[1].error.find("session was lost"), std::string::npos)
      << owner_->reports()[1].error;
  EXPECT_FALSE(Exists(sharding::RunningNode(0)));
  EXPECT_FALSE(Exists(sharding::RunningNode(1)));
  EXPECT_FALSE(executor_.running());
  EXPECT_TRUE(owner_->errors().empty());
}

TEST_F(RunPathTest, APreparedRunWhoseClaimIsVoidStartsNothingAtItsFireTimeAndLeavesNoMarks) {
  FailoverOn();
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(1));
  std::atomic<bool> admissible{true};
  const auto fire = clock_.WallNow() + 200ms;
  control_.Hold();
  auto prepared = path_.Prepare(fire, &admissible, nullptr);
  ASSERT_NE(prepared, nullptr);
  EXPECT_TRUE(Exists(sharding::RunningNode(0)));
  memory_->ExpireSession();
  ASSERT_GE(control_.Release(), 1u);  // the claim's answer: void
  trigger::LaunchBoard board(timer_, pool_, /*drains=*/1, /*most=*/2, pool_);
  path_.Launch(prepared, fire, board);
  clock_.Advance(200ms);
  ASSERT_TRUE(owner_->WaitReleased(2));
  EXPECT_EQ(job_->runs.load(), 2);  // the first run's only
  ASSERT_EQ(owner_->reports().size(), 2u);
  EXPECT_EQ(owner_->reports()[1].outcome, TriggerReport::Outcome::kFailed);
  EXPECT_EQ(owner_->reports()[1].scheduled, fire);
  EXPECT_FALSE(Exists(sharding::RunningNode(0)));
  EXPECT_FALSE(Exists(sharding::RunningNode(1)));
  EXPECT_FALSE(executor_.running());
  EXPECT_TRUE(owner_->errors().empty());
}

TEST_F(RunPathTest, APreparedRunsClaimAnswerTellsTheOwnerHowLongAfterItsPreparationWasDue) {
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(1));
  std::atomic<bool> admissible{true};
  const auto due = clock_.WallNow();
  const auto fire = due + 400ms;
  control_.Hold();
  auto prepared = path_.Prepare(fire, &admissible, nullptr, due);
  ASSERT_NE(prepared, nullptr);
  memory_->WaitIdleForTesting();  // the claim's answer is held
  clock_.Advance(150ms);
  ASSERT_GE(control_.Release(), 1u);  // the answer, 150 ms after the preparation was due
  EXPECT_EQ(owner_->claimed_ahead(1), std::vector<std::chrono::nanoseconds>{150ms});
  trigger::LaunchBoard board(timer_, pool_, /*drains=*/1, /*most=*/2, pool_);
  path_.Launch(prepared, fire, board);
  clock_.Advance(250ms);
  ASSERT_TRUE(owner_->WaitReleased(2));
  EXPECT_EQ(job_->runs.load(), 4);
  // Told once: runs that were not prepared tell it nothing.
  EXPECT_EQ(owner_->claimed_ahead(1).size(), 1u);
  EXPECT_TRUE(owner_->errors().empty());
}

TEST_F(RunPathTest, ARunCompletingAfterStopReRunsNothingForItsMisfireAndIsReportedOnce) {
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(1));
  job_->Hold();
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(job_->WaitRuns(4));  // both items of the second run are going
  // A fire while they run: a misfire, marked in the registry and reported at once.
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(2));
  ASSERT_EQ(owner_->reports().size(), 2u);
  EXPECT_EQ(owner_->reports()[1].outcome, TriggerReport::Outcome::kMisfire);
  executor_.Stop();  // the owner stops the job: no more runs
  job_->LetGo();
  ASSERT_TRUE(owner_->WaitReleased(3));
  // Completed, but not run again for the misfire: stopped.
  EXPECT_EQ(job_->runs.load(), 4);
  ASSERT_EQ(owner_->reports().size(), 3u);
  EXPECT_EQ(owner_->reports()[2].outcome, TriggerReport::Outcome::kRan);
  EXPECT_FALSE(executor_.running());
  EXPECT_FALSE(Exists(sharding::MisfireNode(0)));  // its marks cleared
  EXPECT_FALSE(Exists(sharding::RunningNode(0)));
  EXPECT_TRUE(owner_->errors().empty());
}

TEST_F(RunPathTest, AFireWhilePausedIsSkippedAndReleasedWithoutAReport) {
  owner_->admission = RunPath::Owner::Admission::kPaused;
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(1));
  EXPECT_EQ(job_->runs.load(), 0);
  EXPECT_EQ(owner_->calls(), (std::vector<std::string>{"skipped", "released"}));
  EXPECT_FALSE(executor_.running());
}

TEST_F(RunPathTest, AFireAfterStopStartsNothingAndReportsNothing) {
  owner_->admission = RunPath::Owner::Admission::kStopped;
  path_.Fire(clock_.WallNow());
  ASSERT_TRUE(owner_->WaitReleased(1));
  EXPECT_EQ(job_->runs.load(), 0);
  EXPECT_EQ(owner_->calls(), (std::vector<std::string>{"released"}));
}

TEST_F(RunPathTest, AFailoverRunThatRanDoesNotLookForMoreFailover) {
  path_.Failover();
  ASSERT_TRUE(owner_->WaitReleased(1));
  ASSERT_EQ(owner_->reports().size(), 1u);
  EXPECT_EQ(owner_->reports()[0].source, Source::kFailover);
  for (const auto& call : owner_->calls()) EXPECT_NE(call, "failover");
}

TEST_F(RunPathTest, AWorkflowNodeIsToldWhetherItRanBeforeTheRunIsReported) {
  std::vector<std::string> told;
  path_.WorkflowNode(
      "p", [&](bool ran, std::string error) { told.push_back(ran ? "ran" : "not run: " + error); });
  ASSERT_TRUE(owner_->WaitReleased(1));
  EXPECT_EQ(told, (std::vector<std::string>{"ran"}));
  EXPECT_EQ(job_->runs.load(), 2);
  EXPECT_EQ(owner_->reports()[0].source, Source::kOperator);
}

TEST_F(RunPathTest, APreparedRunLaunchedStartsAtItsFireTimeAndReportsItAsStarted) {
  path_.Fire(clock_.WallNow());  // reads the registry: the plan the next run takes
  ASSERT_TRUE(owner_->WaitReleased(1));
  std::atomic<bool> admissible{true};
  const auto fire = clock_.WallNow() + 200ms;
  auto prepared = path_.Prepare(fire, &admissible, nullptr);
  ASSERT_NE(prepared, nullptr);
  EXPECT_TRUE(executor_.running());  // the lane is taken at the preparation
  trigger::LaunchBoard board(timer_, pool_, /*drains=*/1, /*most=*/2, pool_);
  path_.Launch(prepared, fire, board);
  EXPECT_EQ(job_->runs.load(), 2);
  clock_.Advance(200ms);
  ASSERT_TRUE(owner_->WaitReleased(2));
  EXPECT_EQ(job_->runs.load(), 4);
  ASSERT_EQ(owner_->reports().size(), 2u);
  EXPECT_EQ(owner_->reports()[1].outcome, TriggerReport::Outcome::kRan);
  EXPECT_EQ(owner_->reports()[1].scheduled, fire);
  EXPECT_EQ(owner_->reports()[1].started, fire);
  EXPECT_TRUE(owner_->errors().empty());
}

TEST_F(RunPathTest, APreparedRunOverdueAtItsFireStartsNothingAndIsReleasedWithoutAReport) {
  trigger::LaunchBoard board(timer_, pool_, /*drains=*/1, /*most=*/2, pool_);
  Clock::WallTime fire;
  ASSERT_NO_FATAL_FAILURE(PrepareAndLaunchAfterAFirstRun(board, &fire));
  clock_.Advance(200ms + 2s);  // picked up two seconds after its fire time: overdue
  ASSERT_TRUE(owner_->WaitReleased(2));
  EXPECT_EQ(job_->runs.load(), 2);  // the first run's only
  EXPECT_EQ(owner_->reports().size(), 1u);
  EXPECT_EQ(owner_->calls().back(), "released");
  EXPECT_FALSE(executor_.running());
}

TEST_F(RunPathTest, AFireWhileAnOverduePreparedRunLetsGoIsReRunByItAsAMisfire) {
  trigger::LaunchBoard board(timer_, pool_, /*drains=*/1, /*most=*/2, pool_);
  Clock::WallTime fire;
  ASSERT_NO_FATAL_FAILURE(PrepareAndLaunchAfterAFirstRun(board, &fire));
  // Its let-go (the removal of its marks, then the release) waits on the control executor,
  // in whichever order its claim's answer and its admission come: the lane stays held.
  control_.Hold();
  clock_.Advance(200ms + 2s);  // picked up two seconds after its fire time: overdue
  // A fire now, not overdue, finds the lane held: a misfire, reported at once.
  const auto later = clock_.WallNow();
  path_.Fire(later);
  ASSERT_TRUE(owner_->WaitReleased(2));
  ASSERT_EQ(owner_->reports().size(), 2u);
  EXPECT_EQ(owner_->reports()[1].scheduled, later);
  EXPECT_EQ(owner_->reports()[1].outcome, TriggerReport::Outcome::kMisfire);
  control_.Release();
  // The overdue run starts nothing of its own, but re-runs for that fire once its marks are
  // gone, and its report stands for the re-run (as a run's report stands for its re-runs).
  ASSERT_TRUE(owner_->WaitReleased(3));
  EXPECT_EQ(job_->runs.load(), 4) << "the misfire of the fire while it let go was lost";
  ASSERT_EQ(owner_->reports().size(), 3u);
  EXPECT_EQ(owner_->reports()[2].scheduled, fire);
  EXPECT_EQ(owner_->reports()[2].outcome, TriggerReport::Outcome::kRan);
  EXPECT_FALSE(executor_.running());
  EXPECT_FALSE(Exists(sharding::MisfireNode(0)));  // its misfire marks cleared after the re-run
  EXPECT_FALSE(Exists(sharding::MisfireNode(1)));
  EXPECT_FALSE(Exists(sharding::RunningNode(0)));
  EXPECT_FALSE(Exists(sharding::RunningNode(1)));
  EXPECT_TRUE(owner_->errors().empty());
}

// An operator's stop is stamped with its place in the order of writes; an instance that sees
// it late cancels only the runs claimed before it. A prepared run whose claim is out when the
// stop is seen is judged by its claim's token once it answers: a later fire's run, claimed
// after the stop, runs.
TEST_F(RunPathTest, AStopSeenWhileALaterFiresClaimIsOutLeavesThatRun) {
  TriggerReport report = StopSeenWhileAPreparedRunsClaimIsOut(/*stop_first=*/true);
  EXPECT_EQ(report.outcome, TriggerReport::Outcome::kRan);
  EXPECT_EQ(job_->runs.load(), 4) << "a run claimed after the stop was cancelled";
  EXPECT_TRUE(owner_->errors().empty());
}

// ... and a run claimed before the stop is cancelled when its claim answers: none of its
// items start.
TEST_F(RunPathTest, AStopSeenWhileAnEarlierClaimIsOutStopsThatRunWhenTheClaimAnswers) {
  StopSeenWhileAPreparedRunsClaimIsOut(/*stop_first=*/false);
  EXPECT_EQ(job_->runs.load(), 2) << "a run claimed before the stop started its items";
  EXPECT_FALSE(Exists(sharding::RunningNode(0)));
  EXPECT_FALSE(Exists(sharding::RunningNode(1)));
  EXPECT_TRUE(owner_->errors().empty());
}

TEST_F(RunPathTest, AFirstPrepareReadsNothingAheadAndTakesNothing) {
  // No run plan yet (no run has read the registry): the fire time's Fire does it all.
  std::atomic<bool> flag{true};
  EXPECT_EQ(path_.Prepare(clock_.WallNow() + 200ms, &flag, nullptr), nullptr);
  EXPECT_FALSE(executor_.running());
  EXPECT_TRUE(owner_->calls().empty());
}

}  // namespace
}  // namespace elasticjob::executor
