// ScheduleJobBootstrap::ScheduleAll on both backends: many jobs registered with their
// start-up writes grouped (one namespace listing, grouped config and online transactions),
// each job keeping what its own Schedule() would do: the registry's configuration wins, a job
// whose grouped write fails because another process changed its nodes meanwhile goes on
// through its one-by-one path, a job the call creates is elected in its online transaction
// (no latch), and on ZooKeeper the requests per job stay within a count.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/executor.h"
#include "elasticjob/reg/registry_center.h"
#include "reg/composed_registry.h"
#include "reg/memory/memory_registry.h"
#include "reg/zk_test_server.h"
#include "unit/bootstrap/forwarding_registry.h"

namespace elasticjob {
namespace {

class NoOpJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {}
};

// Once a year: nothing fires while a test runs.
JobConfiguration Config(const std::string& name, const std::string& cron = "0 0 0 1 1 ?",
                        int items = 1) {
  return *JobConfiguration::Builder(name, items).Cron(cron).Build();
}

// Before forwarding the first transaction that writes `key`, runs `meanwhile` (another
// process's write) and records the transaction's outcome.
class InterferingRegistry final : public test_support::ForwardingRegistry {
 public:
  InterferingRegistry(RegistryCenter& inner, std::string key, std::function<void()> meanwhile)
      : ForwardingRegistry(inner), key_(std::move(key)), meanwhile_(std::move(meanwhile)) {}

  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override {
    bool hit = false;
    for (const auto& op : ops)
      hit = hit || (op.type != TransactionOp::Type::kCheckExists && op.key == key_);
    if (!hit || fired_.exchange(true)) {
      inner().ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
      return;
    }
    meanwhile_();
    inner().ExecuteInTransactionAsync(std::move(ops), executor,
                                      [this, done = std::move(done)](Status s) {
                                        outcome_ok_ = s.ok();
                                        outcome_seen_ = true;
                                        done(s);
                                      });
  }
  bool fired() const { return fired_.load(); }
  // Whether the interfered transaction's outcome arrived, and was OK.
  bool outcome_seen() const { return outcome_seen_.load(); }
  bool outcome_ok() const { return outcome_ok_.load(); }

 private:
  const std::string key_;
  const std::function<void()> meanwhile_;
  std::atomic<bool> fired_{false};
  std::atomic<bool> outcome_seen_{false};
  std::atomic<bool> outcome_ok_{false};
};

std::string UniqueNamespace() {
  static std::atomic<int> n{0};
  return "schedall" + std::to_string(getpid()) + "_" + std::to_string(n++);
}

class ScheduleAllTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (zookeeper()) {
      Status up = server_.Start();
      ASSERT_TRUE(up.ok()) << up;
    }
    reg_ = Client();
    other_ = Client();
    ASSERT_NE(reg_, nullptr);
    ASSERT_NE(other_, nullptr);
  }
  void TearDown() override {
    for (auto& b : boots_) b->Shutdown();
  }

  bool zookeeper() const { return GetParam() == "zookeeper"; }
  // A client of the namespace under test: another process's, when it is not reg_.
  std::unique_ptr<RegistryCenter> Client() {
    std::unique_ptr<RegistryCenter> c;
    if (zookeeper()) {
      auto r = NewRegistryCenter(server_.Url(
          ns_, "sessionTimeoutMs=10000&connectionTimeoutMs=5000&baseSleepMs=100&maxSleepMs=500"));
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok()) return nullptr;
      c = std::move(r).value();
    } else {
      c = reg::NewMemoryRegistry(server_memory_, ns_);
    }
    Status s = c->Init();
    EXPECT_TRUE(s.ok()) << s;
    return c;
  }
  // Another process registered `job` with `config` (its root holds the type name).
  void RegisterElsewhere(const JobConfiguration& config) {
    ASSERT_TRUE(other_->Persist("/" + config.job_name, "CPP_SIMPLE").ok());
    ASSERT_TRUE(other_->Persist("/" + config.job_name + "/config", ConfigToYaml(config)).ok());
  }
  // ScheduleAll of jobs job0..job{n-1} on `registry`, `parallelism` at a time.
  // `config` makes job i's configuration (default: Config("job{i}")).
  std::vector<Status> ScheduleJobs(
      RegistryCenter& registry, int n, int parallelism = 8,
      const std::function<JobConfiguration(const std::string&)>& config = nullptr) {
    std::vector<ScheduleJobBootstrap*> ptrs;
    for (int i = 0; i < n; ++i) {
      BootstrapOptions o;
      o.server_ip = "10.0.0.1";
      const std::string name = "job" + std::to_string(i);
      boots_.push_back(std::make_unique<ScheduleJobBootstrap>(
          registry, std::make_shared<NoOpJob>(), config ? config(name) : Config(name), o));
      ptrs.push_back(boots_.back().get());
    }
    return ScheduleJobBootstrap::ScheduleAll(ptrs, parallelism);
  }
  // Every job was scheduled, and is registered.
  void ExpectEveryJobRegistered(const std::vector<Status>& statuses) {
    for (size_t i = 0; i < statuses.size(); ++i) {
      EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
      ExpectRegistered("job" + std::to_string(i));
    }
  }
  // The job is registered here: its config, server, instance and a leader.
  void ExpectRegistered(const std::string& job) {
    EXPECT_TRUE(*other_->IsExisted("/" + job + "/config")) << job;
    EXPECT_EQ(other_->GetDirectly("/" + job + "/servers/10.0.0.1").value_or(""), "ENABLED") << job;
    EXPECT_EQ(other_->GetChildrenKeysDirectly("/" + job + "/instances").value_or({}).size(), 1u)
        << job;
    EXPECT_TRUE(*other_->IsExisted("/" + job + "/leader/election/instance")) << job;
  }

  testing::ZkTestServer server_;
  std::string ns_ = UniqueNamespace();
  std::shared_ptr<reg::MemoryServer> server_memory_ = std::make_shared<reg::MemoryServer>();
  std::unique_ptr<RegistryCenter> reg_;
  std::unique_ptr<RegistryCenter> other_;
  std::unique_ptr<InterferingRegistry> interfering_;  // outlives the jobs on it
  std::vector<std::unique_ptr<ScheduleJobBootstrap>> boots_;
};

