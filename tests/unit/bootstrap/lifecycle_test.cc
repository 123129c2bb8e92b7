// The embedding lifecycle (issue 24 part 6): Schedule once, Stop and Join with a real
// deadline, every user callback fenced, per-job item limits on the shared item pool, custom
// sharding strategies. In-process: registry sessions on one memory store, a SimulatedClock,
// waits on reports (bounded condition variables), never sleeps.
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <stdexcept>
#include <thread>

#include "bootstrap/item_limiter.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

// Schedule() (and a one-off's Start/Execute) on a temporary must not compile: the temporary
// would be shut down by its destructor right after.
template <typename T>
concept SchedulableRvalue = requires(T&& t) {
  std::move(t).Schedule();
};
template <typename T>
concept SchedulableLvalue = requires(T& t) {
  t.Schedule();
};
template <typename T>
concept ExecutableRvalue = requires(T&& t) {
  std::move(t).Execute();
};
template <typename T>
concept StartableRvalue = requires(T&& t) {
  std::move(t).Start();
};
static_assert(SchedulableLvalue<ScheduleJobBootstrap>);
static_assert(!SchedulableRvalue<ScheduleJobBootstrap>,
              "ScheduleJobBootstrap(...).Schedule() on a temporary must not compile");
static_assert(!ExecutableRvalue<OneOffJobBootstrap>);
static_assert(!StartableRvalue<OneOffJobBootstrap>);

// A job that records how many of its items run at once; each item waits for a turn (or for
// another item running beside it).
class TurnstileJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {
    std::unique_lock<std::mutex> l(mu_);
    ++active_;
    ++started_;
    max_active_ = std::max(max_active_, active_);
    cv_.notify_all();
    // Two items at once (a limit that does not hold) let each other go, so that the overlap
    // shows in max_active instead of blocking the test.
    cv_.wait(l, [&] { return turns_ > 0 || max_active_ > 1; });
    if (turns_ > 0) --turns_;
    --active_;
    ++finished_;
    cv_.notify_all();
  }
  // Lets `n` items (running or to come) finish.
  void Allow(int n) {
    std::lock_guard<std::mutex> l(mu_);
    turns_ += n;
    cv_.notify_all();
  }
  bool WaitStarted(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return started_ >= n; });
  }
  bool WaitFinished(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return finished_ >= n; });
  }
  int max_active() {
    std::lock_guard<std::mutex> l(mu_);
    return max_active_;
  }
  // Starts counting again. REQUIRES: no item running.
  void Reset() {
    std::lock_guard<std::mutex> l(mu_);
    max_active_ = started_ = finished_ = turns_ = 0;
  }
  // Lets the items through one at a time (each waits until the one before has finished).
  void RunOneByOne(int n) {
    for (int i = 1; i <= n; ++i) {
      ASSERT_TRUE(WaitStarted(i));
      Allow(1);
      ASSERT_TRUE(WaitFinished(i));
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int active_ = 0, max_active_ = 0, started_ = 0, finished_ = 0, turns_ = 0;
};

// Gives every item to the first instance it is handed.
class AllToFirst final : public JobShardingStrategy {
 public:
  std::string type() const override { return "ALL_TO_FIRST"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view, int total) const override {
    std::vector<ShardingAssignment> out;
    for (const auto& id : instances) out.push_back({id, {}});
    for (int i = 0; i < total; ++i) out.front().items.push_back(i);
    return out;
  }
};

class ThrowingStrategy final : public JobShardingStrategy {
 public:
  std::string type() const override { return "THROWS"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>&, std::string_view,
                                           int) const override {
    throw std::runtime_error("strategy broke");
  }
};

class LifecycleTest : public test_support::RuntimeTest {
 protected:
  size_t InstanceCount(RegistryCenter& reg) {
    auto ids = reg.GetChildrenKeysDirectly("/job/instances");
    return ids.ok() ? ids->size() : 0;
  }
  JobConfiguration ConfigWith(int items, const std::string& pool_type) {
    return *JobConfiguration::Builder("job", items)
                .Cron("* * * * * ?")
                .JobExecutorThreadPoolSizeProviderType(pool_type)
                .Build();
  }
  static int Cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }
};

