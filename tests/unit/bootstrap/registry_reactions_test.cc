// The runtime's reactions to the registry (ListenerManager through JobRuntime), end to end in
// one process: instances are sessions on one memory store, time is a SimulatedClock. Tests
// wait on registry events and reported runs (condition variables), never on sleeps.
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "unit/bootstrap/runtime_test_support.h"
#include "unit/infra/capturing_logger.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

class RegistryReactionsTest : public test_support::RuntimeTest {};

TEST_F(RegistryReactionsTest, AnOperatorTriggerRunsNowAndOneArrivingDuringARunIsQueuedNotDropped) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  ScheduleJobBootstrap boot(*reg, job, Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  ASSERT_TRUE(job->WaitStarted(1));  // ran without any clock tick
  // Its trigger node is consumed.
  ASSERT_TRUE(
      WaitRegistry(*reg, [&] { return !*reg->IsExisted("/job/trigger/" + Id("10.0.0.1")); }));
  // A second operator trigger while the first run blocks: queued.
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  ASSERT_TRUE(
      WaitRegistry(*reg, [&] { return !*reg->IsExisted("/job/trigger/" + Id("10.0.0.1")); }));
  EXPECT_EQ(rec_.runs().size(), 0u);
  job->Release();
  ASSERT_TRUE(rec_.WaitRuns(2));  // the queued trigger ran after the first run
  ASSERT_TRUE(rec_.Wait([](const auto&, const auto& triggers) {
    int ran = 0;
    for (const auto& t : triggers) {
      ran +=
          t.source == TriggerReport::Source::kOperator && t.outcome == TriggerReport::Outcome::kRan;
    }
    return ran == 2;
  }));
}

TEST_F(RegistryReactionsTest, ATriggerNodesValueIsThatRunsJobParameterQueuedOrNot) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  ScheduleJobBootstrap boot(*reg, job, Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  const std::string node = "/job/trigger/" + Id("10.0.0.1");
  ASSERT_TRUE(reg->Persist(node, "first").ok());
  ASSERT_TRUE(job->WaitStarted(1));
  // Queued behind the blocked run: it keeps its own parameter.
  ASSERT_TRUE(WaitRegistry(*reg, [&] { return !*reg->IsExisted(node); }));
  ASSERT_TRUE(reg->Persist(node, "second").ok());
  ASSERT_TRUE(WaitRegistry(*reg, [&] { return !*reg->IsExisted(node); }));
  job->Release();
  ASSERT_TRUE(rec_.WaitRuns(2));
  // An empty value: the configured parameter.
  ASSERT_TRUE(reg->Persist(node, "").ok());
  ASSERT_TRUE(rec_.WaitRuns(3));
  EXPECT_EQ(job->parameters(), (std::vector<std::string>{"first", "second", ""}));
}

// A cron trigger is worked out the preparation lead (200 ms) before its fire time; what happens
// between then and the fire time must count as it would without the preparation. These tests
// act 10 ms before a fire time: whether the preparation has run by then or not, the outcome
// they assert is the same.
class PreparedTriggerTest : public test_support::RuntimeTest {
 protected:
  // The next fire time (the clock sits on whole seconds between these tests' steps).
  Clock::WallTime Next() { return clock_.WallNow() + 1s; }
  // Advances to `fire` and waits for the cron trigger of that fire time to be reported.
  bool FireAt(Clock::WallTime fire) {
    clock_.Advance(fire - clock_.WallNow());
    return rec_.Wait([fire](const auto&, const auto& triggers) {
      for (const auto& t : triggers) {
        if (t.source == TriggerReport::Source::kCron && t.scheduled == fire) return true;
      }
      return false;
    });
  }
  // The items run for the cron fire time `fire`.
  std::set<int> ItemsAt(Clock::WallTime fire) {
    std::set<int> items;
    for (const auto& r : rec_.runs()) {
      if (r.fire_time == fire) items.insert(r.item);
    }
    return items;
  }
  // Moves the clock to 10 ms before the next fire time (its preparation due or done), and
  // returns that fire time.
  Clock::WallTime JustBeforeNextFire() {
    const auto fire = Next();
    clock_.Advance(fire - 10ms - clock_.WallNow());
    return fire;
  }
  // Start-up's sharding done, and two fires answered (the later ones are prepared).
  bool Settle(RegistryCenter& reg, int items) {
    return WaitSettled(reg, items, 1) && FireAt(Next()) && FireAt(Next());
  }
};

