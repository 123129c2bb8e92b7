#include "reconcile/reconcile_service.h"

#include <gtest/gtest.h>

#include "elasticjob/simulated_clock.h"
#include "reg/memory/memory_registry.h"
#include "sharding/sharding_node.h"

namespace elasticjob::reconcile {
namespace {

using namespace std::chrono_literals;

class ReconcileServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Init().ok());
    auto c = JobConfiguration::Builder("job", 2).Cron("* * * * * ?").ReconcileIntervalMinutes(5);
    ASSERT_TRUE(config_.SetUp("SCRIPT", *c.Build()).ok());
    ASSERT_TRUE(servers_.PersistOnline(true).ok());
    ASSERT_TRUE(instances_.PersistOnline().ok());
    ASSERT_TRUE(leader_.ElectLeader().ok());
    ASSERT_TRUE(reg_.Persist("/job/sharding/0/instance", instances_.self().instance_id).ok());
    ASSERT_TRUE(reg_.Persist("/job/sharding/1/instance", "10.0.0.9@-@9").ok());  // gone
  }
  SimulatedClock clock_{Clock::WallTime{} + std::chrono::seconds(1'795'305'600)};
  std::unique_ptr<reg::ComposedRegistry> registry_ =
      reg::NewMemoryRegistry(std::make_shared<reg::MemoryServer>(clock_), "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  storage::JobNodeStorage storage_{reg_, "job"};
  config::ConfigService config_{storage_, clock_};
  server::ServerService servers_{storage_, "10.0.0.1"};
  instance::InstanceService instances_{storage_, servers_,
                                       instance::JobInstance::For("10.0.0.1", 1)};
  election::LeaderService leader_{storage_, instances_.self().instance_id};
  JobShardingStrategyRegistry strategies_ = JobShardingStrategyRegistry::WithBuiltins(clock_);
  storage::ChangeNotifier notifier_;
  sharding::ShardingService sharding_{storage_, config_,     leader_,  instances_,
                                      servers_, strategies_, notifier_};
  ReconcileService reconcile_{config_, leader_, sharding_, clock_};
};

TEST_F(ReconcileServiceTest, AnItemOwnedByAnOfflineInstanceReshardsOncePerInterval) {
  EXPECT_TRUE(*reconcile_.RunOneIteration());
  EXPECT_TRUE(*reg_.IsExisted("/job/leader/sharding/necessary"));
  ASSERT_TRUE(reg_.Remove("/job/leader/sharding/necessary").ok());
  clock_.Advance(4min);
  EXPECT_FALSE(*reconcile_.RunOneIteration());  // within the interval
  clock_.Advance(1min);
  EXPECT_TRUE(*reconcile_.RunOneIteration());
}

TEST_F(ReconcileServiceTest, NothingWhenConsistentPendingStaticOrNotLeading) {
  ASSERT_TRUE(reg_.Persist("/job/sharding/1/instance", instances_.self().instance_id).ok());
  EXPECT_FALSE(*reconcile_.RunOneIteration());
  ASSERT_TRUE(reg_.Persist("/job/sharding/1/instance", "10.0.0.9@-@9").ok());
  clock_.Advance(10min);
  ASSERT_TRUE(leader_.RemoveLeader().ok());
  EXPECT_FALSE(*reconcile_.RunOneIteration());  // only the leader reconciles
  EXPECT_FALSE(*reg_.IsExisted("/job/leader/sharding/necessary"));
}

}  // namespace
}  // namespace elasticjob::reconcile
