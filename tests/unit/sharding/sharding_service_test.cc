#include "sharding/sharding_service.h"

#include <gtest/gtest.h>

#include <thread>
#include <utility>

#include "elasticjob/executor.h"
#include "execution/execution_service.h"
#include "reg/memory/memory_registry.h"
#include "unit/bootstrap/forwarding_registry.h"
#include "unit/reg/memory_registry_support.h"

namespace elasticjob::sharding {
namespace {

// The registry with a hook that runs before each transaction is sent (another instance
// writing in between); the hook's error, if any, is the transaction's.
class RacingRegistry final : public test_support::ForwardingRegistry {
 public:
  explicit RacingRegistry(RegistryCenter& inner) : ForwardingRegistry(inner) {}
  std::function<Status()> before_transaction = [] { return Status::Ok(); };

  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    if (Status s = before_transaction(); !s.ok()) return s;
    return inner().ExecuteInTransaction(ops);
  }
};

// One instance of the job: its own session and services, wired as the runtime wires them.
// Its registry is a RacingRegistry (by default one that only forwards).
struct Node {
  // `cluster`: every node of the test, this one included once made (Settle waits for them).
  Node(std::shared_ptr<reg::MemoryServer> server, const std::string& ip, Executor& events,
       std::vector<Node*>* cluster)
      : cluster(cluster),
        memory(reg::NewMemoryRegistry(std::move(server), "ns")),
        reg(*memory),
        storage(reg, "job"),
        config(storage, Clock::System()),
        servers(storage, ip),
        instances(storage, servers, instance::JobInstance::For(ip, 100)),
        leader(storage, instances.self().instance_id),
        sharding(storage, config, leader, instances, servers, strategies, notifier),
        execution(storage, instances.self().instance_id) {
    EXPECT_TRUE(reg.Init().ok());
    watch = std::move(
        reg.Watch("/job", events, [this](const TreeEvent&) { notifier.Notify(); }).value());
    cluster->push_back(this);
  }
  ~Node() {
    notifier.Cancel();
    std::erase(*cluster, this);
  }
  // Started as an instance of the job, once every node's cache has its registration (the
  // tests' premise: the instances know each other before they shard).
  Status Start(const JobConfiguration& c) {
    if (auto r = config.SetUp("SCRIPT", c); !r.ok()) return r.status();
    if (Status s = servers.PersistOnline(true); !s.ok()) return s;
    if (Status s = instances.PersistOnline(); !s.ok()) return s;
    Status s = sharding.SetReshardingFlag();
    Settle();
    return s;
  }
  // Waits until every node's cache has caught up with the writes made so far.
  void Settle() {
    for (Node* n : *cluster) test_support::WaitIdle({n->memory.get()});
  }

  // This instance's items under the registered configuration, once its caches have caught
  // up with the other sessions' writes (they reach it a moment after they are made).
  Result<std::vector<int>> LocalItems() {
    Settle();
    auto c = config.Load(false);
    if (!c.ok()) return c.status();
    return sharding.GetLocalShardingItems(c->sharding_total_count);
  }

  std::vector<Node*>* const cluster;
  std::unique_ptr<reg::ComposedRegistry> memory;
  RacingRegistry reg;
  storage::JobNodeStorage storage;
  config::ConfigService config;
  server::ServerService servers;
  instance::InstanceService instances;
  election::LeaderService leader;
  JobShardingStrategyRegistry strategies =
      JobShardingStrategyRegistry::WithBuiltins(Clock::System());
  storage::ChangeNotifier notifier;
  ShardingService sharding;
  execution::ExecutionService execution;
  std::unique_ptr<Subscription> watch;
};

class ShardingServiceTest : public ::testing::Test {
 protected:
  JobConfiguration Config(int total) {
    return *JobConfiguration::Builder("job", total).Cron("0/5 * * * * ?").Overwrite(true).Build();
  }
  std::unique_ptr<Node> Add(const std::string& ip) {
    return std::make_unique<Node>(server_, ip, events_, &nodes_);
  }