TEST_F(PreparedTriggerTest, ItsItemsAreMarkedRunningWhileTheyRunAndUnmarkedAfter) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(Settle(*reg, 2)) << rec_.Dump();
  job->Close();
  const int started = job->started();
  const auto fire = Next();
  clock_.Advance(fire - clock_.WallNow());
  ASSERT_TRUE(job->WaitStarted(started + 2));
  auto marks = [&] {
    return static_cast<int>(reg->IsExisted("/job/sharding/0/running").value_or(false)) +
           static_cast<int>(reg->IsExisted("/job/sharding/1/running").value_or(false));
  };
  // Sent once the items have started (monitorExecution is on by default).
  ASSERT_TRUE(WaitRegistry(*reg, [&] { return marks() == 2; })) << rec_.Dump();
  job->Release();
  ASSERT_TRUE(FireAt(fire)) << rec_.Dump();
  EXPECT_EQ(marks(), 0);  // cleared before the trigger's end is reported
  EXPECT_EQ(ItemsAt(fire), (std::set<int>{0, 1})) << rec_.Dump();
}

TEST_F(PreparedTriggerTest, AnItemDisabledBeforeTheFireTimeDoesNotRunAtIt) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(3), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(Settle(*reg, 3)) << rec_.Dump();
  const auto fire = JustBeforeNextFire();
  ASSERT_TRUE(reg->Persist("/job/sharding/1/disabled", "").ok());
  ASSERT_TRUE(FireAt(fire)) << rec_.Dump();
  EXPECT_EQ(ItemsAt(fire), (std::set<int>{0, 2})) << rec_.Dump();
  // And back at the next one.
  ASSERT_TRUE(reg->Remove("/job/sharding/1/disabled").ok());
  const auto after = Next();
  ASSERT_TRUE(FireAt(after)) << rec_.Dump();
  EXPECT_EQ(ItemsAt(after), (std::set<int>{0, 1, 2})) << rec_.Dump();
}

TEST_F(PreparedTriggerTest, AnOperatorTriggerBeforeTheFireTimeRunsAndSoDoesTheFire) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(Settle(*reg, 1)) << rec_.Dump();
  const size_t operator_runs = OperatorTriggers();
  const size_t runs = rec_.runs().size();
  const auto fire = JustBeforeNextFire();
  // If the preparation came first, its run holds the job's lane and the operator's waits
  // for it; else the operator's runs first, and the fire finds it running (a misfire: run
  // again once it ends, as ElasticJob does). Either way both run; neither is lost.
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  ASSERT_TRUE(FireAt(fire)) << rec_.Dump();
  ASSERT_TRUE(rec_.Wait([&](const auto& all_runs, const auto& triggers) {
    size_t ran = 0;
    for (const auto& t : triggers) {
      ran +=
          t.source == TriggerReport::Source::kOperator && t.outcome == TriggerReport::Outcome::kRan;
    }
    return ran > operator_runs && all_runs.size() >= runs + 2;
  })) << rec_.Dump();
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
    for (const auto& t : triggers) {
      if (t.source == TriggerReport::Source::kCron && t.scheduled == fire) {
        return t.outcome == TriggerReport::Outcome::kRan ||
               t.outcome == TriggerReport::Outcome::kMisfire;
      }
    }
    return false;
  })) << rec_.Dump();
}

TEST_F(PreparedTriggerTest, ShutdownBeforeTheFireTimeDropsThePreparedRunWithoutWaitingForIt) {
  auto reg = Session();
  auto options = Options("10.0.0.1");
  options.shutdown_timeout = 1h;  // a prepared run counted as running would hold Shutdown
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(2), options);
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(Settle(*reg, 2)) << rec_.Dump();
  const auto fire = JustBeforeNextFire();
  auto shutdown = std::async(std::launch::async, [&] { boot.Shutdown(); });
  ASSERT_EQ(shutdown.wait_for(20s), std::future_status::ready) << "Shutdown waits for the fire";
  clock_.Advance(1s);
  EXPECT_TRUE(ItemsAt(fire).empty()) << rec_.Dump();  // (a late run would show up only later)
}