TEST_F(LifecycleTest, ScheduleAfterShutdownFailsAndRegistersNothing) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  boot.Shutdown();
  ASSERT_EQ(InstanceCount(*reg), 0u);
  Status again = boot.Schedule();
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("after Stop()/Shutdown()"), std::string::npos) << again;
  EXPECT_EQ(InstanceCount(*reg), 0u);  // no instance that would be given items it never runs

  // Shut down before it was ever scheduled: the same.
  ScheduleJobBootstrap never(*reg, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  never.Shutdown();
  EXPECT_EQ(never.Schedule().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(InstanceCount(*reg), 0u);

  OneOffJobBootstrap one_off(*reg, std::make_shared<GateJob>(),
                             *JobConfiguration::Builder("job", 1).Build(), Options("10.0.0.1"));
  one_off.Shutdown();
  EXPECT_EQ(one_off.Start().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(one_off.Execute().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(InstanceCount(*reg), 0u);
}

TEST_F(LifecycleTest, ASecondScheduleFailsAndLeavesTheScheduledJobAsItWas) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  Status again = boot.Schedule();
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("Schedule() called twice"), std::string::npos) << again;
  // One trigger armed, not two: a fire runs each item once.
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2)) << rec_.Dump();
  ASSERT_TRUE(boot.Join(5s).ok());  // every trigger of that fire has ended
  EXPECT_EQ(rec_.runs().size(), 2u) << rec_.Dump();
  EXPECT_EQ(job->started(), 2);
}

TEST_F(LifecycleTest, AnUnknownPoolSizeProviderTypeFailsScheduleNamingItAndCannotBeRetried) {
  auto reg = Session();
  JobConfiguration c = Config(1);
  c.job_executor_thread_pool_size_provider_type = "FIXED_8";
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), c, Options("10.0.0.1"));
  Status s = boot.Schedule();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown type 'FIXED_8'"), std::string::npos) << s;
  EXPECT_EQ(InstanceCount(*reg), 0u);
  Status again = boot.Schedule();
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("failed before"), std::string::npos) << again;
}

// A clock that outlives the runs a test abandons (Join's contract: a custom clock must).
SimulatedClock& LastingClock() {
  static auto* clock = new SimulatedClock(Clock::WallTime{} + std::chrono::seconds(1'795'305'600));
  return *clock;
}

TEST_F(LifecycleTest, ShutdownTimeoutIsABoundAndAbandonsTheRunStillGoing) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  BootstrapOptions o = Options("10.0.0.1");
  o.clock = &LastingClock();
  o.shutdown_timeout = 100ms;
  auto boot = std::make_unique<ScheduleJobBootstrap>(*reg, job, Config(1), o);
  ASSERT_TRUE(boot->Schedule().ok());
  LastingClock().Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1));
  auto shutdown = std::async(std::launch::async, [&] { boot->Shutdown(); });
  // Far beyond the 100 ms bound, but it must return while the item still runs.
  const bool returned = shutdown.wait_for(10s) == std::future_status::ready;
  job->Release();  // the abandoned item ends on its own
  shutdown.wait();
  ASSERT_TRUE(returned) << "Shutdown() with a 100 ms timeout waited for the running item";
  EXPECT_EQ(InstanceCount(*reg), 0u);  // it left the cluster anyway
  EXPECT_FALSE(*reg->IsExisted("/job/leader/election/instance"));
}

