// A run its coordinator left (`/{job}/task/run` names it, its instance is gone) is taken up by
// the new leader at once, without waiting for a trigger (issue 31, item 7): with the shared
// store it triggers itself and resumes; what cannot be resumed is a WARN for the operator.
// memory:// registry; the shared store's URL points where nothing listens (the resumed run's
// store fails to open, which is beside the point: the run started).
#include "task/task_runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "elasticjob/api/task_job.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "reg/memory/memory_registry.h"

namespace elasticjob::task {
namespace {

class Numbers final : public MapReduceJob {
 public:
  TaskResult Process(TaskContext& ctx) override {
    if (ctx.IsRootTask()) return {ctx.Map({{"1"}, {"2"}}, "N").ok(), ""};
    return {true, ctx.payload()};
  }
  void Reduce(TaskContext&, const SubtaskResults&) override {}
};

class Hello final : public BroadcastJob {
 public:
  TaskResult Process(TaskContext&) override { return {true, ""}; }
};

constexpr const char* kStore = "postgresql://u@127.0.0.1:1/nowhere";
constexpr const char* kLeft = "left@10.9.9.9@-@4242@1700000000000";  // a coordinator gone

TEST(TaskRuntimeTest, TheNewLeaderResumesARunItsCoordinatorLeftWithoutATrigger) {
  auto reg = NewRegistryCenter("memory://task_left_run");
  ASSERT_TRUE(reg.ok());
  ASSERT_TRUE((*reg)->Init().ok());
  // The killed coordinator's run is still named; nothing else of it is left.
  ASSERT_TRUE((*reg)->Persist("/left/task/run", kLeft).ok());
  std::mutex mu;
  std::condition_variable cv;
  int operator_runs = 0;
  BootstrapOptions options;
  options.server_ip = "10.0.0.1";
  options.task_store = kStore;
  options.on_trigger = [&](const TriggerReport& t) {
    std::lock_guard<std::mutex> lock(mu);
    if (t.source == TriggerReport::Source::kOperator) ++operator_runs;
    cv.notify_all();
  };
  auto config = JobConfiguration::Builder("left", 1).Failover(false).Build();
  ASSERT_TRUE(config.ok());
  OneOffJobBootstrap bootstrap(**reg, std::make_shared<Numbers>(), *config, options);
  ASSERT_TRUE(bootstrap.Start().ok());  // leads: the only instance
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return operator_runs >= 1; }))
      << "the left run waits for a trigger";
  lock.unlock();
  bootstrap.Shutdown();
}

class DecideLeftRunTest : public ::testing::Test {
 protected:
  // A runtime (not started: the decision reads only the registry) that leads the job.
  std::unique_ptr<TaskRuntime> Leader(std::shared_ptr<TaskJob> job, bool failover,
                                      std::string store) {
    auto config = JobConfiguration::Builder("left", 1).Failover(failover).Build();
    auto rt = std::make_unique<TaskRuntime>(reg_, std::move(job), *config, "10.0.0.1", "",
                                            std::move(store));
    EXPECT_TRUE(reg_.PersistEphemeral("/left/leader/election/instance", rt->instance_id()).ok());
    EXPECT_TRUE(reg_.PersistEphemeral("/left/instances/" + rt->instance_id(), "").ok());
    return rt;
  }
  TaskRuntime::LeftRun Decide(TaskRuntime& rt) {
    std::string run;
    return rt.DecideLeftRun(&run);
  }

  std::shared_ptr<reg::MemoryServer> server_ = std::make_shared<reg::MemoryServer>();
  std::unique_ptr<reg::ComposedRegistry> registry_ = reg::NewMemoryRegistry(server_, "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  void SetUp() override {
    ASSERT_TRUE(reg_.Init().ok());
    ASSERT_TRUE(reg_.Persist("/left/task/run", kLeft).ok());
  }
};

TEST_F(DecideLeftRunTest, TheSharedStoreResumesItByATriggerOfItsOwn) {
  auto rt = Leader(std::make_shared<Numbers>(), false, kStore);
  std::string run;
  EXPECT_EQ(rt->DecideLeftRun(&run), TaskRuntime::LeftRun::kTrigger);
  EXPECT_EQ(run, kLeft);
}

TEST_F(DecideLeftRunTest, WhatTheStoreCannotResumeIsAWarningForTheOperator) {
  EXPECT_EQ(Decide(*Leader(std::make_shared<Numbers>(), false, "")), TaskRuntime::LeftRun::kWarn);
  EXPECT_EQ(Decide(*Leader(std::make_shared<Hello>(), false, kStore)), TaskRuntime::LeftRun::kWarn);
}

TEST_F(DecideLeftRunTest, NothingIsDoneWhileItsCoordinatorLivesOrByAFollowerOrWithFailover) {
  auto rt = Leader(std::make_shared<Numbers>(), false, kStore);
  ASSERT_TRUE(reg_.PersistEphemeral("/left/instances/10.9.9.9@-@4242", "").ok());
  EXPECT_EQ(Decide(*rt), TaskRuntime::LeftRun::kNone) << "its coordinator still runs it";
  ASSERT_TRUE(reg_.Remove("/left/instances/10.9.9.9@-@4242").ok());
  ASSERT_TRUE(reg_.Persist("/left/leader/election/instance", "10.0.0.2@-@1").ok());
  EXPECT_EQ(Decide(*rt), TaskRuntime::LeftRun::kNone) << "the leader's to do";
  EXPECT_EQ(Decide(*Leader(std::make_shared<Numbers>(), true, kStore)), TaskRuntime::LeftRun::kNone)
      << "the failover of the item runs it";
}

TEST_F(DecideLeftRunTest, ARunOfItsOwnIsNotTakenForALeftOne) {
  auto rt = Leader(std::make_shared<Numbers>(), false, kStore);
  ASSERT_TRUE(reg_.Persist("/left/task/run", "left@" + rt->instance_id() + "@1700000000000").ok());
  EXPECT_EQ(Decide(*rt), TaskRuntime::LeftRun::kNone);
}

}  // namespace
}  // namespace elasticjob::task