TEST_F(RegistryReactionsTest, ACronChangeInTheRegistryReschedulesWithoutARestart) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  JobConfiguration never = Config(1);
  never.cron = "0 0 0 1 1 ? 2099";
  ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(never)).ok());
  // The strand handles events in order: once the operator trigger after the update is
  // reported, the update has been applied.
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  size_t runs = rec_.runs().size();
  for (int i = 0; i < 3; ++i) clock_.Advance(1s);
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));  // a barrier for anything the ticks started
  EXPECT_EQ(rec_.runs().size(), runs + 1) << "the old every-second cron still fired";
  ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(Config(1))).ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  runs = rec_.runs().size();
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(runs + 1));
  // No cron at all unschedules it (ElasticJob's rescheduleJob()); a cron again re-arms it.
  JobConfiguration none = Config(1);
  none.cron.reset();
  ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(none)).ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  runs = rec_.runs().size();
  for (int i = 0; i < 3; ++i) clock_.Advance(1s);
  ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(Config(1))).ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  EXPECT_EQ(rec_.runs().size(), runs + 1) << "fired while it had no cron";
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(runs + 2));
}

TEST_F(RegistryReactionsTest, AMalformedConfigIsIgnoredAndTheJobKeepsItsLastGoodConfiguration) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(reg->Update("/job/config", "shardingTotalCount: [not, a, number]\n").ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  ASSERT_TRUE(rec_.WaitRuns(2));
  EXPECT_EQ(job->totals(), (std::set<int>{2}));
  for (const auto& r : rec_.runs()) EXPECT_TRUE(r.success);
  clock_.Advance(1s);  // the cron keeps going too
  ASSERT_TRUE(rec_.WaitRuns(4));
}

// A job whose items write one JobLog line each.
class LoggingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    ctx.log().Warn("item {} says hello", ctx.sharding_item);
  }
};

TEST_F(RegistryReactionsTest,
       TheJobsLoggerTakesItsLinesAndTheLibraryWritesNothingToStdoutOrStderr) {
  auto reg = Session();
  auto logger = std::make_shared<test_support::CapturingLogger>();
  BootstrapOptions options = Options("10.0.0.1");
  options.on_item_run = nullptr;  // the default: the library prints no item line
  options.logger = logger;
  JobConfiguration config = Config(1);
  config.job_listener_types = {"LOG"};
  JobConfiguration bad = config;
  bad.cron = "0 0 25 * * ?";  // no hour 25
  const auto is = [](LogLevel level, std::string_view text) {
    return [level, text](const test_support::CapturingLogger::Line& l) {
      return l.level == level && l.message.find(text) != std::string::npos;
    };
  };
  std::optional<test_support::CapturingLogger::Line> refused, said, hook;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  {
    ScheduleJobBootstrap boot(*reg, std::make_shared<LoggingJob>(), config, options);
    if (boot.Schedule().ok() && reg->Update("/job/config", ConfigYaml(bad)).ok()) {
      refused = logger->WaitFor(is(LogLevel::kWarn, "keeping the last good configuration"));
      if (OperatorTrigger(*reg, "10.0.0.1")) {
        said = logger->WaitFor(is(LogLevel::kWarn, "item 0 says hello"));
        hook = logger->WaitFor(is(LogLevel::kInfo, "listener=LOG phase=after"));
      }
    }
    boot.Shutdown();
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  ASSERT_TRUE(refused.has_value()) << "no WARN about the bad cron";
  EXPECT_EQ(refused->job, "job");
  EXPECT_NE(refused->message.find("0 0 25 * * ?"), std::string::npos) << refused->message;
  ASSERT_TRUE(said.has_value()) << "no JobLog line";
  EXPECT_EQ(said->job, "job");
  EXPECT_EQ(said->item, 0);
  EXPECT_EQ(said->message, "item 0 says hello");
  ASSERT_TRUE(hook.has_value()) << "no LOG listener line";
  EXPECT_EQ(hook->job, "job");
}

TEST_F(RegistryReactionsTest, AJobWithoutALoggerWritesToTheProcessDefault) {
  auto reg = Session();
  auto fallback = std::make_shared<test_support::CapturingLogger>();
  SetDefaultLogger(fallback);
  JobConfiguration bad = Config(1);
  bad.cron = "0 0 25 * * ?";
  {
    ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
    ASSERT_TRUE(boot.Schedule().ok());
    ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(bad)).ok());
    auto refused = fallback->WaitFor([](const test_support::CapturingLogger::Line& l) {
      return l.message.find("keeping the last good configuration") != std::string::npos;
    });
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->job, "job");
  }
  SetDefaultLogger(nullptr);
}