TEST_F(LifecycleTest, JoinReportsWhatItAbandonedAndAJoinedBootstrapStaysJoined) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  BootstrapOptions o = Options("10.0.0.1");
  o.clock = &LastingClock();
  ScheduleJobBootstrap boot(*reg, job, Config(1), o);
  ASSERT_TRUE(boot.Schedule().ok());
  LastingClock().Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1));
  boot.Stop();
  boot.Stop();  // idempotent
  Status joined = boot.Join(50ms);
  job->Release();
  EXPECT_EQ(joined.code(), StatusCode::kTimeout) << joined;
  EXPECT_NE(joined.message().find("abandoned"), std::string::npos) << joined;
  EXPECT_EQ(boot.Join(5s).code(), StatusCode::kTimeout);  // the first Join's result
  EXPECT_EQ(boot.Schedule().code(), StatusCode::kFailedPrecondition);
}

TEST_F(LifecycleTest, AThrowingOnItemRunOrOnTriggerIsLoggedNotFatal) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  BootstrapOptions o = Options("10.0.0.1");
  std::atomic<int> item_calls{0};
  o.on_item_run = [&](const ItemRunReport& r) {
    ++item_calls;
    rec_.Add(r);
    throw std::runtime_error("report sink down");
  };
  o.on_trigger = [&](const TriggerReport& t) {
    rec_.Add(t);
    throw 42;  // not even a std::exception
  };
  ScheduleJobBootstrap boot(*reg, job, Config(2), o);
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2));
  clock_.Advance(1s);  // the process (and the job) lives on
  ASSERT_TRUE(rec_.WaitRuns(4));
  EXPECT_TRUE(boot.Join(5s).ok());
  EXPECT_EQ(item_calls.load(), 4);
}

TEST_F(LifecycleTest, AThrowingListenerFactoryFailsScheduleInsteadOfThrowing) {
  auto reg = Session();
  BootstrapOptions o = Options("10.0.0.1");
  o.listener_types["BROKEN"] = [](const JobConfiguration&) -> Result<JobListener> {
    throw std::runtime_error("cannot build");
  };
  JobConfiguration c = Config(1);
  c.job_listener_types = {"BROKEN"};
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), c, o);
  Status s = boot.Schedule();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot build"), std::string::npos) << s;
  EXPECT_EQ(InstanceCount(*reg), 0u);
}

TEST_F(LifecycleTest, AThrowingStrategyFailsTheShardingNotTheProcess) {
  auto reg = Session();
  BootstrapOptions o = Options("10.0.0.1");
  o.sharding_strategy = std::make_shared<ThrowingStrategy>();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(2), o);
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.Wait([](const auto&, const auto& triggers) {
    for (const auto& t : triggers) {
      if (t.outcome == TriggerReport::Outcome::kFailed &&
          t.error.find("strategy broke") != std::string::npos) {
        return true;
      }
    }
    return false;
  })) << rec_.Dump();
  EXPECT_TRUE(rec_.runs().empty());
  // Nothing left for the others to wait on.
  EXPECT_FALSE(*reg->IsExisted("/job/leader/sharding/processing"));
}

TEST_F(LifecycleTest, ACustomStrategyObjectShardsTheJob) {
  auto r1 = Session(), r2 = Session();
  BootstrapOptions o1 = Options("10.0.0.1"), o2 = Options("10.0.0.2");
  o1.sharding_strategy = o2.sharding_strategy = std::make_shared<AllToFirst>();
  ScheduleJobBootstrap a(*r1, std::make_shared<GateJob>(), Config(3), o1);
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(3), o2);
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  EXPECT_NE(r1->GetDirectly("/job/config")->find("jobShardingStrategyType: ALL_TO_FIRST"),
            std::string::npos)
      << *r1->GetDirectly("/job/config");
  ASSERT_TRUE(WaitSettled(*r1, 3, 1)) << DumpTree(*r1, "/job");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(3));
  std::set<std::string> owners;
  for (const auto& r : rec_.runs()) owners.insert(r.instance_id);
  EXPECT_EQ(owners, (std::set<std::string>{Id("10.0.0.2")}));  // the first in leader order
}

