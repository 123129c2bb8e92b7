#include "failover/failover_service.h"

#include <gtest/gtest.h>

#include "reg/memory/memory_registry.h"

namespace elasticjob::failover {
namespace {

class FailoverServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Init().ok());
    ASSERT_TRUE(reg_.Persist("/job", "SCRIPT").ok());
    ASSERT_TRUE(reg_.Persist("/job/servers/10.0.0.1", "ENABLED").ok());
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(reg_.Persist("/job/sharding/" + std::to_string(i) + "/instance",
                               i < 2 ? kDead : kSurvivor)
                      .ok());
    }
  }
  static constexpr const char* kDead = "10.0.0.1@-@1";
  static constexpr const char* kSurvivor = "10.0.0.2@-@2";
  std::unique_ptr<reg::ComposedRegistry> registry_ =
      reg::NewMemoryRegistry(std::make_shared<reg::MemoryServer>(), "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  storage::JobNodeStorage storage_{reg_, "job"};
  FailoverService survivor_{storage_, kSurvivor};
};

TEST_F(FailoverServiceTest, CrashedItemsAreTheDeadInstancesItemsThatWereRunning) {
  ASSERT_TRUE(reg_.Persist("/job/sharding/0/running", kDead).ok());
  ASSERT_TRUE(reg_.Persist("/job/sharding/2/running", kSurvivor).ok());
  EXPECT_EQ(*survivor_.GetCrashedShardingItems(kDead), std::vector<int>{0});
  // A disabled server's instance ran nothing to take over.
  ASSERT_TRUE(reg_.Persist("/job/servers/10.0.0.1", "DISABLED").ok());
  EXPECT_TRUE(survivor_.GetCrashedShardingItems(kDead)->empty());
}

TEST_F(FailoverServiceTest, QueuedItemsAreClaimedOnePerRoundWithTheLayoutsNodes) {
  ASSERT_TRUE(reg_.Persist("/job/sharding/0/running", kDead).ok());
  ASSERT_TRUE(reg_.Persist("/job/sharding/1/running", kDead).ok());
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlag({0}, kDead).ok());
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlag({1}, kDead).ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/sharding/0/running"));  // the stale mark goes
  EXPECT_EQ(*reg_.GetChildrenKeys("/job/leader/failover/items"),
            (std::vector<std::string>{"1", "0"}));
  std::vector<int> claimed;
  ASSERT_TRUE(
      survivor_.FailoverIfNecessary([] { return true; }, [&](int i) { claimed.push_back(i); })
          .ok());
  EXPECT_EQ(claimed, (std::vector<int>{1, 0}));  // descending, as ElasticJob's get(0)
  EXPECT_TRUE(reg_.GetChildrenKeys("/job/leader/failover/items")->empty());
  EXPECT_EQ(*reg_.GetDirectly("/job/sharding/0/failover"), kSurvivor);
  EXPECT_EQ(*reg_.GetDirectly("/job/sharding/0/failovering"), kSurvivor);
  EXPECT_EQ(*survivor_.GetLocalFailoverItems(), (std::vector<int>{0, 1}));
  // The dead instance's own items are now taken off it.
  EXPECT_EQ(*FailoverService(storage_, kDead).GetLocalTakeOffItems({0, 1}),
            (std::vector<int>{0, 1}));
  // An item already taken is not queued again.
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlag({0}, kDead).ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/leader/failover/items/0"));
  ASSERT_TRUE(survivor_.UpdateFailoverComplete({0, 1}).ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/sharding/0/failover"));
  EXPECT_FALSE(*reg_.IsExisted("/job/sharding/1/failovering"));
}

TEST_F(FailoverServiceTest, ACrashedItemAnotherTakerAlreadyRunsIsNotQueuedAndItsMarkStays) {
  // The dead instance's item 0 was taken over a moment ago by another survivor, whose claim
  // wrote its own running mark; this survivor hears of the departure late (chaos
  // netns_partition: it queued the item again and deleted the taker's mark, and a second
  // taker then ran the item beside the first).
  constexpr const char* kTaker = "10.0.0.3@-@3";
  ASSERT_TRUE(reg_.Persist("/job/sharding/0/running", kTaker).ok());
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlag({0}, kDead).ok());
  EXPECT_EQ(reg_.GetDirectly("/job/sharding/0/running").value_or(""), kTaker);
  EXPECT_FALSE(*reg_.IsExisted("/job/leader/failover/items/0"));
  // So is one whose taker holds its failover node, before its mark is written.
  ASSERT_TRUE(reg_.Remove("/job/sharding/0/running").ok());
  ASSERT_TRUE(reg_.PersistEphemeral("/job/sharding/0/failover", kTaker).ok());
  ASSERT_TRUE(reg_.Persist("/job/sharding/1/running", kDead).ok());
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlag({0}, kDead).ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/leader/failover/items/0"));
  // The dead instance's own mark is still taken off, and its item queued.
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlag({1}, kDead).ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/sharding/1/running"));
  EXPECT_TRUE(*reg_.IsExisted("/job/leader/failover/items/1"));
}

TEST_F(FailoverServiceTest, AQueuedItemThatIsNotAnItemOfTheJobIsNotClaimed) {
  // Found reviewing the values registry_values_fuzzer writes: leader/failover/items/99999 (by
  // hand or left from an old total) was claimed, creating sharding/99999 and running item
  // 99999 of a 4-item job.
  ASSERT_TRUE(reg_.Persist("/job/leader/failover/items/99999", "").ok());
  ASSERT_TRUE(reg_.Persist("/job/leader/failover/items/x", "").ok());
  std::vector<int> claimed;
  ASSERT_TRUE(
      survivor_.FailoverIfNecessary([] { return true; }, [&](int i) { claimed.push_back(i); })
          .ok());
  EXPECT_TRUE(claimed.empty());
  EXPECT_FALSE(*reg_.IsExisted("/job/sharding/99999"));
  EXPECT_TRUE(survivor_.GetLocalFailoverItems()->empty());
}

TEST_F(FailoverServiceTest, ClaimingStopsWhenAskedAndFailoverOffRemovesEverything) {
  ASSERT_TRUE(survivor_.SetCrashedFailoverFlagDirectly(3).ok());
  int calls = 0;
  ASSERT_TRUE(survivor_.FailoverIfNecessary([] { return false; }, [&](int) { ++calls; }).ok());
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(*survivor_.NeedFailover());
  ASSERT_TRUE(reg_.Persist("/job/sharding/2/failovering", kDead).ok());
  EXPECT_EQ(*survivor_.GetFailoveringItems(kDead), std::vector<int>{2});
  EXPECT_EQ((*survivor_.GetAllFailoveringItems()).at(2), kDead);
  ASSERT_TRUE(survivor_.RemoveFailoverInfo().ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/sharding/2/failovering"));
}

}  // namespace
}  // namespace elasticjob::failover