TEST_F(RegistryReactionsTest, HugeItemCountsAndGarbageInTheConfigAreRefusedAndTheJobKeepsRunning) {
  // Found by hand: 100000 items written into the config node halted the job (the leader's
  // sharding multi-op was over ZooKeeper's request limit); binary garbage must not abort.
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  std::string garbage =
      "\x7f"
      "ELF\x02\x01\x01";
  for (int i = 0; i < 256; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
  std::string huge = ConfigYaml(Config(2));
  huge.replace(huge.find("shardingTotalCount: 2"), 21, "shardingTotalCount: 100000");
  for (const std::string& bad :
       {huge, garbage, std::string("5\n"), std::string("jobName: [a, b]\n")}) {
    ASSERT_TRUE(reg->Update("/job/config", bad).ok());
    const size_t runs = rec_.runs().size();
    ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
    ASSERT_TRUE(rec_.WaitRuns(runs + 2));
  }
  EXPECT_EQ(job->totals(), (std::set<int>{2}));
  for (const auto& r : rec_.runs()) EXPECT_TRUE(r.success);
  EXPECT_FALSE(*reg->IsExisted("/job/sharding/2"));  // nothing sharded for the bad count
}

TEST_F(RegistryReactionsTest,
       AConfigNamingAnUnknownStrategyIsRefusedAndShardingGoesOnWithTheLastGood) {
  // Found by hand: `job config set` wrote jobShardingStrategyType NO_SUCH; at the next
  // resharding every tick ran nothing cluster-wide (leader/sharding/necessary stuck).
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  for (const char* field : {"jobShardingStrategyType", "jobExecutorThreadPoolSizeProviderType",
                            "jobErrorHandlerType", "jobListenerTypes"}) {
    JobConfiguration bad = Config(3);  // the item count change is refused with it
    const std::string f = field;
    if (f == "jobShardingStrategyType") bad.job_sharding_strategy_type = "NO_SUCH";
    if (f == "jobExecutorThreadPoolSizeProviderType") {
      bad.job_executor_thread_pool_size_provider_type = "NO_SUCH";
    }
    if (f == "jobErrorHandlerType") bad.job_error_handler_type = "NO_SUCH";
    if (f == "jobListenerTypes") bad.job_listener_types = {"NO_SUCH"};
    ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(bad)).ok());
    // A resharding, as an instance joining or leaving asks for one.
    ASSERT_TRUE(reg->Persist("/job/leader/sharding/necessary", "").ok());
    const size_t runs = rec_.runs().size();
    ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1")) << field;
    ASSERT_TRUE(rec_.WaitRuns(runs + 2)) << field << "\n" << rec_.Dump();
    EXPECT_FALSE(reg->IsExisted("/job/leader/sharding/necessary").value_or(true)) << field;
    EXPECT_FALSE(*reg->IsExisted("/job/sharding/2")) << field << ": the refused count was used";
  }
  EXPECT_EQ(job->totals(), (std::set<int>{2}));
  for (const auto& r : rec_.runs()) EXPECT_TRUE(r.success) << r.error;
}

