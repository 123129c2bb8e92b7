// Job listeners through the bootstrap: ElasticJobListener on every instance, and
// DistributeOnceElasticJobListener once per execution across instances (sessions on one
// memory store), its waits ended by the registry or by the simulated clock.
#include <gtest/gtest.h>

#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

// What happened, in order, across listeners and items.
class Journal {
 public:
  void Add(std::string entry) {
    std::lock_guard<std::mutex> l(mu_);
    entries_.push_back(std::move(entry));
    cv_.notify_all();
  }
  bool WaitCount(const std::string& entry, int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return CountLocked(entry) >= n; });
  }
  int Count(const std::string& entry) {
    std::lock_guard<std::mutex> l(mu_);
    return CountLocked(entry);
  }
  std::vector<std::string> entries() {
    std::lock_guard<std::mutex> l(mu_);
    return entries_;
  }

 private:
  int CountLocked(const std::string& entry) {
    return static_cast<int>(std::count(entries_.begin(), entries_.end(), entry));
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> entries_;
};

class JournalJob final : public SimpleJob {
 public:
  explicit JournalJob(Journal& j) : journal_(j) {}
  void Execute(const ShardingContext& ctx) override {
    journal_.Add("item" + std::to_string(ctx.sharding_item));
  }

 private:
  Journal& journal_;
};

class JournalListener final : public ElasticJobListener {
 public:
  JournalListener(Journal& j, std::string name, int order, bool throws = false)
      : journal_(j), name_(std::move(name)), order_(order), throws_(throws) {}
  void BeforeJobExecuted(const ShardingContexts& c) override {
    Record(c);
    journal_.Add(name_ + ".before");
    if (throws_) throw std::runtime_error("listener failure");
  }
  void AfterJobExecuted(const ShardingContexts&) override { journal_.Add(name_ + ".after"); }
  int order() const override { return order_; }
  std::vector<ShardingContexts> seen() {
    std::lock_guard<std::mutex> l(mu_);
    return seen_;
  }

 private:
  void Record(const ShardingContexts& c) {
    std::lock_guard<std::mutex> l(mu_);
    seen_.push_back(c);
  }
  Journal& journal_;
  std::string name_;
  int order_;
  bool throws_;
  std::mutex mu_;
  std::vector<ShardingContexts> seen_;
};

class OnceListener final : public DistributeOnceElasticJobListener {
 public:
  OnceListener(Journal& j, std::chrono::milliseconds timeout)
      : DistributeOnceElasticJobListener(timeout, timeout), journal_(j) {}
  void DoBeforeJobExecutedAtLastStarted(const ShardingContexts&) override {
    journal_.Add("once.before");
  }
  void DoAfterJobExecutedAtLastCompleted(const ShardingContexts&) override {
    journal_.Add("once.after");
  }

 private:
  Journal& journal_;
};