TEST_P(ScheduleAllTest, JobsAlreadyInTheRegistryKeepItsConfigurationAndNewOnesWriteTheirs) {
  const JobConfiguration registered = Config("job3", "0 0 12 * * ?", 2);
  RegisterElsewhere(registered);
  const std::vector<Status> statuses = ScheduleJobs(*reg_, 10);
  ExpectEveryJobRegistered(statuses);
  EXPECT_EQ(*other_->GetDirectly("/job3/config"), ConfigToYaml(registered));
  EXPECT_EQ(*other_->GetDirectly("/job0/config"), ConfigToYaml(Config("job0")));
  EXPECT_EQ(*other_->GetDirectly("/job0"), "CPP_SIMPLE");
}

TEST_P(ScheduleAllTest,
       AJobRegisteredElsewhereAfterTheListingKeepsThatConfigurationThroughTheFallback) {
  // Listed as absent, then registered by another process just before its grouped creation.
  const JobConfiguration registered = Config("job5", "0 0 12 * * ?", 2);
  interfering_ =
      std::make_unique<InterferingRegistry>(*reg_, "/job5", [&] { RegisterElsewhere(registered); });
  const std::vector<Status> statuses = ScheduleJobs(*interfering_, 10);
  ASSERT_TRUE(interfering_->fired());
  ASSERT_TRUE(interfering_->outcome_seen());
  EXPECT_FALSE(interfering_->outcome_ok());  // the grouped creation failed: the fallback ran
  ExpectEveryJobRegistered(statuses);
  EXPECT_EQ(*other_->GetDirectly("/job5/config"), ConfigToYaml(registered));
  EXPECT_EQ(*other_->GetDirectly("/job4/config"), ConfigToYaml(Config("job4")));
}

TEST_P(ScheduleAllTest, AJobWhoseServerNodeAnotherProcessWroteMeanwhileGoesOnlineOneByOne) {
  // The server node appears between the job's look at its nodes and its grouped online
  // registration: that transaction fails as a whole, and the job writes its nodes one by one.
  interfering_ = std::make_unique<InterferingRegistry>(*reg_, "/job2/servers/10.0.0.1", [&] {
    ASSERT_TRUE(other_->Persist("/job2/servers/10.0.0.1", "ENABLED").ok());
  });
  const std::vector<Status> statuses = ScheduleJobs(*interfering_, 10);
  ASSERT_TRUE(interfering_->fired());
  ASSERT_TRUE(interfering_->outcome_seen());
  EXPECT_FALSE(interfering_->outcome_ok());
  ExpectEveryJobRegistered(statuses);
}