TEST_F(RegistryReactionsTest, AShardingTotalCountChangeReshardsBeforeTheNextRun) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(Config(5))).ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  std::set<int> items;
  for (const auto& r : rec_.runs()) items.insert(r.item);
  EXPECT_EQ(items, (std::set<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(reg->GetDirectly("/job/sharding/4/instance").value_or("(none)"), Id("10.0.0.1"));
}

TEST_F(RegistryReactionsTest, NoFlagIsRaisedForAJoinerOnceAnAssignmentIncludesIt) {
  // The joiner raises the flag in its registration's multi-op. A flag raised again by the
  // others on seeing its nodes, after the leader had sharded with the joiner in the plan,
  // forced a second sharding, which a trigger of the next fire could find pending and give
  // way to: the joiner missed that fire (JobTracingTest.AFailoverRunIsRecordedAsFailover
  // failed so under ASan). A raised again by a sharding that began before the joiner came
  // (its plan left the joiner out) is right, and comes before a plan with the joiner.
  auto r1 = Session(), r2 = Session();
  ScheduleJobBootstrap a(*r1, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 1)) << DumpTree(*r1, "/job");
  std::mutex mu;
  std::condition_variable cv;
  bool planned = false;  // an assignment with an item of B's is written
  std::vector<std::string> late_flags;
  bool marked = false;
  // One thread (pool_): the events come in the store's order.
  auto sub = r1->Watch("/job", pool_, [&](const TreeEvent& e) {
    std::lock_guard<std::mutex> l(mu);
    if (e.type != TreeEvent::Type::kDeleted && e.key.starts_with("/job/sharding/") &&
        e.key.ends_with("/instance") && e.value == Id("10.0.0.2")) {
      planned = true;
    }
    if (planned && e.type != TreeEvent::Type::kDeleted &&
        e.key == "/job/leader/sharding/necessary") {
      late_flags.push_back(e.type == TreeEvent::Type::kAdded ? "added" : "written again");
    }
    if (e.key == "/job/test-marker") marked = true;
    cv.notify_all();
  });
  ASSERT_TRUE(sub.ok());
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(2), Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 2)) << DumpTree(*r1, "/job");
  // Each instance's listeners take the registry's events in order, on one strand, and an
  // operator trigger is one of them: once both have run one, both have seen B's nodes.
  ASSERT_TRUE(OperatorTrigger(*r1, "10.0.0.1"));
  ASSERT_TRUE(OperatorTrigger(*r2, "10.0.0.2"));
  ASSERT_TRUE(r1->Persist("/job/test-marker", "").ok());
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, 20s, [&] { return marked; }));
  EXPECT_TRUE(planned);
  EXPECT_TRUE(late_flags.empty()) << ::testing::PrintToString(late_flags) << "\n"
                                  << DumpTree(*r1, "/job");
  EXPECT_FALSE(r1->IsExisted("/job/leader/sharding/necessary").value_or(true));
  std::set<std::pair<std::string, int>> ran;
  for (const auto& r : rec_.runs()) ran.insert({r.instance_id, r.item});
  std::set<std::pair<std::string, int>> owned;  // each instance ran the item it owns
  for (int i = 0; i < 2; ++i) {
    owned.insert(
        {r1->GetDirectly("/job/sharding/" + std::to_string(i) + "/instance").value_or(""), i});
  }
  EXPECT_EQ(ran, owned) << rec_.Dump();
  EXPECT_EQ(ran.size(), 2u);
}

TEST_F(RegistryReactionsTest, AnotherInstancesNodesAppearingDoNotMakeTheListenersRaiseTheFlag) {
  // What the previous test's race comes down to, without the race: the others' listeners
  // leave the flag of an instance that registers to that instance.
  auto r1 = Session();
  ScheduleJobBootstrap a(*r1, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 1)) << DumpTree(*r1, "/job");
  std::mutex mu;
  std::condition_variable cv;
  int flag_writes = 0;
  bool marked = false;
  auto sub = r1->Watch("/job", pool_, [&](const TreeEvent& e) {  // one thread: in order
    std::lock_guard<std::mutex> l(mu);
    if (e.key == "/job/leader/sharding/necessary" && e.type != TreeEvent::Type::kDeleted) {
      ++flag_writes;
    }
    if (e.key == "/job/test-marker") marked = true;
    cv.notify_all();
  });
  ASSERT_TRUE(sub.ok());
  auto r2 = Session();
  ASSERT_TRUE(r2->Persist("/job/servers/10.0.0.2", "").ok());
  ASSERT_TRUE(r2->PersistEphemeral("/job/instances/" + Id("10.0.0.2"), "jobInstanceId: x\n").ok());
  // A's listeners take events in order on one strand: its operator trigger's run comes
  // after it handled both nodes, and so after any flag it raised for them.
  ASSERT_TRUE(OperatorTrigger(*r1, "10.0.0.1"));
  ASSERT_TRUE(r1->Persist("/job/test-marker", "").ok());
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, 20s, [&] { return marked; }));
  EXPECT_EQ(flag_writes, 0);
  EXPECT_FALSE(r1->IsExisted("/job/leader/sharding/necessary").value_or(true));
}

