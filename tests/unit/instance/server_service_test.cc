#include "instance/server_service.h"

#include <gtest/gtest.h>

#include "instance/instance_service.h"
#include "reg/memory/memory_registry.h"

namespace elasticjob::server {
namespace {

class ServerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Init().ok()); }
  std::unique_ptr<reg::ComposedRegistry> registry_ =
      reg::NewMemoryRegistry(std::make_shared<reg::MemoryServer>(), "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  storage::JobNodeStorage storage_{reg_, "job"};
  ServerService servers_{storage_, "10.0.0.1"};
  instance::InstanceService instances_{storage_, servers_,
                                       instance::JobInstance::For("10.0.0.1", 7)};
};

TEST_F(ServerServiceTest, WritesExactlyEnabledOrDisabled) {
  ASSERT_TRUE(servers_.PersistOnline(true).ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  ASSERT_TRUE(servers_.PersistOnline(false).ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.1"), "DISABLED");
  EXPECT_FALSE(*servers_.IsEnableServer("10.0.0.1"));
  EXPECT_FALSE(*servers_.IsEnableServer("10.0.0.99"));  // unknown server
}

TEST_F(ServerServiceTest, AvailableMeansEnabledWithALiveInstance) {
  ASSERT_TRUE(servers_.PersistOnline(true).ok());
  EXPECT_FALSE(*servers_.IsAvailableServer("10.0.0.1"));
  EXPECT_FALSE(*servers_.HasAvailableServers());
  ASSERT_TRUE(instances_.PersistOnline().ok());
  EXPECT_TRUE(*servers_.IsAvailableServer("10.0.0.1"));
  EXPECT_TRUE(*servers_.HasAvailableServers());
  ASSERT_TRUE(servers_.PersistOnline(false).ok());
  EXPECT_FALSE(*servers_.HasAvailableServers());
}

TEST_F(ServerServiceTest, InstanceNodeAndAvailableInstancesInLeaderOrder) {
  ASSERT_TRUE(servers_.PersistOnline(true).ok());
  ASSERT_TRUE(instances_.PersistOnline().ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/instances/10.0.0.1@-@7"),
            "jobInstanceId: 10.0.0.1@-@7\nserverIp: 10.0.0.1\n");
  ASSERT_TRUE(reg_.Persist("/job/servers/10.0.0.2", "ENABLED").ok());
  ASSERT_TRUE(reg_.PersistEphemeral("/job/instances/10.0.0.2@-@9", "").ok());
  ASSERT_TRUE(reg_.Persist("/job/servers/10.0.0.3", "DISABLED").ok());
  ASSERT_TRUE(reg_.PersistEphemeral("/job/instances/10.0.0.3@-@1", "").ok());
  EXPECT_EQ(*instances_.GetAvailableJobInstances(),
            (std::vector<std::string>{"10.0.0.2@-@9", "10.0.0.1@-@7"}));
  ASSERT_TRUE(instances_.RemoveInstance().ok());
  EXPECT_FALSE(*instances_.IsLocalJobInstanceExisted());
}

}  // namespace
}  // namespace elasticjob::server
