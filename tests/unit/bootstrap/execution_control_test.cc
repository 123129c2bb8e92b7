// Execution control in the runtime (docs/scheduling.md): fixed-rate fire times aligned across
// instances, execution timeouts (reported at the timeout even when the code ignores its
// cancellation; SCRIPT groups ended), and retries. Instances are registry sessions on one
// memory store and time is a SimulatedClock: the tests wait on reports, never on sleeps.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/metrics/metrics.h"
#include "elasticjob/schedule/fixed_rate.h"
#include "infra/job_metrics.h"
#include "metrics/metrics_impl.h"
#include "unit/bootstrap/forwarding_registry.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

class ExecutionControlTest : public test_support::RuntimeTest {
 protected:
  JobConfiguration::Builder Base(int items) {
    JobConfiguration::Builder b("job", items);
    return b;
  }
};

// Fails its first `failures` calls, then succeeds; counts calls and remembers attempts.
class FlakyJob final : public SimpleJob {
 public:
  explicit FlakyJob(int failures) : failures_(failures) {}
  void Execute(const ShardingContext& ctx) override {
    attempts_seen.push_back(ctx.attempt);
    if (calls.fetch_add(1) < failures_) throw std::runtime_error("boom");
  }
  std::atomic<int> calls{0};
  std::vector<int> attempts_seen;  // written by one item thread at a time (one item)

 private:
  const int failures_;
};