TEST_F(RegistryReactionsTest, ADisabledServerLosesItsItemsAndLeadership) {
  auto r1 = Session(), r2 = Session();
  ScheduleJobBootstrap a(*r1, std::make_shared<GateJob>(), Config(4), Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(4), Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  EXPECT_EQ(*r1->GetDirectly("/job/leader/election/instance"), Id("10.0.0.1"));
  ASSERT_TRUE(r1->Persist("/job/servers/10.0.0.1", "DISABLED").ok());
  // A abdicates; B, whose server is available, is elected.
  ASSERT_TRUE(WaitRegistry(*r1, [&] {
    auto leader = r1->GetDirectly("/job/leader/election/instance");
    return leader.ok() && *leader == Id("10.0.0.2");
  }));
  // The resharding without A (a sharding A began before the disable may land first; its
  // re-check raises the flag again).
  ASSERT_TRUE(WaitSettled(*r2, 4, 1)) << DumpTree(*r2, "/job");
  ASSERT_TRUE(OperatorTrigger(*r2, "10.0.0.2"));
  std::set<int> on_b;
  for (const auto& r : rec_.runs()) {
    EXPECT_EQ(r.instance_id, Id("10.0.0.2"));
    on_b.insert(r.item);
  }
  EXPECT_EQ(on_b, (std::set<int>{0, 1, 2, 3})) << rec_.Dump() << DumpTree(*r2, "/job");
}

TEST_F(RegistryReactionsTest, AnOperatorDeletingTheInstanceStopsTheJobThere) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(reg->Remove("/job/instances/" + Id("10.0.0.1")).ok());
  // Shutting down gives up leadership; the instance does not come back.
  ASSERT_TRUE(
      WaitRegistry(*reg, [&] { return !*reg->IsExisted("/job/leader/election/instance"); }));
  for (int i = 0; i < 3; ++i) clock_.Advance(1s);
  EXPECT_FALSE(*reg->IsExisted("/job/instances/" + Id("10.0.0.1")));
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  EXPECT_TRUE(rec_.runs().empty());
}

TEST_F(RegistryReactionsTest, ASessionExpiryReRegistersAndTheJobGoesOn) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  const uint64_t old_session = reg->session_id();
  reg->ExpireSession();
  ASSERT_NE(reg->session_id(), old_session);
  // The instance node is back, owned by the new session, and the job still runs.
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_TRUE(*reg->IsExisted("/job/instances/" + Id("10.0.0.1")));
  EXPECT_EQ(*reg->GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2));
}

// A job whose items wait until their run is cancelled (or released), counting the items
// that saw the cancellation.
class CancellableJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    // Registered before mu_ is taken: a callback run at once (already requested) takes it.
    uint64_t id = ctx.cancellation->OnRequest([this] {
      std::lock_guard<std::mutex> l(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> l(mu_);
    ++started_;
    cv_.notify_all();
    cv_.wait_for(l, 20s, [&] { return ctx.cancelled() || released_; });
    cancelled_ += ctx.cancelled() ? 1 : 0;
    l.unlock();
    ctx.cancellation->Unregister(id);
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  bool WaitStarted(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return started_ >= n; });
  }
  int cancelled() {
    std::lock_guard<std::mutex> l(mu_);
    return cancelled_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int started_ = 0;
  int cancelled_ = 0;
};

TEST_F(RegistryReactionsTest, ASessionExpiryCancelsTheItemsRunningThereAndClearsTheirMarks) {
  // Fencing (issue 24): once its session expired, others may take the instance's items over
  // at once; what still runs here is cancelled, reported as such, and its marks go.
  auto reg = Session();
  auto job = std::make_shared<CancellableJob>();
  struct ReleaseOnExit {
    std::shared_ptr<CancellableJob> job;
    ~ReleaseOnExit() { job->Release(); }
  } release_on_exit{job};
  ScheduleJobBootstrap boot(*reg, job, Config(2, true), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(2)) << rec_.Dump() << DumpTree(*reg, "/job");
  ASSERT_TRUE(WaitRegistry(*reg, [&] {
    return reg->GetDirectly("/job/sharding/0/running").value_or("") == Id("10.0.0.1") &&
           reg->GetDirectly("/job/sharding/1/running").value_or("") == Id("10.0.0.1");
  })) << DumpTree(*reg, "/job");
  reg->ExpireSession();
  ASSERT_TRUE(rec_.WaitRuns(2)) << "the items were not cancelled\n" << DumpTree(*reg, "/job");
  EXPECT_EQ(job->cancelled(), 2);
  for (const auto& r : rec_.runs()) {
    EXPECT_FALSE(r.success);
    EXPECT_NE(r.error.find("cancelled: the registry session expired"), std::string::npos)
        << r.error;
  }
  ASSERT_TRUE(WaitRegistry(*reg, [&] {
    return !reg->IsExisted("/job/sharding/0/running").value_or(true) &&
           !reg->IsExisted("/job/sharding/1/running").value_or(true);
  })) << DumpTree(*reg, "/job");
}

TEST_F(RegistryReactionsTest, AMisfireReRunRunsTheItemsTheSkippedTriggerWouldHaveRun) {
  // Chaos proxy_partition: a run of item 1 only (item 0 was taken over by another instance's
  // failover run), a trigger skipped as a misfire meanwhile, item 0 free again before the
  // run ends: the re-run stands for the skipped trigger and runs item 0 too.
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  struct ReleaseOnExit {
    std::shared_ptr<GateJob> job;
    ~ReleaseOnExit() { job->Release(); }
  } release_on_exit{job};
  ScheduleJobBootstrap boot(*reg, job, Config(2, true), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1)) << DumpTree(*reg, "/job");
  ASSERT_TRUE(reg->Persist("/job/sharding/0/failover", "10.0.0.2@-@1").ok());
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1)) << rec_.Dump() << DumpTree(*reg, "/job");
  ASSERT_TRUE(reg->Remove("/job/sharding/0/failover").ok());  // its failover run ended
  clock_.Advance(1s);                                         // a misfire: the run goes on
  ASSERT_TRUE(WaitRegistry(*reg, [&] { return *reg->IsExisted("/job/sharding/1/misfire"); }))
      << DumpTree(*reg, "/job");
  job->Release();
  ASSERT_TRUE(rec_.Wait([](const auto& runs, const auto&) {
    for (const auto& r : runs) {
      if (r.item == 0 && r.misfire_rerun) return true;
    }
    return false;
  })) << rec_.Dump()
      << DumpTree(*reg, "/job");
  EXPECT_EQ(rec_.runs().front().item, 1) << rec_.Dump();
}

