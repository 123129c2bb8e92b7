#include "elasticjob/sharding/job_sharding_strategy.h"

#include <gtest/gtest.h>

#include "elasticjob/simulated_clock.h"
#include "infra/java_string.h"

namespace elasticjob {
namespace {

using Plan = std::vector<ShardingAssignment>;

class JobShardingStrategyTest : public ::testing::Test {
 protected:
  Plan Shard(const std::string& type, const std::vector<std::string>& instances,
             const std::string& job, int items) {
    auto s = registry_.Find(type);
    EXPECT_TRUE(s.ok()) << s.status();
    return (*s)->Sharding(instances, job, items);
  }

  SimulatedClock clock_{Clock::WallTime{} + std::chrono::milliseconds(1000)};
  JobShardingStrategyRegistry registry_ = JobShardingStrategyRegistry::WithBuiltins(clock_);
  const std::vector<std::string> hosts_ = {"host0", "host1", "host2"};
};

TEST_F(JobShardingStrategyTest, AverageAllocationGivesTheRemainderToTheFirstInstances) {
  EXPECT_EQ(Shard("AVG_ALLOCATION", hosts_, "j", 8),
            (Plan{{"host0", {0, 1, 6}}, {"host1", {2, 3, 7}}, {"host2", {4, 5}}}));
  EXPECT_EQ(Shard("AVG_ALLOCATION", hosts_, "j", 10),
            (Plan{{"host0", {0, 1, 2, 9}}, {"host1", {3, 4, 5}}, {"host2", {6, 7, 8}}}));
  EXPECT_EQ(Shard("AVG_ALLOCATION", hosts_, "j", 9),
            (Plan{{"host0", {0, 1, 2}}, {"host1", {3, 4, 5}}, {"host2", {6, 7, 8}}}));
}

TEST_F(JobShardingStrategyTest, AverageAllocationWithFewerItemsThanInstances) {
  EXPECT_EQ(Shard("AVG_ALLOCATION", hosts_, "j", 2),
            (Plan{{"host0", {0}}, {"host1", {1}}, {"host2", {}}}));
  EXPECT_TRUE(Shard("AVG_ALLOCATION", {}, "j", 3).empty());
}

TEST_F(JobShardingStrategyTest, EmptyTypeMeansAverageAllocation) {
  EXPECT_EQ(Shard("", hosts_, "j", 8), Shard("AVG_ALLOCATION", hosts_, "j", 8));
}

TEST_F(JobShardingStrategyTest, LeaderSortsInstanceIdsDescending) {
  EXPECT_EQ(SortInstancesAsLeader({"a", "c", "b"}), (std::vector<std::string>{"c", "b", "a"}));
  // zk-layout.md: AVG_ALLOCATION of 8 items over ids a, b, c gives c=[0,1,6] b=[2,3,7] a=[4,5].
  EXPECT_EQ(Shard("AVG_ALLOCATION", SortInstancesAsLeader({"a", "b", "c"}), "j", 8),
            (Plan{{"c", {0, 1, 6}}, {"b", {2, 3, 7}}, {"a", {4, 5}}}));
}

TEST_F(JobShardingStrategyTest, OdevityReversesForEvenHashes) {
  // "1".hashCode() = 49 (odd): list order kept.
  EXPECT_EQ(Shard("ODEVITY", hosts_, "1", 2),
            (Plan{{"host0", {0}}, {"host1", {1}}, {"host2", {}}}));
  // "0".hashCode() = 48 (even): reversed.
  EXPECT_EQ(Shard("ODEVITY", hosts_, "0", 2),
            (Plan{{"host2", {0}}, {"host1", {1}}, {"host0", {}}}));
}

TEST_F(JobShardingStrategyTest, RoundRobinRotatesByHash) {
  EXPECT_EQ(Shard("ROUND_ROBIN", hosts_, "1", 2),
            (Plan{{"host1", {0}}, {"host2", {1}}, {"host0", {}}}));
  EXPECT_EQ(Shard("ROUND_ROBIN", hosts_, "2", 2),
            (Plan{{"host2", {0}}, {"host0", {1}}, {"host1", {}}}));
  EXPECT_EQ(Shard("ROUND_ROBIN", hosts_, "3", 2),
            (Plan{{"host0", {0}}, {"host1", {1}}, {"host2", {}}}));
}

TEST_F(JobShardingStrategyTest, HashesNonAsciiNamesAsJavaDoes) {
  // "订单同步" hashes over UTF-16 units; the rotation follows Java's value, not a UTF-8 hash.
  int32_t h = infra::JavaStringHashCode("订单同步");
  int offset = infra::JavaAbsMod(h, 3);
  Plan plan = Shard("ROUND_ROBIN", hosts_, "订单同步", 3);
  EXPECT_EQ(plan[0].instance_id, hosts_[static_cast<size_t>(offset)]);
  Plan odevity = Shard("ODEVITY", hosts_, "😀", 3);
  EXPECT_EQ(odevity[0].instance_id, infra::JavaStringHashCode("😀") % 2 == 0 ? "host2" : "host0");
}

TEST_F(JobShardingStrategyTest, RoundRobinIsDefinedWhereJavaAbsOverflows) {
  // "polygenelubricants".hashCode() == Integer.MIN_VALUE: Java's Math.abs stays negative and
  // its rotation throws; we rotate by 2^31 % n.
  Plan plan = Shard("ROUND_ROBIN", hosts_, "polygenelubricants", 3);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].instance_id, hosts_[2147483648LL % 3]);
}

TEST_F(JobShardingStrategyTest, SingleShardingBalanceMovesWithTheClock) {
  std::set<std::string> owners;
  for (int i = 0; i < 3; ++i) {
    Plan plan = Shard("SINGLE_SHARDING_BALANCE", hosts_, "single", 1);
    ASSERT_EQ(plan.size(), 3u);
    owners.insert(plan[0].instance_id);
    EXPECT_EQ(plan[0].items, std::vector<int>{0});
    clock_.Advance(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(owners.size(), 3u);  // consecutive milliseconds rotate through every instance
}

class ReverseStrategy final : public JobShardingStrategy {
 public:
  std::string type() const override { return "REVERSE"; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view, int total) const override {
    Plan plan;
    for (auto it = instances.rbegin(); it != instances.rend(); ++it) plan.push_back({*it, {}});
    for (int i = 0; i < total && !plan.empty(); ++i) plan[0].items.push_back(i);
    return plan;
  }
};

TEST_F(JobShardingStrategyTest, CustomStrategiesRegisterByName) {
  ASSERT_TRUE(registry_.Register(std::make_unique<ReverseStrategy>()).ok());
  EXPECT_EQ(Shard("REVERSE", hosts_, "j", 2)[0], (ShardingAssignment{"host2", {0, 1}}));
  Status dup = registry_.Register(std::make_unique<ReverseStrategy>());
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(registry_.types(),
            (std::vector<std::string>{"AVG_ALLOCATION", "ODEVITY", "REVERSE", "ROUND_ROBIN",
                                      "SINGLE_SHARDING_BALANCE"}));
}

TEST_F(JobShardingStrategyTest, UnknownStrategyNamesTheTypeAndTheKnownOnes) {
  auto s = registry_.Find("RANDOM");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("jobShardingStrategyType: unknown strategy 'RANDOM'"),
            std::string::npos);
  EXPECT_NE(s.status().message().find("ROUND_ROBIN"), std::string::npos);
}

}  // namespace
}  // namespace elasticjob