TEST_F(LifecycleTest, AStrategyRegisteredByNameIsFoundAndAnUnknownOneFailsSchedule) {
  auto reg = Session();
  BootstrapOptions o = Options("10.0.0.1");
  o.sharding_strategies = {std::make_shared<AllToFirst>()};
  JobConfiguration c = Config(2);
  c.job_sharding_strategy_type = "ALL_TO_FIRST";
  {
    ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), c, o);
    ASSERT_TRUE(boot.Schedule().ok());
    clock_.Advance(1s);
    ASSERT_TRUE(rec_.WaitRuns(2)) << rec_.Dump();
  }
  c.job_sharding_strategy_type = "ALL_TO_LAST";
  c.overwrite = true;
  ScheduleJobBootstrap unknown(*reg, std::make_shared<GateJob>(), c, o);
  Status s = unknown.Schedule();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown strategy 'ALL_TO_LAST'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("ALL_TO_FIRST, AVG_ALLOCATION"), std::string::npos) << s;
  EXPECT_EQ(InstanceCount(*reg), 0u);

  // A name taken twice (here a built-in one) is refused.
  class Shadow final : public JobShardingStrategy {
   public:
    std::string type() const override { return "ODEVITY"; }
    std::vector<ShardingAssignment> Sharding(const std::vector<std::string>&, std::string_view,
                                             int) const override {
      return {};
    }
  };
  BootstrapOptions shadowing = Options("10.0.0.1");
  shadowing.sharding_strategies = {std::make_shared<Shadow>()};
  ScheduleJobBootstrap dup(*reg, std::make_shared<GateJob>(), Config(2), shadowing);
  EXPECT_EQ(dup.Schedule().code(), StatusCode::kAlreadyExists);
}

TEST(ItemLimitTest, CpuIsTwiceTheCoresSingleThreadIsOneAndAnUnknownTypeIsNamed) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto c = *JobConfiguration::Builder("job", 1).Build();
  EXPECT_EQ(*bootstrap::ItemLimitOf(c), 2 * cores);
  c.job_executor_thread_pool_size_provider_type = "CPU";
  EXPECT_EQ(*bootstrap::ItemLimitOf(c), 2 * cores);
  c.job_executor_thread_pool_size_provider_type = "SINGLE_THREAD";
  EXPECT_EQ(*bootstrap::ItemLimitOf(c), 1);
  c.job_executor_thread_pool_size_provider_type = "FIXED_8";
  auto bad = bootstrap::ItemLimitOf(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "jobExecutorThreadPoolSizeProviderType: unknown type 'FIXED_8' (known: CPU, "
            "SINGLE_THREAD)");
  // ElasticJob 3.0.4's key reads into the same field.
  auto old = ConfigFromYaml(
      "jobName: job\nshardingTotalCount: 1\njobExecutorServiceHandlerType: SINGLE_THREAD\n");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(*bootstrap::ItemLimitOf(*old), 1);
}

// Runs posted tasks when asked, on the test's thread.
class ManualExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override { tasks.push_back(std::move(task)); }
  void RunOne() {
    auto t = std::move(tasks.front());
    tasks.erase(tasks.begin());
    t();
  }
  std::vector<std::function<void()>> tasks;
};

TEST(ItemLimiterTest, HoldsTheLimitQueuesInOrderAndFollowsAChangedLimit) {
  ManualExecutor pool;
  auto limiter = std::make_shared<bootstrap::ItemLimiter>(pool, 1);
  std::vector<int> ran;
  for (int i = 0; i < 4; ++i) limiter->Post([&ran, i] { ran.push_back(i); });
  EXPECT_EQ(pool.tasks.size(), 1u);  // one at a time
  pool.RunOne();
  EXPECT_EQ(pool.tasks.size(), 1u);  // the next, handed over as the first ended
  limiter->SetLimit(3);
  EXPECT_EQ(pool.tasks.size(), 3u);  // a raised limit lets the queue go
  while (!pool.tasks.empty()) pool.RunOne();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(limiter->active(), 0);
  // A start on a thread already there runs in place, unless the limit is reached.
  limiter->SetLimit(1);
  bool inner_queued = false;
  auto keep = std::make_shared<int>(7);
  limiter->RunHereOrQueue(
      [&] {
        limiter->RunHereOrQueue([&] { ran.push_back(5); }, keep);
        inner_queued = pool.tasks.empty() && ran.size() == 4;
      },
      nullptr);
  EXPECT_EQ(keep.use_count(), 2);  // the queued start holds what it needs
  EXPECT_TRUE(inner_queued);
  ASSERT_EQ(pool.tasks.size(), 1u);
  pool.RunOne();
  EXPECT_EQ(ran.back(), 5);
}

