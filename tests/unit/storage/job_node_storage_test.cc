#include "storage/job_node_storage.h"

#include <gtest/gtest.h>

#include <memory>

#include "reg/memory/memory_registry.h"

namespace elasticjob::storage {
namespace {

class JobNodeStorageFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Init().ok());
    ASSERT_TRUE(reg_.Persist("/job", "CPP_SIMPLE").ok());
  }
  std::shared_ptr<reg::MemoryServer> server_ = std::make_shared<reg::MemoryServer>();
  std::unique_ptr<reg::ComposedRegistry> registry_ = reg::NewMemoryRegistry(server_, "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  JobNodeStorage storage_{reg_, "job"};
};

TEST_F(JobNodeStorageFillTest, FillJobNodesCreatesMissingNodesWithTheirParentsInOneGo) {
  ASSERT_TRUE(storage_
                  .FillJobNodes({{"servers/10.0.0.1", "ENABLED"},
                                 {"instances/10.0.0.1@-@7", "jobInstanceId: x", true},
                                 {"leader/sharding/necessary", ""}})
                  .ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  EXPECT_EQ(*reg_.GetDirectly("/job/instances/10.0.0.1@-@7"), "jobInstanceId: x");
  EXPECT_TRUE(*reg_.IsExisted("/job/leader/sharding/necessary"));
  // The instance is ephemeral: it goes with the session; the others stay.
  auto other_holder = reg::NewMemoryRegistry(server_, "ns");
  reg::ComposedRegistry& other = *other_holder;
  ASSERT_TRUE(other.Init().ok());
  reg_.Close();
  EXPECT_FALSE(*other.IsExisted("/job/instances/10.0.0.1@-@7"));
  EXPECT_TRUE(*other.IsExisted("/job/servers/10.0.0.1"));
  EXPECT_TRUE(*other.IsExisted("/job/leader/sharding/necessary"));
}

TEST_F(JobNodeStorageFillTest, FillJobNodesSetsNodesThatExistAndReplacesEphemeralOnes) {
  ASSERT_TRUE(reg_.Persist("/job/servers/10.0.0.1", "DISABLED").ok());
  ASSERT_TRUE(reg_.PersistEphemeral("/job/instances/10.0.0.1@-@7", "old").ok());
  ASSERT_TRUE(storage_
                  .FillJobNodes({{"servers/10.0.0.1", "ENABLED"},
                                 {"instances/10.0.0.1@-@7", "new", true},
                                 {"servers/10.0.0.2", "ENABLED"}})
                  .ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  EXPECT_EQ(*reg_.GetDirectly("/job/instances/10.0.0.1@-@7"), "new");
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.2"), "ENABLED");
}

TEST_F(JobNodeStorageFillTest, CreateJobNodesCreatesEveryNodeAndTheParentsNotNamedPresent) {
  ASSERT_TRUE(reg_.CreateContainer("/job/leader/election").ok());
  ASSERT_TRUE(storage_
                  .CreateJobNodes({{"servers/10.0.0.1", "ENABLED"},
                                   {"leader/sharding/necessary", ""},
                                   {"leader/election/instance", "10.0.0.1@-@7", true}},
                                  {"leader", "leader/election"})
                  .ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  EXPECT_TRUE(*reg_.IsExisted("/job/leader/sharding/necessary"));
  EXPECT_EQ(*reg_.GetDirectly("/job/leader/election/instance"), "10.0.0.1@-@7");
}

TEST_F(JobNodeStorageFillTest, CreateJobNodesChangesNothingWhenANodeIsThereAlready) {
  ASSERT_TRUE(reg_.CreateContainer("/job/leader/election").ok());
  ASSERT_TRUE(reg_.PersistEphemeral("/job/leader/election/instance", "someone else").ok());
  EXPECT_FALSE(storage_
                   .CreateJobNodes({{"servers/10.0.0.1", "ENABLED"},
                                    {"leader/election/instance", "10.0.0.1@-@7", true}},
                                   {"leader", "leader/election"})
                   .ok());
  EXPECT_FALSE(*reg_.IsExisted("/job/servers"));
  EXPECT_EQ(*reg_.GetDirectly("/job/leader/election/instance"), "someone else");
}

}  // namespace
}  // namespace elasticjob::storage
