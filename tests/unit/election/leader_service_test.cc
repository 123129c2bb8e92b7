#include "election/leader_service.h"

#include <gtest/gtest.h>

#include <thread>

#include "reg/memory/memory_registry.h"

namespace elasticjob::election {
namespace {

struct Instance {
  Instance(std::shared_ptr<reg::MemoryServer> server, const std::string& id)
      : registry(reg::NewMemoryRegistry(std::move(server), "ns")),
        storage(reg, "job"),
        leader(storage, id) {
    EXPECT_TRUE(reg.Init().ok());
  }
  std::unique_ptr<reg::ComposedRegistry> registry;
  reg::ComposedRegistry& reg = *registry;
  storage::JobNodeStorage storage;
  LeaderService leader;
};

TEST(LeaderServiceTest, ElectsSelfWhenNoLeaderExists) {
  auto store = std::make_shared<reg::MemoryServer>();
  Instance a(store, "10.0.0.1@-@1");
  EXPECT_FALSE(*a.leader.HasLeader());
  ASSERT_TRUE(a.leader.ElectLeader().ok());
  EXPECT_TRUE(*a.leader.IsLeader());
  EXPECT_EQ(*a.reg.GetDirectly("/job/leader/election/instance"), "10.0.0.1@-@1");
}

TEST(LeaderServiceTest, ExactlyOneLeaderAmongConcurrentElections) {
  auto store = std::make_shared<reg::MemoryServer>();
  std::vector<std::unique_ptr<Instance>> all;
  for (int i = 0; i < 5; ++i)
    all.push_back(std::make_unique<Instance>(store, "h@-@" + std::to_string(i)));
  std::vector<std::thread> threads;
  for (auto& i : all) threads.emplace_back([&i] { EXPECT_TRUE(i->leader.ElectLeader().ok()); });
  for (auto& t : threads) t.join();
  int leaders = 0;
  for (auto& i : all) leaders += *i->leader.IsLeader() ? 1 : 0;
  EXPECT_EQ(leaders, 1);
}

TEST(LeaderServiceTest, ReElectionAfterTheLeaderSessionEnds) {
  auto store = std::make_shared<reg::MemoryServer>();
  Instance a(store, "a@-@1");
  Instance b(store, "b@-@2");
  ASSERT_TRUE(a.leader.ElectLeader().ok());
  ASSERT_TRUE(b.leader.ElectLeader().ok());
  EXPECT_FALSE(*b.leader.IsLeader());
  a.reg.Close();  // the leader's ephemeral node goes with its session
  EXPECT_FALSE(*b.leader.HasLeader());
  ASSERT_TRUE(b.leader.ElectLeader().ok());
  EXPECT_TRUE(*b.leader.IsLeader());
}

TEST(LeaderServiceTest, RemoveLeaderOnlyRemovesOurOwnLeadership) {
  auto store = std::make_shared<reg::MemoryServer>();
  Instance a(store, "a@-@1");
  Instance b(store, "b@-@2");
  ASSERT_TRUE(a.leader.ElectLeader().ok());
  ASSERT_TRUE(b.leader.RemoveLeader().ok());  // not b's to remove
  EXPECT_TRUE(*a.leader.IsLeader());
  ASSERT_TRUE(a.leader.RemoveLeader().ok());
  EXPECT_FALSE(*b.leader.HasLeader());
}

}  // namespace
}  // namespace elasticjob::election