TEST_P(ScheduleAllTest, AJobThisCallCreatesIsElectedInItsOnlineTransactionWithoutTheLatch) {
  const std::vector<Status> statuses = ScheduleJobs(*reg_, 10);
  for (size_t i = 0; i < statuses.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
    const std::string job = "/job" + std::to_string(i);
    ExpectRegistered(job.substr(1));
    const auto instances = other_->GetChildrenKeysDirectly(job + "/instances").value_or({});
    ASSERT_EQ(instances.size(), 1u) << job;
    EXPECT_EQ(other_->GetDirectly(job + "/leader/election/instance").value_or(""), instances[0])
        << job;
    // The latch never ran: it would have left its container (reaped only once it had a
    // child and lost it, which takes a while).
    EXPECT_FALSE(other_->IsExisted(job + "/leader/election/latch").value_or(true)) << job;
  }
}

TEST_P(ScheduleAllTest, AJobThisCallCreatesIsShardedToThisInstanceInItsOnlineTransaction) {
  // Three items each: the strategy (average allocation) gives all three to the only
  // instance, as the first fire's sharding would; no flag is left for that fire.
  const std::vector<Status> statuses = ScheduleJobs(
      *reg_, 10, 8, [](const std::string& name) { return Config(name, "0 0 0 1 1 ?", 3); });
  for (size_t i = 0; i < statuses.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
    const std::string job = "/job" + std::to_string(i);
    const auto instances = other_->GetChildrenKeysDirectly(job + "/instances").value_or({});
    ASSERT_EQ(instances.size(), 1u) << job;
    for (int item = 0; item < 3; ++item) {
      EXPECT_EQ(other_->GetDirectly(job + "/sharding/" + std::to_string(item) + "/instance")
                    .value_or("<none>"),
                instances[0])
          << job << " item " << item;
    }
    EXPECT_FALSE(other_->IsExisted(job + "/leader/sharding/necessary").value_or(true)) << job;
    EXPECT_FALSE(other_->IsExisted(job + "/leader/sharding/processing").value_or(true)) << job;
  }
}

TEST_P(ScheduleAllTest, ADisabledJobThisCallCreatesTakesNoItemsAndKeepsTheFlag) {
  // A disabled server is no instance to shard to: ElasticJob's sharding with none available
  // leaves the flag, and so does the start-up.
  const std::vector<Status> statuses = ScheduleJobs(*reg_, 3, 8, [](const std::string& name) {
    return *JobConfiguration::Builder(name, 2).Cron("0 0 0 1 1 ?").Disabled(true).Build();
  });
  for (size_t i = 0; i < statuses.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
    const std::string job = "/job" + std::to_string(i);
    EXPECT_EQ(other_->GetDirectly(job + "/servers/10.0.0.1").value_or(""), "DISABLED") << job;
    EXPECT_TRUE(other_->IsExisted(job + "/leader/sharding/necessary").value_or(false)) << job;
    EXPECT_FALSE(other_->IsExisted(job + "/sharding").value_or(true)) << job;
  }
}

