#include "storage/job_node_path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>

#include "reg/memory/memory_registry.h"
#include "storage/job_node_storage.h"

namespace elasticjob::storage {
namespace {

using reg::NodeWatches;
using reg::WatchPolicy;

TEST(JobNodePathTest, PathsMatchTheRegistryLayout) {
  JobNodePath p("orderJob");
  EXPECT_EQ(p.FullPath(), "/orderJob");
  EXPECT_EQ(p.FullPath("leader/sharding/necessary"), "/orderJob/leader/sharding/necessary");
  EXPECT_EQ(p.ConfigNodePath(), "/orderJob/config");
  EXPECT_EQ(p.ServerNodePath("10.0.0.1"), "/orderJob/servers/10.0.0.1");
  EXPECT_EQ(p.InstanceNodePath("10.0.0.1@-@42"), "/orderJob/instances/10.0.0.1@-@42");
  EXPECT_EQ(p.ShardingNodePath(), "/orderJob/sharding");
  EXPECT_EQ(p.ShardingNodePath(3), "/orderJob/sharding/3");
  EXPECT_EQ(p.ShardingNodePath(3, "running"), "/orderJob/sharding/3/running");
  EXPECT_EQ(p.LeaderHostNodePath(), "/orderJob/leader/election/instance");
}

TEST(JobNodePathTest, CacheWatchesFollowHowEachNodeChanges) {
  auto same = [](NodeWatches a, NodeWatches b) {
    return a.value == b.value && a.children == b.children && a.empty_value == b.empty_value &&
           a.named_present == b.named_present && a.children_outside == b.children_outside &&
           std::equal(a.named_children.begin(), a.named_children.end(), b.named_children.begin(),
                      b.named_children.end());
  };
  const NodeWatches none{false, false}, value{true, false}, both{};
  // Created and deleted only: the parent's children watch is enough.
  for (const char* node : {"sharding/0/running", "leader/sharding/processing",
                           "leader/failover/items/3", "trigger/10.0.0.1@-@42",
                           "runtime/10.0.0.1@-@42", "systemTime/current", "guarantee/started/0",
                           "guarantee/completed/2", "leader/election/latch/_c_x-latch-0000000001",
                           "leader/failover/latch/_c_y-latch-0000000002",
                           "guarantee/started-latch/_c_z-latch-0000000003"}) {
    EXPECT_TRUE(same(JobNodeWatches(node), none)) << node;
  }
  for (const char* node :
       {"config", "servers/10.0.0.1", "instances/10.0.0.1@-@42", "sharding/0/instance",
        "sharding/0/failover", "sharding/0/failovering", "sharding/12/misfire",
        "sharding/1/disabled", "leader/sharding/necessary", "leader/election/instance"}) {
    EXPECT_TRUE(same(JobNodeWatches(node), value)) << node;
  }
  // An item names the children the cache keeps: every one but the running mark, which each
  // run creates and deletes (no watch fires for it, and it is read from the server). Its
  // value is "" (never read), and its owner, the first, is usually there (read at once).
  const std::string_view kept[] = {"instance", "failover", "failovering", "disabled", "misfire"};
  EXPECT_TRUE(same(JobNodeWatches("sharding/7"),
                   NodeWatches{false, false, kept, /*empty_value=*/true, /*named_present=*/1}));
  // Parents: only their children change, and their value is "" (never read).
  const NodeWatches children{false, true, {}, /*empty_value=*/true};
  for (const char* node :
       {"servers", "instances", "sharding", "leader", "leader/election", "leader/election/latch",
        "leader/sharding", "leader/failover", "leader/failover/items", "leader/failover/latch",
        "trigger", "guarantee", "guarantee/started", "guarantee/completed", "systemTime",
        "workflowRuns"}) {
    EXPECT_TRUE(same(JobNodeWatches(node), children)) << node;
  }
  // What each instance shows the console of itself: outside the job's cache.
  EXPECT_TRUE(
      same(JobNodeWatches("runtime"),
           NodeWatches{false, false, {}, /*empty_value=*/true, 0, /*children_outside=*/true}));
  for (const char* node : {"an/unknown/node", "unknown", "leader/unknown"}) {
    EXPECT_TRUE(same(JobNodeWatches(node), both)) << node;
  }
  // The policy maps the registry's keys, and leaves the job root and other jobs alone.
  WatchPolicy policy = JobNodePath("orderJob").CachePolicy();
  EXPECT_TRUE(same(policy("/orderJob/sharding/0/running"), none));
  EXPECT_TRUE(same(policy("/orderJob"), both));
  EXPECT_TRUE(same(policy("/orderJobX/sharding/0/running"), both));
}

class JobNodeStorageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Init().ok()); }
  std::unique_ptr<reg::ComposedRegistry> registry_ =
      reg::NewMemoryRegistry(std::make_shared<reg::MemoryServer>(), "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  JobNodeStorage storage_{reg_, "job"};
};

TEST_F(JobNodeStorageTest, ReadsAndWritesRelativeToTheJob) {
  ASSERT_TRUE(storage_.FillJobNode("servers/10.0.0.1", "ENABLED").ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  EXPECT_EQ(*storage_.GetJobNodeData("servers/10.0.0.1"), "ENABLED");
  EXPECT_EQ(*storage_.GetJobNodeChildrenKeys("servers"), std::vector<std::string>{"10.0.0.1"});
  EXPECT_TRUE(storage_.GetJobNodeChildrenKeys("nothing")->empty());
  ASSERT_TRUE(storage_
                  .ExecuteInTransaction(
                      {TransactionOp::Create("leader", ""), TransactionOp::Create("leader/x", "1")})
                  .ok());
  EXPECT_EQ(*reg_.GetDirectly("/job/leader/x"), "1");
}

TEST_F(JobNodeStorageTest, CreateIfNeededOnlyForAnExistingJob) {
  JobNodeStorage removed(reg_, "removedJob");
  ASSERT_TRUE(removed.CreateJobNodeIfNeeded("leader/sharding/necessary").ok());
  EXPECT_FALSE(*reg_.IsExisted("/removedJob"));  // not resurrected
  ASSERT_TRUE(storage_.ReplaceJobRootNode("SCRIPT").ok());
  ASSERT_TRUE(storage_.CreateJobNodeIfNeeded("leader/sharding/necessary").ok());
  EXPECT_TRUE(*reg_.IsExisted("/job/leader/sharding/necessary"));
  ASSERT_TRUE(storage_.CreateJobNodeIfNeeded("leader/sharding/necessary").ok());  // idempotent
}

}  // namespace
}  // namespace elasticjob::storage