// Runs until its cancellation is requested (as a well-behaved C++ job does).
class CancellableJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    // Registered before mu_ is taken: a request runs the callback under the cancellation's
    // lock, and the callback takes mu_ (the other order could deadlock; TSan reported it).
    uint64_t id = ctx.cancellation->OnRequest([this] {
      std::lock_guard<std::mutex> g(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> l(mu_);
    ++started_;
    cv_.notify_all();
    cv_.wait(l, [&] { return ctx.cancelled(); });
    l.unlock();
    ctx.cancellation->Unregister(id);
  }
  bool WaitStarted(int n) { return WaitStartedFor(n, 20s); }
  bool WaitStartedFor(int n, std::chrono::milliseconds bound) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, bound, [&] { return started_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;
};

TEST(FixedRateTest, FiresOnTheClustersCommonInstants) {
  const auto epoch = std::chrono::system_clock::time_point{};
  EXPECT_EQ(FixedRateNextFireAfter(epoch + 1ms, 30s), epoch + 30s);
  EXPECT_EQ(FixedRateNextFireAfter(epoch + 30s, 30s), epoch + 60s);  // strictly after
  EXPECT_EQ(FixedRateNextFireAfter(epoch + 29'999ms, 30s), epoch + 30s);
  EXPECT_EQ(FixedRateNextFireAfter(epoch - 1ms, 30s), epoch);  // before the anchor too
  const auto anchor = epoch + 7s;
  EXPECT_EQ(FixedRateNextFireAfter(epoch + 8s, 1500ms, anchor), epoch + 8500ms);
  auto times = FixedRateNextFireTimes(epoch + 1s, 1500ms, 3);
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[0], epoch + 1500ms);
  EXPECT_EQ(times[2], epoch + 4500ms);
  // Sub-millisecond ticks do not give a fire time at or before `after`.
  auto after = epoch + 30s + std::chrono::microseconds(1);
  EXPECT_EQ(FixedRateNextFireAfter(after, 30s), epoch + 60s);
}

TEST_F(ExecutionControlTest, FixedRateRunsAtTheSameInstantsOnEveryInstance) {
  auto r1 = Session(), r2 = Session();
  auto job1 = std::make_shared<GateJob>(), job2 = std::make_shared<GateJob>();
  auto config = *Base(2).FixedRate(3s).Build();
  ScheduleJobBootstrap b1(*r1, job1, config, Options("10.0.0.1"));
  ScheduleJobBootstrap b2(*r2, job2, config, Options("10.0.0.2"));
  ASSERT_TRUE(b1.Schedule().ok());
  clock_.Advance(1s);  // the second instance starts a second later: same fire instants
  ASSERT_TRUE(b2.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 2)) << DumpTree(*r1, "/job");  // both in the sharding
  // Fire after fire until both items have run: a resharding that races a fire (an
  // instance's registration seen late) is written for the next fire, and the item of the
  // instance waiting for it runs then (docs/runtime.md, sharding).
  bool both = false;
  for (int fire = 0; fire < 4 && !both; ++fire) {
    for (int i = 0; i < 3; ++i) clock_.Advance(1s);
    both = rec_.Wait([](const auto& runs, const auto&) { return runs.size() >= 2; },
                     fire < 3 ? 5s : 20s);
  }
  ASSERT_TRUE(both) << rec_.Dump();
  for (const auto& r : rec_.runs()) {
    ASSERT_TRUE(r.fire_time.has_value()) << rec_.Dump();
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(r.fire_time->time_since_epoch())
            .count();
    EXPECT_EQ(ms % 3000, 0) << rec_.Dump();  // the epoch-aligned instants, not each start's
  }
}

// The fire `delay/next` names now (registry ms), 0 when none.
int64_t NextDelayFire(RegistryCenter& reg) {
  auto children = reg.GetChildrenKeysDirectly("/job/delay/next");
  if (!children.ok() || children->size() != 1) return 0;
  return std::stoll(children->front());
}

int64_t Ms(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

TEST_F(ExecutionControlTest, FixedDelayWaitsForTheSlowestInstancesItemThenTheDelay) {
  auto r1 = Session(), r2 = Session();
  auto job1 = std::make_shared<GateJob>(), job2 = std::make_shared<GateJob>();
  auto config = *Base(2).FixedDelay(10s).Build();
  ScheduleJobBootstrap b1(*r1, job1, config, Options("10.0.0.1"));
  ASSERT_TRUE(b1.Schedule().ok());
  // The first fire is the job's start: written by the first instance, at the registry's now.
  const int64_t first = NextDelayFire(*r1);
  EXPECT_EQ(first, Ms(clock_.WallNow()));
  ASSERT_TRUE(job1->WaitStarted(2));  // alone in the sharding: both items
  ScheduleJobBootstrap b2(*r2, job2, config, Options("10.0.0.2"));
  ASSERT_TRUE(b2.Schedule().ok());  // joins a fire already begun: its part is over at once
  ASSERT_TRUE(WaitRegistry(*r1, [&] { return NextDelayFire(*r1) == first + 10'000; }))
      << DumpTree(*r1, "/job");
  // The leader shards the two instances at the next fire: one item each.
  job1->Close();  // from now on the first instance's item runs until released
  clock_.Advance(10s);
  ASSERT_TRUE(job1->WaitStarted(3));
  ASSERT_TRUE(job2->WaitStarted(1));
  const int64_t second = first + 10'000;
  ASSERT_TRUE(WaitRegistry(*r1, [&] {
    return r1->GetDirectly("/job/delay/ended/" + Id("10.0.0.2")).value_or("") ==
           std::to_string(second);
  }));
  // The quick item's end does not end the fire: the slow one still runs.
  clock_.Advance(30s);
  EXPECT_EQ(NextDelayFire(*r1), second) << DumpTree(*r1, "/job");
  EXPECT_EQ(job2->started(), 1);
  EXPECT_EQ(job1->started(), 3);
  const int64_t slow_end = Ms(clock_.WallNow());
  job1->Release();
  ASSERT_TRUE(WaitRegistry(*r1, [&] { return NextDelayFire(*r1) != second; }));
  EXPECT_EQ(NextDelayFire(*r1), slow_end + 10'000);  // the delay counts from the slowest end
  clock_.Advance(9s);
  EXPECT_EQ(job2->started(), 1);  // not before the delay
  clock_.Advance(1s);
  ASSERT_TRUE(job1->WaitStarted(4));
  ASSERT_TRUE(job2->WaitStarted(2));
  b1.Shutdown();
  b2.Shutdown();
}

TEST_F(ExecutionControlTest, ACppItemIgnoringItsCancellationIsReportedFailedAtTheTimeout) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  auto metrics = Metrics::Create();
  BootstrapOptions options = Options("10.0.0.1");
  options.metrics = metrics;
  ScheduleJobBootstrap boot(*reg, job, *Base(1).Cron("* * * * * ?").TimeoutMs(500).Build(),
                            options);
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1));
  clock_.Advance(500ms);
  ASSERT_TRUE(rec_.WaitRuns(1)) << rec_.Dump();
  auto runs = rec_.runs();
  EXPECT_FALSE(runs[0].success);
  EXPECT_EQ(runs[0].error, "timeout after 500 ms");
  EXPECT_EQ(job->started(), 1);  // still blocked: its thread runs on
  EXPECT_EQ(metrics::JobMetricsOf(metrics, "job")->timeouts.value(), 1u);
  job->Release();
  boot.Shutdown();
}

TEST_F(ExecutionControlTest, AHangingScriptIsEndedAtTheTimeout) {
  auto reg = Session();
  JobConfiguration c = *Base(1).Cron("* * * * * ?").TimeoutMs(300).Build();
  c.props["script.command.line"] = "/bin/sh -c 'sleep 30'";
  ScheduleJobBootstrap boot(*reg, "SCRIPT", c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  // The attempt's timer is armed before the command starts; advancing until the report
  // comes covers the command's start on the item thread.
  bool reported = false;
  for (int i = 0; i < 100 && !reported; ++i) {
    clock_.Advance(300ms);
    reported = rec_.Wait([](const auto& runs, const auto&) { return !runs.empty(); }, 50ms);
  }
  ASSERT_TRUE(reported) << rec_.Dump();
  EXPECT_FALSE(rec_.runs()[0].success);
  EXPECT_EQ(rec_.runs()[0].error, "timeout after 300 ms");
  boot.Shutdown();  // returns: the group was ended (SIGTERM), so the item thread is free
}

TEST_F(ExecutionControlTest, AFailingItemIsRetriedThenCountedFailedOnce) {
  auto reg = Session();
  auto job = std::make_shared<FlakyJob>(/*failures=*/100);
  auto metrics = Metrics::Create();
  BootstrapOptions options = Options("10.0.0.1");
  options.metrics = metrics;
  ScheduleJobBootstrap boot(*reg, job, *Base(1).Cron("0 0 0 1 1 ? 2099").MaxRetries(2).Build(),
                            options);
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  ASSERT_TRUE(rec_.WaitRuns(1)) << rec_.Dump();
  EXPECT_EQ(job->calls.load(), 3);
  EXPECT_EQ(job->attempts_seen, (std::vector<int>{1, 2, 3}));
  auto runs = rec_.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].success);
  EXPECT_EQ(runs[0].error, "boom (attempt 3 of 3)");
  auto recorded = metrics::JobMetricsOf(metrics, "job");
  EXPECT_EQ(recorded->runs_failed.value(), 1u);
  EXPECT_EQ(recorded->runs_succeeded.value(), 0u);
}

TEST_F(ExecutionControlTest, ARetryThatSucceedsCountsTheItemSucceeded) {
  auto reg = Session();
  auto job = std::make_shared<FlakyJob>(/*failures=*/1);
  ScheduleJobBootstrap boot(
      *reg, job, *Base(1).Cron("0 0 0 1 1 ? 2099").MaxRetries(3).RetryIntervalMs(200).Build(),
      Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  // An operator trigger; its report comes after the run, which waits for the retry.
  ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  // The retry waits for its interval on the simulated clock: not before it.
  bool reported = false;
  for (int i = 0; i < 100 && !reported; ++i) {
    EXPECT_LE(job->calls.load(), 2);
    clock_.Advance(200ms);
    reported = rec_.Wait([](const auto& runs, const auto&) { return !runs.empty(); }, 50ms);
  }
  ASSERT_TRUE(reported);
  EXPECT_EQ(job->calls.load(), 2);
  EXPECT_TRUE(rec_.runs()[0].success);
}

TEST_F(ExecutionControlTest, AFailoverRunContinuesFromTheCrashedInstancesAttemptCount) {
  auto ra = Session(), rb = Session();
  auto job_a = std::make_shared<FlakyJob>(/*failures=*/100);
  auto job_b = std::make_shared<FlakyJob>(/*failures=*/100);
  auto config = *Base(1)
                     .Cron("0 0 0 1 1 ? 2099")
                     .Failover(true)
                     .MaxRetries(3)
                     .RetryIntervalMs(10'000)
                     .Build();
  BootstrapOptions crashing = Options("10.0.0.1");
  crashing.shutdown_timeout = 100ms;  // its retry still waits when it is shut down at the end
  auto a = std::make_unique<ScheduleJobBootstrap>(*ra, job_a, config, crashing);
  ASSERT_TRUE(a->Schedule().ok());
  ASSERT_TRUE(ra->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
  // Attempt 1 fails at once, attempt 2 after the interval: two failed, a retry waiting.
  ASSERT_TRUE(WaitRegistry(*ra, [&] { return ra->Get("/job/attempts/0").value_or("") == "1"; }))
      << DumpTree(*ra, "/job");
  clock_.Advance(10s);
  ASSERT_TRUE(WaitRegistry(*ra, [&] { return ra->Get("/job/attempts/0").value_or("") == "2"; }))
      << DumpTree(*ra, "/job");
  ScheduleJobBootstrap b(*rb, job_b, config, Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  ra->Close();  // A crashes while its item waits for attempt 3
  // B takes the item over and fails attempt 3 (recorded as it waits for its retry).
  ASSERT_TRUE(WaitRegistry(*rb, [&] { return rb->Get("/job/attempts/0").value_or("") == "3"; }))
      << rec_.Dump() << DumpTree(*rb, "/job");
  clock_.Advance(10s);
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    for (const auto& r : runs) {
      if (r.failover && r.instance_id == Id("10.0.0.2")) return true;
    }
    return false;
  })) << rec_.Dump()
      << DumpTree(*rb, "/job");
  EXPECT_EQ(job_b->attempts_seen, (std::vector<int>{3, 4}));  // not 1..4 again
  ItemRunReport taken;
  for (const auto& r : rec_.runs()) {
    if (r.failover) taken = r;
  }
  EXPECT_FALSE(taken.success);
  EXPECT_EQ(taken.error, "boom (attempt 4 of 4)");
  EXPECT_FALSE(rb->IsExisted("/job/attempts/0").value_or(true));  // the count ends with it
  b.Shutdown();
  a.reset();
}

// Fails every call. Tells its calls, and its destruction (when its last holder, the job's
// runtime, lets go of it), through a state the test keeps.
class FailingJob final : public SimpleJob {
 public:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int calls = 0;           // guarded by mu
    bool destroyed = false;  // guarded by mu
    // Waits (bounded) until `ready` holds, under mu.
    bool Wait(const std::function<bool()>& ready) {
      std::unique_lock<std::mutex> l(mu);
      return cv.wait_for(l, 20s, ready);
    }
  };
  explicit FailingJob(std::shared_ptr<State> state) : state_(std::move(state)) {}
  ~FailingJob() override {
    std::lock_guard<std::mutex> l(state_->mu);
    state_->destroyed = true;
    state_->cv.notify_all();
  }
  void Execute(const ShardingContext&) override {
    {
      std::lock_guard<std::mutex> l(state_->mu);
      ++state_->calls;
      state_->cv.notify_all();
    }
    throw std::runtime_error("boom");
  }

 private:
  const std::shared_ptr<State> state_;
};

// A shutdown that gives up on a run waiting for its retry (the simulated clock never gets
// there) ends the wait: the run, the job's runtime and the shared timer on the test's clock
// go with the bootstrap. The wait used to hold them for good, and the timer went on reading
// the clock after its test had destroyed it (TSan: heap-use-after-free in the next test).
TEST_F(ExecutionControlTest, AShutdownThatGivesUpOnARunWaitingForItsRetryLetsGoOfIt) {
  auto reg = Session();
  auto state = std::make_shared<FailingJob::State>();
  auto config = *Base(1).Cron("0 0 0 1 1 ? 2099").MaxRetries(3).RetryIntervalMs(10'000).Build();
  BootstrapOptions options = Options("10.0.0.1");
  options.shutdown_timeout = 100ms;
  {
    ScheduleJobBootstrap boot(*reg, std::make_shared<FailingJob>(state), config, options);
    ASSERT_TRUE(boot.Schedule().ok());
    ASSERT_TRUE(reg->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok());
    ASSERT_TRUE(state->Wait([&] { return state->calls == 1; }));  // its retry waits 10 s
  }
  EXPECT_TRUE(state->Wait([&] { return state->destroyed; })) << "the job's runtime was kept";
  EXPECT_TRUE(state->Wait([&] { return state->calls == 1; })) << "the retry called the job";
  EXPECT_TRUE(rec_.runs().empty()) << rec_.Dump();  // nor was the item reported
}

TEST_F(ExecutionControlTest, StopCancelsTheRunningItemOnAnotherInstanceAndTheNextFireRuns) {
  auto r1 = Session(), r2 = Session(), ops = Session();
  auto job1 = std::make_shared<CancellableJob>(), job2 = std::make_shared<CancellableJob>();
  auto config = *Base(2).Cron("* * * * * ?").Build();
  ScheduleJobBootstrap b1(*r1, job1, config, Options("10.0.0.1"));
  ScheduleJobBootstrap b2(*r2, job2, config, Options("10.0.0.2"));
  ASSERT_TRUE(b1.Schedule().ok());
  ASSERT_TRUE(b2.Schedule().ok());
  // Both instances in the sharding before the fire (else the first may take both items).
  ASSERT_TRUE(WaitSettled(*r1, 2, 2)) << DumpTree(*r1, "/job");
  clock_.Advance(1s);
  ASSERT_TRUE(job1->WaitStarted(1));
  ASSERT_TRUE(job2->WaitStarted(1));
  // From a third session (the CLI's): only the item on 10.0.0.2 is asked.
  auto owner = ops->Get("/job/sharding/1/instance");
  ASSERT_TRUE(owner.ok());
  const std::string server = owner->substr(0, owner->find("@-@"));
  auto asked = NewJobOperateAPI(*ops)->Stop("job", server, 1);
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_EQ(*asked, 1);
  ASSERT_TRUE(rec_.WaitRuns(1)) << rec_.Dump();
  auto runs = rec_.runs();
  ASSERT_EQ(runs.size(), 1u) << rec_.Dump();  // the other instance's item runs on
  EXPECT_EQ(runs[0].item, 1);
  EXPECT_FALSE(runs[0].success);
  EXPECT_EQ(runs[0].error, "cancelled: stopped by an operator");
  // Stop every run (no item, no server): the other item ends too.
  ASSERT_TRUE(NewJobOperateAPI(*ops)->Stop("job", "", std::nullopt).ok());
  ASSERT_TRUE(rec_.WaitRuns(2)) << rec_.Dump();
  // The job is not disabled: the next fire runs both items again.
  clock_.Advance(1s);
  ASSERT_TRUE(job1->WaitStarted(2)) << rec_.Dump() << DumpTree(*r1, "/job") << "r2:\n"
                                    << DumpTree(*r2, "/job");
  ASSERT_TRUE(job2->WaitStarted(2));
  EXPECT_FALSE(NewJobOperateAPI(*ops)->Stop("nope", "", std::nullopt).ok());
  (void)NewJobOperateAPI(*ops)->Stop("job", "", std::nullopt);
  b1.Shutdown();
  b2.Shutdown();
}

TEST_F(ExecutionControlTest, AStopEndsOnlyItsItemAndAStopSeenLateLeavesTheNextFire) {
  auto reg = Session(), ops = Session();
  auto job = std::make_shared<CancellableJob>();
  ScheduleJobBootstrap boot(*reg, job, *Base(2).Cron("* * * * * ?").Build(), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(2));  // one run, both items here
  ASSERT_TRUE(NewJobOperateAPI(*ops)->Stop("job", "", 1).ok());
  ASSERT_TRUE(rec_.WaitRuns(1));
  ASSERT_EQ(rec_.runs()[0].item, 1) << rec_.Dump();  // item 0 runs on in the same run
  EXPECT_EQ(rec_.runs()[0].error, "cancelled: stopped by an operator");
  ASSERT_TRUE(NewJobOperateAPI(*ops)->Stop("job", "", std::nullopt).ok());
  ASSERT_TRUE(rec_.WaitRuns(2));
  EXPECT_EQ(rec_.runs()[1].item, 0) << rec_.Dump();
  // That stop's place in the order of writes, which the next fire's claim comes after.
  auto stop = ops->Get("/job/stop");
  ASSERT_TRUE(stop.ok());
  const std::string before = stop->substr(stop->find("before="));
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(4)) << rec_.Dump();
  // A stop written before this fire, seen by the instance only now: not this fire's.
  ASSERT_TRUE(ops->Persist("/job/stop", "id=1 " + before).ok());
  // Then item 1 is stopped: by then the late request was handled (one strand, in order).
  ASSERT_TRUE(NewJobOperateAPI(*ops)->Stop("job", "", 1).ok());
  ASSERT_TRUE(rec_.WaitRuns(3));
  auto runs = rec_.runs();
  ASSERT_EQ(runs.size(), 3u) << rec_.Dump();  // item 0 of this fire still runs
  EXPECT_EQ(runs[2].item, 1) << rec_.Dump();
  ASSERT_TRUE(NewJobOperateAPI(*ops)->Stop("job", "", std::nullopt).ok());
  ASSERT_TRUE(rec_.WaitRuns(4));
  boot.Shutdown();
}

// Fails the first multi-op that takes a run at a time (the delete of a `triggerAt` node).
class FailFirstRunAt final : public test_support::ForwardingRegistry {
 public:
  using ForwardingRegistry::ForwardingRegistry;
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    if (!ops.empty() && ops[0].type == TransactionOp::Type::kDelete &&
        ops[0].key.find("/triggerAt/") != std::string::npos && !failed_.exchange(true)) {
      return Status(StatusCode::kUnavailable, "connection loss (injected)");
    }
    return ForwardingRegistry::ExecuteInTransaction(ops);
  }
  std::atomic<bool> failed_{false};
};

TEST_F(ExecutionControlTest, ARunAtATimeWhoseMultiOpFailsIsTriedAgainNotLost) {
  auto inner = Session();
  FailFirstRunAt reg(*inner);
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(reg, job, *Base(1).Cron("0 0 0 1 1 ? 2099").Build(),
                            Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  auto name = NewJobOperateAPI(*inner)->TriggerAt("job", clock_.WallNow(), "again");
  ASSERT_TRUE(name.ok()) << name.status();
  // Due at once: the first try fails and leaves the node.
  ASSERT_TRUE(WaitRegistry(*inner, [&] { return reg.failed_.load(); }));
  EXPECT_TRUE(inner->IsExisted("/job/triggerAt/" + *name).value_or(false));
  EXPECT_EQ(job->started(), 0);
  // The retry is armed a second after the failure, on the item thread's schedule: advancing
  // until the run is reported covers its arming after the first advance.
  bool ran = false;
  for (int i = 0; i < 100 && !ran; ++i) {
    clock_.Advance(1s);
    ran = rec_.Wait([](const auto& runs, const auto&) { return !runs.empty(); }, 50ms);
  }
  ASSERT_TRUE(ran) << rec_.Dump();
  EXPECT_EQ(job->parameters(), (std::vector<std::string>{"again"}));
  EXPECT_FALSE(inner->IsExisted("/job/triggerAt/" + *name).value_or(true));
  boot.Shutdown();
}

TEST_F(ExecutionControlTest, ARunAtATimeRunsOnceWithItsParameterAfterItsWriterIsGone) {
  auto r1 = Session(), r2 = Session();
  auto job1 = std::make_shared<GateJob>(), job2 = std::make_shared<GateJob>();
  auto config = *Base(2).Cron("0 0 0 1 1 ? 2099").Build();
  ScheduleJobBootstrap b1(*r1, job1, config, Options("10.0.0.1"));
  ScheduleJobBootstrap b2(*r2, job2, config, Options("10.0.0.2"));
  ASSERT_TRUE(b1.Schedule().ok());
  ASSERT_TRUE(b2.Schedule().ok());
  {
    auto writer = Session();  // the CLI's session, closed before the time comes
    auto name = NewJobOperateAPI(*writer)->TriggerAt("job", clock_.WallNow() + 10s, "once");
    ASSERT_TRUE(name.ok()) << name.status();
    ASSERT_TRUE(WaitRegistry(
        *r1, [&] { return r1->IsExisted("/job/triggerAt/" + *name).value_or(false); }));
  }
  b1.Shutdown();  // one instance gone too: the other runs every item
  // The remaining instance has seen it go and, an idle leader, taken every item.
  ASSERT_TRUE(WaitSettled(*r2, 2, 1)) << DumpTree(*r2, "/job");
  clock_.Advance(5s);
  EXPECT_TRUE(rec_.runs().empty());  // not before its time
  clock_.Advance(5s);
  ASSERT_TRUE(rec_.WaitRuns(2)) << rec_.Dump();
  EXPECT_EQ(job2->parameters(), (std::vector<std::string>{"once", "once"}));
  EXPECT_TRUE(
      r2->GetChildrenKeys("/job/triggerAt").value_or(std::vector<std::string>{"?"}).empty());
  clock_.Advance(10s);
  EXPECT_EQ(job2->started(), 2);  // once
  EXPECT_EQ(NewJobOperateAPI(*r2)->TriggerAt("nope", clock_.WallNow()).status().code(),
            StatusCode::kNotFound);
  b2.Shutdown();
}

}  // namespace
}  // namespace elasticjob