TEST_F(RegistryReactionsTest, ACrashedInstancesRunningItemsAreTakenOverAtOnce) {
  auto r1 = Session(), r2 = Session();
  auto stuck = std::make_shared<GateJob>(/*block=*/true);
  // B first, so B leads: a follower whose leader is stuck in a run would wait for it.
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(2, true), Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  auto a = std::make_unique<ScheduleJobBootstrap>(*r1, stuck, Config(2, true), Options("10.0.0.1"));
  struct ReleaseOnExit {
    std::shared_ptr<GateJob> job;
    ~ReleaseOnExit() { job->Release(); }  // a failed assertion must not leave it blocked
  } release_on_exit{stuck};               // (destroyed before the bootstraps, which wait)
  ASSERT_TRUE(a->Schedule().ok());
  // A resharding flagged after A read its item would wait for A's stuck run.
  ASSERT_TRUE(WaitSettled(*r2, 2, 2)) << DumpTree(*r2, "/job");
  test_support::WaitIdle({r1.get(), r2.get()});  // A's fire sees the same assignment
  clock_.Advance(1s);
  ASSERT_TRUE(stuck->WaitStarted(1))
      << rec_.Dump()
      << DumpTree(*r2, "/job");  // A runs item 0 (AVG_ALLOCATION, descending ids: B, A)
  ASSERT_TRUE(rec_.WaitRuns(1)) << rec_.Dump() << DumpTree(*r2, "/job");  // B ran its item
  int a_item = rec_.runs()[0].item == 0 ? 1 : 0;
  // With failover on, the running mark is persistent and names A (it follows the item's
  // start).
  ASSERT_TRUE(WaitRegistry(*r2, [&] {
    return r2->GetDirectly("/job/sharding/" + std::to_string(a_item) + "/running").value_or("") ==
           Id("10.0.0.1");
  })) << DumpTree(*r2, "/job");
  // A's session ends as a crash ends it: its ephemeral nodes go, nothing re-registers.
  r1->Close();
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    for (const auto& r : runs) {
      if (r.item == a_item && r.failover && r.instance_id == Id("10.0.0.2")) return true;
    }
    return false;
  }));  // without any clock tick: at once
  ASSERT_TRUE(WaitRegistry(*r2, [&] {
    return !*r2->IsExisted("/job/sharding/" + std::to_string(a_item) + "/failovering") &&
           !*r2->IsExisted("/job/sharding/" + std::to_string(a_item) + "/failover");
  }));
  stuck->Release();
  a.reset();
}