// The count is lock-free on the way in and out: under threads racing to start and end items,
// no more than the limit run at once, and none of those queued is left waiting.
TEST(ItemLimiterTest, RacingStartsAndEndsNeverPassTheLimitAndLeaveNoneQueued) {
  ThreadPool pool(4);
  auto limiter = std::make_shared<bootstrap::ItemLimiter>(pool, 2);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> done{0};
  constexpr int kTasks = 2000;
  std::promise<void> all_done;
  auto task = [&] {
    const int now = running.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    running.fetch_sub(1);
    if (done.fetch_add(1) + 1 == kTasks) all_done.set_value();
  };
  std::vector<std::thread> starters;
  for (int t = 0; t < 4; ++t) {
    starters.emplace_back([&, t] {
      for (int i = 0; i < kTasks / 4; ++i) {
        if ((i + t) % 2 == 0) {
          limiter->Post(task);
        } else {
          limiter->RunHereOrQueue(task, nullptr);
        }
      }
    });
  }
  for (auto& s : starters) s.join();
  ASSERT_EQ(all_done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_LE(most.load(), 2);
}

TEST_F(LifecycleTest, SingleThreadRunsOneItemOfTheJobAtATime) {
  auto reg = Session();
  auto job = std::make_shared<TurnstileJob>();
  ScheduleJobBootstrap boot(*reg, job, ConfigWith(3, "SINGLE_THREAD"), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  job->RunOneByOne(3);
  ASSERT_TRUE(rec_.WaitRuns(3));
  EXPECT_EQ(job->max_active(), 1);
}

TEST_F(LifecycleTest, ALimitChangedInTheRegistryAppliesToTheNextRun) {
  auto reg = Session();
  auto job = std::make_shared<TurnstileJob>();
  ScheduleJobBootstrap boot(*reg, job, ConfigWith(3, "CPU"), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  // A run under CPU first (the pool's workers it starts stay for the run after).
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  job->RunOneByOne(3);
  ASSERT_TRUE(rec_.WaitRuns(3));
  job->Reset();
  // The config event reaches the job before the operator trigger written after it.
  ASSERT_TRUE(reg->Update("/job/config", ConfigYaml(ConfigWith(3, "SINGLE_THREAD"))).ok());
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  job->RunOneByOne(3);
  ASSERT_TRUE(rec_.WaitRuns(6));
  EXPECT_EQ(job->max_active(), 1);
}

TEST_F(LifecycleTest, ASlowJobDoesNotStarveTheOthersOnTheSharedItemPool) {
  auto reg = Session();
  // More items than the whole item pool has threads, each blocked.
  const int items = 4 * Cores() + 1;
  auto slow = std::make_shared<GateJob>(/*block=*/true);
  ScheduleJobBootstrap a(*reg, slow, Config(items), Options("10.0.0.1"));
  auto quick = std::make_shared<GateJob>();
  ScheduleJobBootstrap b(*reg, quick,
                         *JobConfiguration::Builder("other", 1).Cron("* * * * * ?").Build(),
                         Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(slow->WaitStarted(2 * Cores()));
  const bool other_ran = quick->WaitStarted(1);
  const int slow_started = slow->started();
  slow->Release();
  EXPECT_TRUE(other_ran) << "the slow job held every thread of the item pool";
  EXPECT_LE(slow_started, 2 * Cores());  // CPU: at most cores x 2 of its items at once
}

}  // namespace
}  // namespace elasticjob