  std::shared_ptr<reg::MemoryServer> server_ = std::make_shared<reg::MemoryServer>();
  std::vector<Node*> nodes_;  // the live ones (Node::Settle)
  ThreadPool pool_{2};
  SerialExecutor events_{pool_};
};

TEST_F(ShardingServiceTest, ThreeInstancesSplitTenItemsAsAverageAllocationSays) {
  auto a = Add("10.0.0.1"), b = Add("10.0.0.2"), c = Add("10.0.0.3");
  for (auto* n : {a.get(), b.get(), c.get()}) ASSERT_TRUE(n->Start(Config(10)).ok());
  ASSERT_TRUE(a->leader.ElectLeader().ok());  // a leads
  ASSERT_TRUE(a->sharding.ShardingIfNecessary().ok());
  // The leader's list is the descending sort: .3, .2, .1.
  EXPECT_EQ(*c->LocalItems(), (std::vector<int>{0, 1, 2, 9}));
  EXPECT_EQ(*b->LocalItems(), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(*a->LocalItems(), (std::vector<int>{6, 7, 8}));
  EXPECT_FALSE(*a->sharding.IsNeedSharding());
  EXPECT_FALSE(*a->reg.IsExisted("/job/leader/sharding/processing"));
  EXPECT_EQ(*a->reg.GetDirectly("/job/sharding/9/instance"), "10.0.0.3@-@100");
}

TEST_F(ShardingServiceTest, FollowersWaitForTheLeaderOnEventsNotSleeps) {
  auto a = Add("10.0.0.1"), b = Add("10.0.0.2");
  ASSERT_TRUE(a->Start(Config(4)).ok());
  ASSERT_TRUE(b->Start(Config(4)).ok());
  ASSERT_TRUE(a->leader.ElectLeader().ok());
  // Hold the leader's sharding back with a running item until the follower is waiting.
  ASSERT_TRUE(a->reg.PersistEphemeral("/job/sharding/0/running", "x").ok());
  // The follower knows the leader and the flag: a cache that has not seen them yet takes
  // the items for unowned with no sharding coming, and raises the flag again.
  a->Settle();
  std::atomic<bool> follower_done{false};
  std::thread follower([&] {
    EXPECT_TRUE(b->sharding.ShardingIfNecessary().ok());
    follower_done = true;
  });
  std::thread leader([&] { EXPECT_TRUE(a->sharding.ShardingIfNecessary().ok()); });
  EXPECT_FALSE(follower_done.load());
  ASSERT_TRUE(a->reg.Remove("/job/sharding/0/running").ok());  // the run ends: sharding proceeds
  leader.join();
  follower.join();
  EXPECT_TRUE(follower_done.load());
  EXPECT_EQ(*b->LocalItems(), (std::vector<int>{0, 1}));
  EXPECT_EQ(*a->LocalItems(), (std::vector<int>{2, 3}));
}

TEST_F(ShardingServiceTest, ElectsALeaderWhenNoneExists) {
  auto a = Add("10.0.0.1");
  ASSERT_TRUE(a->Start(Config(2)).ok());
  ASSERT_TRUE(a->sharding.ShardingIfNecessary().ok());
  EXPECT_TRUE(*a->leader.IsLeader());
  EXPECT_EQ(*a->LocalItems(), (std::vector<int>{0, 1}));
}

TEST_F(ShardingServiceTest, ShrinkingTheTotalRemovesExtraItems) {
  auto a = Add("10.0.0.1");
  ASSERT_TRUE(a->Start(Config(5)).ok());
  ASSERT_TRUE(a->sharding.ShardingIfNecessary().ok());
  ASSERT_TRUE(a->config.SetUp("SCRIPT", Config(2)).ok());
  ASSERT_TRUE(a->sharding.SetReshardingFlag().ok());
  ASSERT_TRUE(a->sharding.ShardingIfNecessary().ok());
  EXPECT_EQ(*a->reg.GetChildrenKeys("/job/sharding"), (std::vector<std::string>{"1", "0"}));
}

TEST_F(ShardingServiceTest, DisabledServersGetNoItems) {
  auto a = Add("10.0.0.1"), b = Add("10.0.0.2");
  ASSERT_TRUE(a->Start(Config(4)).ok());
  ASSERT_TRUE(b->Start(Config(4)).ok());
  ASSERT_TRUE(b->servers.PersistOnline(false).ok());
  ASSERT_TRUE(a->sharding.ShardingIfNecessary().ok());
  EXPECT_EQ(*a->LocalItems(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(b->LocalItems()->empty());
}

TEST_F(ShardingServiceTest, RunningMarksAreOneMultiOpAndModeFollowsFailover) {
  auto a = Add("10.0.0.1");
  JobConfiguration c = Config(3);
  ASSERT_TRUE(a->Start(c).ok());
  ASSERT_TRUE(a->execution.RegisterJobBegin(c, {0, 2}).ok());
  EXPECT_EQ(*a->reg.GetDirectly("/job/sharding/0/running"), "10.0.0.1@-@100");
  EXPECT_TRUE(*a->execution.HasRunningItems({2}));
  ASSERT_TRUE(a->execution.SetMisfire({0, 1}).ok());
  EXPECT_EQ(*a->execution.GetMisfiredJobItems({0, 1, 2}), (std::vector<int>{0, 1}));
  ASSERT_TRUE(a->execution.RegisterJobCompleted(c, {0, 2}).ok());
  EXPECT_FALSE(*a->execution.HasRunningItems({0, 1, 2}));
  ASSERT_TRUE(a->execution.ClearMisfire({0, 1}).ok());
  EXPECT_TRUE(a->execution.GetMisfiredJobItems({0, 1, 2})->empty());
  // Ephemeral without failover: a lost session clears them; persistent with failover.
  ASSERT_TRUE(a->execution.RegisterJobBegin(c, {1}).ok());
  a->memory->ExpireSession();
  EXPECT_FALSE(*a->reg.IsExisted("/job/sharding/1/running"));
  c.failover = true;
  ASSERT_TRUE(a->execution.RegisterJobBegin(c, {1}).ok());
  a->memory->ExpireSession();
  EXPECT_TRUE(*a->reg.IsExisted("/job/sharding/1/running"));
  // A leftover mark (a crashed instance's, failover on) fails the multi-op and is replaced.
  ASSERT_TRUE(a->reg.Persist("/job/sharding/0/running", "10.0.0.9@-@7").ok());
  ASSERT_TRUE(a->execution.RegisterJobBegin(c, {0}).ok());
  EXPECT_EQ(*a->reg.GetDirectly("/job/sharding/0/running"), "10.0.0.1@-@100");
  c.monitor_execution = false;  // nothing is written without monitorExecution
  ASSERT_TRUE(a->execution.RegisterJobBegin(c, {2}).ok());
  EXPECT_FALSE(*a->reg.IsExisted("/job/sharding/2/running"));
}

TEST_F(ShardingServiceTest, DisabledItemsAreReported) {
  auto a = Add("10.0.0.1");
  ASSERT_TRUE(a->Start(Config(3)).ok());
  ASSERT_TRUE(a->reg.Persist("/job/sharding/1/disabled", "").ok());
  EXPECT_EQ(*a->execution.GetDisabledItems({0, 1, 2}), std::vector<int>{1});
}

TEST_F(ShardingServiceTest, ALeaderThatLosesTheShardingRaceToAnotherInstanceReportsNoFailure) {
  auto a = Add("10.0.0.1"), b = Add("10.0.0.2");
  ASSERT_TRUE(a->Start(Config(3)).ok());
  ASSERT_TRUE(b->Start(Config(3)).ok());
  ASSERT_TRUE(a->leader.ElectLeader().ok());
  // Just before a's transaction, b (which also saw itself lead) commits its own sharding:
  // the flag and the processing node a's transaction deletes are gone.
  bool raced = false;
  a->reg.before_transaction = [&] {
    if (std::exchange(raced, true)) return Status::Ok();
    EXPECT_TRUE(b->reg.Remove("/job/leader/sharding/necessary").ok());
    EXPECT_TRUE(b->reg.Remove("/job/leader/sharding/processing").ok());
    return Status::Ok();
  };
  ::testing::internal::CaptureStderr();
  Status s = a->sharding.ShardNowIfIdleLeader();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_NE(log.find("INFO job 'job': another instance sharded at the same time"),
            std::string::npos)
      << log;
  EXPECT_FALSE(*a->reg.IsExisted("/job/leader/sharding/processing"));
}

TEST_F(ShardingServiceTest, ALeaderPathThatFindsItsShardingUnderWayHasItShardAgainOnceDone) {
  auto a = Add("10.0.0.1"), b = Add("10.0.0.2");
  ASSERT_TRUE(a->Start(Config(4)).ok());
  ASSERT_TRUE(a->leader.ElectLeader().ok());
  // a has read the membership (itself alone) and is about to create its processing node
  // when b registers and raises the flag; the runtime's reaction to that flag, a second
  // ShardNowIfIdleLeader on another thread, finds a's sharding under way and returns.
  bool raced = false;
  Status second;
  a->reg.before_transaction = [&] {
    if (std::exchange(raced, true)) return Status::Ok();
    EXPECT_TRUE(b->Start(Config(4)).ok());
    a->Settle();  // the reaction follows the flag's event
    std::thread t([&] { second = a->sharding.ShardNowIfIdleLeader(); });
    t.join();
    return Status::Ok();
  };
  Status first = a->sharding.ShardNowIfIdleLeader();
  EXPECT_TRUE(first.ok()) << first;
  EXPECT_TRUE(second.ok()) << second;
  // No other event comes here: the first path shards again for the second one, so b's flag
  // is not left up with nobody sharding.
  EXPECT_FALSE(*a->reg.IsExisted("/job/leader/sharding/necessary"));
  EXPECT_EQ(a->LocalItems()->size(), 2u);
  EXPECT_EQ(b->LocalItems()->size(), 2u);
}

TEST_F(ShardingServiceTest, ALeaderWhoseShardingFailsForAnotherReasonReportsIt) {
  auto a = Add("10.0.0.1");
  ASSERT_TRUE(a->Start(Config(3)).ok());
  ASSERT_TRUE(a->leader.ElectLeader().ok());
  a->reg.before_transaction = [] { return Status(StatusCode::kConnectionLoss, "connection lost"); };
  Status s = a->sharding.ShardNowIfIdleLeader();
  EXPECT_EQ(s.code(), StatusCode::kConnectionLoss) << s;
}

}  // namespace
}  // namespace elasticjob::sharding
