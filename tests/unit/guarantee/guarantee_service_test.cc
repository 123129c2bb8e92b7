#include "guarantee/guarantee_service.h"

#include <gtest/gtest.h>

#include "elasticjob/simulated_clock.h"
#include "reg/memory/memory_registry.h"

namespace elasticjob::guarantee {
namespace {

class GuaranteeServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Init().ok());
    ASSERT_TRUE(reg_.Persist("/job", "CPP_SIMPLE").ok());
  }
  SimulatedClock clock_{Clock::WallTime{} + std::chrono::seconds(1'795'305'600)};
  std::shared_ptr<reg::MemoryServer> server_ = std::make_shared<reg::MemoryServer>(clock_);
  std::unique_ptr<reg::ComposedRegistry> registry_ = reg::NewMemoryRegistry(server_, "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  storage::JobNodeStorage storage_{reg_, "job"};
  GuaranteeService guarantee_{storage_};
};

TEST_F(GuaranteeServiceTest, ItemsRegisterAsPersistentEmptyNodesUnderThePhase) {
  ASSERT_TRUE(guarantee_.Register(Phase::kStarted, {0, 2}).ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/guarantee/started/0"), "");
  EXPECT_TRUE(*guarantee_.IsRegistered(Phase::kStarted, 2));
  EXPECT_FALSE(*guarantee_.IsRegistered(Phase::kStarted, 1));
  EXPECT_FALSE(*guarantee_.IsRegistered(Phase::kCompleted, 0));
  EXPECT_FALSE(*guarantee_.IsAll(Phase::kStarted, 3));
  ASSERT_TRUE(guarantee_.Register(Phase::kStarted, {1}).ok());
  EXPECT_TRUE(*guarantee_.IsAll(Phase::kStarted, 3));
  EXPECT_FALSE(*guarantee_.IsAll(Phase::kCompleted, 3));  // absent root: not all
}

TEST_F(GuaranteeServiceTest, TheLastThroughTheLatchRunsTheHookOnceAndEveryOneClears) {
  ASSERT_TRUE(guarantee_.Register(Phase::kCompleted, {0, 1}).ok());
  int runs = 0;
  auto first = guarantee_.ExecuteInLeaderForLast(Phase::kCompleted, 2, [&] { ++runs; });
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*reg_.IsExisted("/job/guarantee/completed"));
  // A second instance that also saw all of them gets there after the clear: no hook.
  auto second = guarantee_.ExecuteInLeaderForLast(Phase::kCompleted, 2, [&] { ++runs; });
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_EQ(runs, 1);
}

TEST_F(GuaranteeServiceTest, ClearRemovesOnlyItsPhase) {
  ASSERT_TRUE(guarantee_.Register(Phase::kStarted, {0}).ok());
  ASSERT_TRUE(guarantee_.Register(Phase::kCompleted, {0}).ok());
  ASSERT_TRUE(guarantee_.Clear(Phase::kStarted).ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/guarantee/started"));
  EXPECT_TRUE(*reg_.IsExisted("/job/guarantee/completed/0"));
  EXPECT_TRUE(guarantee_.Clear(Phase::kStarted).ok());  // absent: fine
}

}  // namespace
}  // namespace elasticjob::guarantee