TEST_P(ScheduleAllTest, AnInstanceThatJoinsAJobShardedAtItsCreationGetsItsShareFromTheLeader) {
  // Two items, both given to the creator at its start-up; the second instance's start-up
  // raises the flag, and the leader (the creator, idle) shards the two between them.
  auto two_items = [](const std::string& name) { return Config(name, "0 0 0 1 1 ?", 2); };
  const std::vector<Status> statuses = ScheduleJobs(*reg_, 1, 8, two_items);
  ASSERT_TRUE(statuses[0].ok()) << statuses[0];
  const auto first = other_->GetChildrenKeysDirectly("/job0/instances").value_or({});
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(other_->GetDirectly("/job0/sharding/1/instance").value_or(""), first[0]);
  // Another instance of the job, in another process (its own session), on another server.
  BootstrapOptions o;
  o.server_ip = "10.0.0.2";
  boots_.push_back(std::make_unique<ScheduleJobBootstrap>(*other_, std::make_shared<NoOpJob>(),
                                                          two_items("job0"), o));
  ASSERT_TRUE(boots_.back()->Schedule().ok());
  // Waits on the registry's events (bounded) for the leader's sharding.
  ThreadPool pool{1};
  std::mutex mu;
  std::condition_variable cv;
  auto sub = other_->Watch("/job0", pool, [&](const TreeEvent&) {
    std::lock_guard<std::mutex> l(mu);
    cv.notify_all();
  });
  ASSERT_TRUE(sub.ok()) << sub.status();
  auto owners = [&] {
    std::set<std::string> out;
    for (int item = 0; item < 2; ++item) {
      out.insert(other_->GetDirectly("/job0/sharding/" + std::to_string(item) + "/instance")
                     .value_or("<none>"));
    }
    return out;
  };
  std::unique_lock<std::mutex> l(mu);
  EXPECT_TRUE(cv.wait_for(l, std::chrono::seconds(20), [&] {
    return !other_->IsExisted("/job0/leader/sharding/necessary").value_or(true) &&
           owners().size() == 2 && owners().count("<none>") == 0;
  }));
}

TEST_P(ScheduleAllTest, AJobWhoseLeaderAnotherInstanceElectedMeanwhileKeepsThatLeader) {
  // Another instance is elected between the job's creation and its online transaction,
  // which carries this instance's leader node: the transaction fails as a whole, and the job
  // goes online one by one, through the latch, finding the other leader.
  const std::string leader = "/job2/leader/election/instance";
  interfering_ = std::make_unique<InterferingRegistry>(
      *reg_, leader, [&] { ASSERT_TRUE(other_->PersistEphemeral(leader, "10.0.0.9@-@9").ok()); });
  const std::vector<Status> statuses = ScheduleJobs(*interfering_, 10);
  ASSERT_TRUE(interfering_->fired());
  ASSERT_TRUE(interfering_->outcome_seen());
  EXPECT_FALSE(interfering_->outcome_ok());
  ExpectEveryJobRegistered(statuses);
  EXPECT_EQ(other_->GetDirectly(leader).value_or(""), "10.0.0.9@-@9");
}

TEST_P(ScheduleAllTest, ZooKeeperRequestsPerJobStayWithinTheGroupedCount) {
  if (!zookeeper()) GTEST_SKIP() << "memory:// sends no requests";
  auto& zk = static_cast<reg::ComposedRegistry&>(*reg_);
  constexpr int kJobs = 100;
  // Fresh jobs: one listing, grouped config and online writes (the leader node and the
  // first sharding in the latter: no latch, no flag), the leader node's two containers
  // (nothing asked about the job's root, which the config write created; nor its config
  // read back: ConfigService::AdoptWritten), then the caches reading each new node once for
  // the watches it needs (the layout's parents: their children only; an item: not its
  // value, which is "", but its owner, and an exists watch on each other child it keeps;
  // `runtime` and its children not at all: they are outside the cache): about 18 here, of which 5
  // are the item's, which the first fire would otherwise read after its sharding (about 9 requests
  // more). Through the latch, with the caches loaded before the writes: 20-27 before the first
  // fire's sharding; parents read for a value watch they do not need as well: 36; each job's own
  // config look-up and writes and its online multi-op alone on top: 42-43.
  constexpr double kMaxPerJob = 19;
  uint64_t before = 0;
  for (const auto& [kind, n] : zk.request_counts()) before += n;
  const std::vector<Status> statuses =
      ScheduleJobs(*reg_, kJobs, ScheduleJobBootstrap::kDefaultParallelism);
  uint64_t after = 0;
  for (const auto& [kind, n] : zk.request_counts()) after += n;
  for (size_t i = 0; i < statuses.size(); ++i) EXPECT_TRUE(statuses[i].ok()) << statuses[i];
  const double per_job = static_cast<double>(after - before) / kJobs;
  EXPECT_LE(per_job, kMaxPerJob);
  RecordProperty("requests_per_job", std::to_string(per_job));
  std::cout << "requests per job: " << per_job << "\n";
}

INSTANTIATE_TEST_SUITE_P(Backends, ScheduleAllTest, ::testing::Values("memory", "zookeeper"),
                         [](const ::testing::TestParamInfo<std::string>& backend) {
                           return backend.param;
                         });

}  // namespace
}  // namespace elasticjob