TEST_F(RegistryReactionsTest, ATriggerBetweenAFailoverClaimAndItsRunStillRunsTheOwnItems) {
  // Chaos kill9_mid_item: A had just claimed a crashed instance's item (its failover nodes
  // written) when its cron trigger came, before the claim loop started the failover run. The
  // trigger ran that item only, as ElasticJob runs claimed failover items instead of the
  // instance's own: A's own items missed the fire. Failover runs go beside the own run here,
  // so the trigger runs A's items and the claimed item runs as a failover run.
  auto ra = Session(), rb = Session();
  ScheduleJobBootstrap a(*ra, std::make_shared<GateJob>(), Config(4, true), Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ScheduleJobBootstrap b(*rb, std::make_shared<GateJob>(), Config(4, true), Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*ra, 4, 2)) << DumpTree(*ra, "/job");
  std::set<int> own_a;
  int claimed = -1;  // one of B's items, claimed by A (as if B had crashed running it)
  for (int i = 0; i < 4; ++i) {
    if (*ra->Get("/job/sharding/" + std::to_string(i) + "/instance") == Id("10.0.0.1")) {
      own_a.insert(i);
    } else if (claimed < 0) {
      claimed = i;
    }
  }
  ASSERT_EQ(own_a.size(), 2u) << DumpTree(*ra, "/job");
  const std::string item = "/job/sharding/" + std::to_string(claimed);
  ASSERT_TRUE(ra->PersistEphemeral(item + "/failover", Id("10.0.0.1")).ok());
  ASSERT_TRUE(ra->Persist(item + "/failovering", Id("10.0.0.1")).ok());
  test_support::WaitIdle({ra.get(), rb.get()});  // B's fire must see A's claim
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    std::set<int> ran_own;
    bool ran_claimed = false;
    for (const auto& r : runs) {
      if (r.instance_id != Id("10.0.0.1")) continue;
      if (r.item == claimed && r.failover) ran_claimed = true;
      if (own_a.count(r.item) != 0 && !r.failover) ran_own.insert(r.item);
    }
    return ran_claimed && ran_own == own_a;
  })) << rec_.Dump()
      << DumpTree(*ra, "/job");
  // The failover run ended as any does: its nodes are gone.
  ASSERT_TRUE(WaitRegistry(*ra, [&] {
    return !ra->IsExisted(item + "/failover").value_or(true) &&
           !ra->IsExisted(item + "/failovering").value_or(true);
  })) << DumpTree(*ra, "/job");
}

TEST_F(RegistryReactionsTest, AJobRestartedFromAnotherHostTakesOverTheStoppedOnesItems) {
  // The first host stops gracefully (its sharding nodes stay, naming it); the job starts
  // again on another host: its first trigger reshards and runs every item there.
  auto r1 = Session();
  {
    ScheduleJobBootstrap a(*r1, std::make_shared<GateJob>(), Config(4), Options("10.0.0.1"));
    ASSERT_TRUE(a.Schedule().ok());
    ASSERT_TRUE(OperatorTrigger(*r1, "10.0.0.1"));
    ASSERT_TRUE(rec_.WaitRuns(4));
  }
  r1->Close();
  auto r2 = Session();
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(4), Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(8)) << rec_.Dump() << DumpTree(*r2, "/job");
  std::set<int> on_b;
  for (const auto& r : rec_.runs()) {
    if (r.instance_id == Id("10.0.0.2")) on_b.insert(r.item);
  }
  EXPECT_EQ(on_b, (std::set<int>{0, 1, 2, 3})) << rec_.Dump() << DumpTree(*r2, "/job");
}

TEST_F(RegistryReactionsTest, OneOffExecuteRunsEveryInstanceOnce) {
  auto r1 = Session(), r2 = Session();
  JobConfiguration c = *JobConfiguration::Builder("job", 4).Build();
  OneOffJobBootstrap a(*r1, std::make_shared<GateJob>(), c, Options("10.0.0.1"));
  OneOffJobBootstrap b(*r2, std::make_shared<GateJob>(), c, Options("10.0.0.2"));
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  // (Triggered at once, the first instance could still run all four on the assignment it
  // made alone, the other finding them running.)
  ASSERT_TRUE(WaitSettled(*r1, 4, 2)) << DumpTree(*r1, "/job");
  ASSERT_TRUE(a.Execute().ok());
  ASSERT_TRUE(rec_.WaitRuns(4));
  std::map<int, std::string> owner;
  for (const auto& r : rec_.runs()) {
    EXPECT_TRUE(owner.emplace(r.item, r.instance_id).second) << "item " << r.item << " twice";
  }
  EXPECT_EQ(owner.size(), 4u);
  std::set<std::string> instances;
  for (const auto& [item, id] : owner) instances.insert(id);
  EXPECT_EQ(instances.size(), 2u);
  JobConfiguration with_cron = *JobConfiguration::Builder("job2", 1).Cron("* * * * * ?").Build();
  OneOffJobBootstrap bad(*r1, std::make_shared<GateJob>(), with_cron, Options("10.0.0.1"));
  EXPECT_NE(bad.Execute().message().find("a one-off job must not have a cron"), std::string::npos);
}

}  // namespace
}  // namespace elasticjob