class JobListenerTest : public test_support::RuntimeTest {
 protected:
  JobConfiguration FarCron(int items, const std::string& params = "") {
    // Runs only when an operator triggers it (no tick in these tests).
    return *JobConfiguration::Builder("job", items)
                .Cron("0 0 0 1 1 ? 2099")
                .ShardingItemParameters(params)
                .Build();
  }
  // One instance of a 2-item job whose item 1 is disabled, triggered: its distribute-once
  // listener (timeouts `timeout`) registers item 0 and waits for a set that cannot complete.
  std::unique_ptr<ScheduleJobBootstrap> StartWaitingForever(RegistryCenter& reg,
                                                            std::chrono::milliseconds timeout) {
    BootstrapOptions options = Options("10.0.0.1");
    options.listeners = {std::make_shared<OnceListener>(journal_, timeout)};
    auto boot = std::make_unique<ScheduleJobBootstrap>(reg, std::make_shared<JournalJob>(journal_),
                                                       FarCron(2), options);
    EXPECT_TRUE(boot->Schedule().ok());
    EXPECT_TRUE(reg.Persist("/job/sharding/1/disabled", "").ok());
    EXPECT_TRUE(reg.Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
    EXPECT_TRUE(WaitRegistry(reg, [&] { return *reg.IsExisted("/job/guarantee/started/0"); }));
    return boot;
  }
  Journal journal_;
};

TEST_F(JobListenerTest, ListenersRunInOrderAroundTheItemsWithThisInstancesContexts) {
  auto reg = Session();
  auto second = std::make_shared<JournalListener>(journal_, "second", 2);
  auto first = std::make_shared<JournalListener>(journal_, "first", 1);
  BootstrapOptions options = Options("10.0.0.1");
  options.listeners = {second, first};
  ScheduleJobBootstrap boot(*reg, std::make_shared<JournalJob>(journal_), FarCron(2, "0=a"),
                            options);
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  auto e = journal_.entries();
  ASSERT_EQ(e.size(), 6u) << ::testing::PrintToString(e);
  EXPECT_EQ(e[0], "first.before");
  EXPECT_EQ(e[1], "second.before");
  EXPECT_EQ((std::set<std::string>{e[2], e[3]}), (std::set<std::string>{"item0", "item1"}));
  EXPECT_EQ(e[4], "first.after");
  EXPECT_EQ(e[5], "second.after");
  ASSERT_EQ(first->seen().size(), 1u);
  const ShardingContexts c = first->seen()[0];
  EXPECT_EQ(c.job_name, "job");
  EXPECT_EQ(c.sharding_total_count, 2);
  EXPECT_EQ(c.sharding_item_parameters, (std::map<int, std::string>{{0, "a"}, {1, ""}}));
  EXPECT_EQ(c.task_id.substr(0, 12), "job@-@0,1@-@") << c.task_id;
}

TEST_F(JobListenerTest, ListenersRunAlsoWhenThisInstanceHasNoItems) {
  // As ElasticJob: before and after run with empty contexts.
  auto reg = Session();
  auto each = std::make_shared<JournalListener>(journal_, "each", 0);
  BootstrapOptions options = Options("10.0.0.1");
  options.listeners = {each};
  ScheduleJobBootstrap boot(*reg, std::make_shared<JournalJob>(journal_), FarCron(1), options);
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(reg->Persist("/job/sharding/0/disabled", "").ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  EXPECT_EQ(journal_.entries(), (std::vector<std::string>{"each.before", "each.after"}));
  ASSERT_EQ(each->seen().size(), 1u);
  EXPECT_TRUE(each->seen()[0].sharding_item_parameters.empty());
}

TEST_F(JobListenerTest, AThrowingListenerIsReportedAndTheRunGoesOn) {
  auto reg = Session();
  BootstrapOptions options = Options("10.0.0.1");
  options.listeners = {std::make_shared<JournalListener>(journal_, "bad", 0, /*throws=*/true)};
  ScheduleJobBootstrap boot(*reg, std::make_shared<JournalJob>(journal_), FarCron(1), options);
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  EXPECT_EQ(journal_.entries(), (std::vector<std::string>{"bad.before", "item0", "bad.after"}));
}

TEST_F(JobListenerTest, ADistributeOnceListenerRunsOncePerExecutionAcrossTheCluster) {
  auto r1 = Session();
  auto r2 = Session();
  auto once = std::make_shared<OnceListener>(journal_, 60s);
  BootstrapOptions o1 = Options("10.0.0.1");
  BootstrapOptions o2 = Options("10.0.0.2");
  o1.listeners = {once};
  o2.listeners = {once};
  auto config = *JobConfiguration::Builder("job", 4).Cron("* * * * * ?").Build();
  ScheduleJobBootstrap a(*r1, std::make_shared<JournalJob>(journal_), config, o1);
  ScheduleJobBootstrap b(*r2, std::make_shared<JournalJob>(journal_), config, o2);
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  // An execution whose items change owner midway cannot complete the set, and waits for its
  // timeout (as in ElasticJob): start once the assignment is settled.
  ASSERT_TRUE(WaitSettled(*r1, 4, 2)) << DumpTree(*r1, "/job");
  for (int round = 1; round <= 3; ++round) {
    clock_.Advance(1s);  // both instances fire
    ASSERT_TRUE(journal_.WaitCount("once.after", round))
        << rec_.Dump() << ::testing::PrintToString(journal_.entries()) << DumpTree(*r1, "/job");
    // Both instances reported the trigger: each is done with its after-listeners.
    ASSERT_TRUE(rec_.Wait([round](const auto&, const auto& triggers) {
      int ran = 0;
      for (const auto& t : triggers) ran += t.outcome == TriggerReport::Outcome::kRan;
      return ran == 2 * round;
    })) << rec_.Dump();
    ASSERT_EQ(rec_.runs().size(), 4u * round) << rec_.Dump();
    EXPECT_EQ(journal_.Count("once.before"), round);
    EXPECT_EQ(journal_.Count("once.after"), round);
  }
  // Every item of each execution ran between its before and after hook.
  auto e = journal_.entries();
  int items = 0;
  for (const auto& entry : e) {
    if (entry == "once.before") {
      EXPECT_EQ(items % 4, 0) << ::testing::PrintToString(e);
    } else if (entry == "once.after") {
      EXPECT_EQ(items % 4, 0) << ::testing::PrintToString(e);
    } else {
      ++items;
    }
  }
  EXPECT_EQ(items, 12);
  // The guarantee nodes are gone (the other instance's clear reaches r1's cache a moment
  // later); the latches stay (zk-layout.md).
  EXPECT_TRUE(WaitRegistry(*r1, [&] {
    return !*r1->IsExisted("/job/guarantee/started") && !*r1->IsExisted("/job/guarantee/completed");
  })) << DumpTree(*r1, "/job");
  EXPECT_TRUE(*r1->IsExisted("/job/guarantee/started-latch"));
}

TEST_F(JobListenerTest, ADistributeOnceWaitTimesOutClearsItsNodesAndTheRunGoesOn) {
  // Item 1 is disabled: the set never completes, and both waits end by timeout.
  auto reg = Session();
  auto boot = StartWaitingForever(*reg, 5s);
  EXPECT_EQ(journal_.entries().size(), 0u);  // waiting, holding no item
  clock_.Advance(5s);
  ASSERT_TRUE(journal_.WaitCount("item0", 1));
  ASSERT_TRUE(WaitRegistry(*reg, [&] { return *reg->IsExisted("/job/guarantee/completed/0"); }));
  EXPECT_FALSE(*reg->IsExisted("/job/guarantee/started"));  // cleared by the timeout
  clock_.Advance(5s);
  ASSERT_TRUE(rec_.Wait([](const auto&, const auto& triggers) { return !triggers.empty(); }));
  EXPECT_FALSE(*reg->IsExisted("/job/guarantee/completed"));
  EXPECT_EQ(journal_.entries(), (std::vector<std::string>{"item0"}));  // no hook ran
}

TEST_F(JobListenerTest, ShutdownEndsADistributeOnceWait) {
  auto reg = Session();
  auto boot = StartWaitingForever(*reg, 3600s);
  boot->Shutdown();  // bounded by 5 s in Options; ends at once
  ASSERT_TRUE(rec_.Wait([](const auto&, const auto& triggers) { return !triggers.empty(); }));
}

TEST_F(JobListenerTest, ListenerTypesComeFromTheConfigAndUnknownOnesAreErrors) {
  auto reg = Session();
  BootstrapOptions options = Options("10.0.0.1");
  options.listener_types["JOURNAL"] = [this](const JobConfiguration&) -> Result<JobListener> {
    return JobListener(std::make_shared<JournalListener>(journal_, "typed", 0));
  };
  auto config = FarCron(1);
  config.job_listener_types = {"JOURNAL"};
  ScheduleJobBootstrap boot(*reg, std::make_shared<JournalJob>(journal_), config, options);
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  EXPECT_EQ(journal_.entries(), (std::vector<std::string>{"typed.before", "item0", "typed.after"}));

  JobConfiguration unknown = FarCron(1);
  unknown.job_name = "other";
  unknown.job_listener_types = {"LOG", "NOPE"};
  ScheduleJobBootstrap bad(*reg, std::make_shared<JournalJob>(journal_), unknown,
                           Options("10.0.0.1"));
  Status s = bad.Schedule();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.ToString().find("jobListenerTypes[1]"), std::string::npos) << s;
  EXPECT_NE(s.ToString().find("'NOPE'"), std::string::npos) << s;

  JobConfiguration bad_prop = FarCron(1);
  bad_prop.job_name = "third";
  bad_prop.job_listener_types = {"DISTRIBUTE_ONCE_LOG"};
  bad_prop.props["listener.distribute.once.started.timeout.milliseconds"] = "soon";
  ScheduleJobBootstrap bad2(*reg, std::make_shared<JournalJob>(journal_), bad_prop,
                            Options("10.0.0.1"));
  s = bad2.Schedule();
  EXPECT_NE(s.ToString().find("listener.distribute.once.started.timeout.milliseconds"),
            std::string::npos)
      << s;
  EXPECT_NE(s.ToString().find("'soon'"), std::string::npos) << s;
}

}  // namespace
}  // namespace elasticjob
