// The lifecycle API against a real ZooKeeper: a namespace laid out as a Java ElasticJob
// 3.0.x instance writes it (zk-layout contract, written node by node here as Curator would),
// read and operated on exactly as ElasticJob's own API does; and operations taking effect on
// a running C++ instance.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/lifecycle/job_configuration_api.h"
#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/lifecycle/statistics_api.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/schedule/time_zone.h"
#include "reg/zk_test_server.h"

namespace elasticjob {
namespace {

// A job as a Java 3.0.4 instance on host 10.0.0.1 (two instances) and a 3.0.5 one on
// 10.0.0.2 leave it: items 0 and 1 on the first host's instances, 2 on the second host.
const char* kJavaConfig =
    "cron: 0/5 * * * * ?\n"
    "description: orders\n"
    "disabled: false\n"
    "failover: true\n"
    "jobExecutorServiceHandlerType: CPU\n"
    "jobName: javaJob\n"
    "jobParameter: ''\n"
    "maxTimeDiffSeconds: -1\n"
    "misfire: true\n"
    "monitorExecution: true\n"
    "overwrite: false\n"
    "reconcileIntervalMinutes: 10\n"
    "shardingItemParameters: ''\n"
    "shardingTotalCount: 3\n"
    "staticSharding: false\n"
    "timeZone: Asia/Shanghai\n";
const char* kA = "10.0.0.1@-@100";
const char* kB = "10.0.0.1@-@101";
const char* kC = "10.0.0.2@-@200";

class LifecycleApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::ZkTestServer();
    Status up = server_->Start();
    ASSERT_TRUE(up.ok()) << up;
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    auto r = NewRegistryCenter(server_->Url(info->name(), "connectionTimeoutMs=5000"));
    ASSERT_TRUE(r.ok()) << r.status();
    reg_ = std::move(r).value();
    Status s = reg_->Init();
    ASSERT_TRUE(s.ok()) << s;
  }
  void TearDown() override {
    if (reg_ != nullptr) reg_->Close();
  }

  void WriteJavaJob() {
    Put("/javaJob", "org.example.OrderJob");
    Put("/javaJob/config", kJavaConfig);
    Put("/javaJob/servers/10.0.0.1", "ENABLED");
    Put("/javaJob/servers/10.0.0.2", "ENABLED");
    for (const char* id : {kA, kB, kC}) {
      std::string ip = std::string(id).substr(0, 8);
      ASSERT_TRUE(
          reg_->PersistEphemeral(std::string("/javaJob/instances/") + id,
                                 "jobInstanceId: " + std::string(id) + "\nserverIp: " + ip + "\n")
              .ok());
    }
    Put("/javaJob/sharding/0/instance", kA);
    Put("/javaJob/sharding/1/instance", kB);
    Put("/javaJob/sharding/2/instance", kC);
    Put("/javaJob/leader/election/instance", kA);
  }
  void Put(const std::string& key, const std::string& value) {
    Status s = reg_->Persist(key, value);
    ASSERT_TRUE(s.ok()) << key << ": " << s;
  }
  std::string Get(const std::string& key) {
    auto v = reg_->GetDirectly(key);
    return v.ok() ? *v : "<" + v.status().ToString() + ">";
  }
  bool Has(const std::string& key) { return reg_->GetDirectly(key).ok(); }

  static testing::ZkTestServer* server_;
  std::unique_ptr<RegistryCenter> reg_;
};
testing::ZkTestServer* LifecycleApiTest::server_ = nullptr;

TEST_F(LifecycleApiTest, ReadsAJavaNamespaceAsElasticJobDoes) {
  WriteJavaJob();
  Put("/javaJob/sharding/1/running", kB);
  Put("/javaJob/sharding/2/disabled", "");
  Put("/javaJob/sharding/0/failover", kA);
  Put("/notAJob/x", "");  // no config: not counted
  auto stats = NewJobStatisticsAPI(*reg_);
  EXPECT_EQ(stats->GetJobsTotalCount().value_or(-1), 1);
  auto jobs = stats->GetAllJobsBriefInfo();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].job_name, "javaJob");
  EXPECT_EQ((*jobs)[0].status, JobStatus::kOk);
  EXPECT_EQ((*jobs)[0].cron, "0/5 * * * * ?");
  EXPECT_EQ((*jobs)[0].description, "orders");
  EXPECT_EQ((*jobs)[0].instance_count, 3);
  EXPECT_EQ((*jobs)[0].sharding_total_count, 3);

  auto on1 = stats->GetJobsBriefInfo("10.0.0.1");
  ASSERT_TRUE(on1.ok());
  ASSERT_EQ(on1->size(), 1u);
  EXPECT_EQ((*on1)[0].instance_count, 2);
  EXPECT_TRUE(stats->GetJobsBriefInfo("10.9.9.9")->empty());

  auto servers = NewServerStatisticsAPI(*reg_)->GetAllServersBriefInfo();
  ASSERT_TRUE(servers.ok()) << servers.status();
  ASSERT_EQ(servers->size(), 2u);
  EXPECT_EQ((*servers)[0].server_ip, "10.0.0.1");
  EXPECT_EQ((*servers)[0].instances, (std::set<std::string>{kA, kB}));
  EXPECT_EQ((*servers)[0].job_names, (std::set<std::string>{"javaJob"}));
  EXPECT_EQ((*servers)[1].instances, (std::set<std::string>{kC}));

  auto items = NewShardingStatisticsAPI(*reg_)->GetShardingInfo("javaJob");
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[0].status, ShardingStatus::kPending);
  EXPECT_TRUE((*items)[0].failover);
  EXPECT_EQ((*items)[0].instance_id, kA);
  EXPECT_EQ((*items)[0].server_ip, "10.0.0.1");
  EXPECT_EQ((*items)[1].status, ShardingStatus::kRunning);
  EXPECT_EQ((*items)[2].status, ShardingStatus::kDisabled);
  EXPECT_EQ((*items)[2].server_ip, "10.0.0.2");

  auto config = NewJobConfigurationAPI(*reg_)->GetJobConfiguration("javaJob");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sharding_total_count, 3);
  EXPECT_TRUE(config->failover);
}

TEST_F(LifecycleApiTest, StatusesFollowElasticJobsRules) {
  WriteJavaJob();
  auto stats = NewJobStatisticsAPI(*reg_);
  // An item owned by an instance that is gone: SHARDING_FLAG, for the job and the item.
  ASSERT_TRUE(reg_->Remove(std::string("/javaJob/instances/") + kC).ok());
  EXPECT_EQ(stats->GetJobBriefInfo("javaJob")->status, JobStatus::kShardingFlag);
  auto items = NewShardingStatisticsAPI(*reg_)->GetShardingInfo("javaJob");
  ASSERT_TRUE(items.ok());
  EXPECT_EQ((*items)[2].status, ShardingStatus::kShardingFlag);
  EXPECT_EQ((*items)[2].server_ip, "10.0.0.2");  // from the owner's id
  // Every server disabled: DISABLED.
  Put("/javaJob/servers/10.0.0.1", "DISABLED");
  Put("/javaJob/servers/10.0.0.2", "DISABLED");
  EXPECT_EQ(stats->GetJobBriefInfo("javaJob")->status, JobStatus::kDisabled);
  // No instance: CRASHED.
  ASSERT_TRUE(reg_->Remove("/javaJob/instances").ok());
  EXPECT_EQ(stats->GetJobBriefInfo("javaJob")->status, JobStatus::kCrashed);
  EXPECT_EQ(stats->GetJobBriefInfo("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(stats->GetJobBriefInfo("nope").status().message(), "job 'nope' not found");
}

TEST_F(LifecycleApiTest, OperationsWriteWhatElasticJobWrites) {
  WriteJavaJob();
  auto ops = NewJobOperateAPI(*reg_);
  // Trigger: one empty persistent node per live instance (3.0.5's TriggerService).
  EXPECT_EQ(ops->Trigger("javaJob", "").value_or(-1), 3);
  for (const char* id : {kA, kB, kC}) {
    EXPECT_EQ(Get(std::string("/javaJob/trigger/") + id), "");
  }
  ASSERT_TRUE(reg_->Remove("/javaJob/trigger").ok());
  // With a parameter and a server: the parameter is the node's value, that host only.
  EXPECT_EQ(ops->Trigger("javaJob", "10.0.0.2", "once").value_or(-1), 1);
  EXPECT_EQ(Get(std::string("/javaJob/trigger/") + kC), "once");
  EXPECT_FALSE(Has(std::string("/javaJob/trigger/") + kA));

  EXPECT_EQ(ops->Disable("javaJob", "10.0.0.1").value_or(-1), 1);
  EXPECT_EQ(Get("/javaJob/servers/10.0.0.1"), "DISABLED");
  EXPECT_EQ(Get("/javaJob/servers/10.0.0.2"), "ENABLED");
  EXPECT_EQ(ops->Disable("javaJob", "").value_or(-1), 2);
  EXPECT_EQ(Get("/javaJob/servers/10.0.0.2"), "DISABLED");
  EXPECT_EQ(ops->Enable("", "10.0.0.2").value_or(-1), 1);  // that server in every job
  EXPECT_EQ(Get("/javaJob/servers/10.0.0.2"), "ENABLED");

  // Shutdown of one server: its instances' nodes go, the others stay.
  EXPECT_EQ(ops->Shutdown("javaJob", "10.0.0.1").value_or(-1), 2);
  EXPECT_FALSE(Has(std::string("/javaJob/instances/") + kA));
  EXPECT_FALSE(Has(std::string("/javaJob/instances/") + kB));
  EXPECT_TRUE(Has(std::string("/javaJob/instances/") + kC));
  // Remove: shutdown, then the server nodes; the config stays.
  EXPECT_EQ(ops->Remove("javaJob", "").value_or(-1), 2);
  EXPECT_FALSE(Has(std::string("/javaJob/instances/") + kC));
  EXPECT_FALSE(Has("/javaJob/servers/10.0.0.1"));
  EXPECT_TRUE(Has("/javaJob/config"));

  // Items.
  auto items = NewShardingOperateAPI(*reg_);
  ASSERT_TRUE(items->Disable("javaJob", 1).ok());
  EXPECT_EQ(Get("/javaJob/sharding/1/disabled"), "");
  ASSERT_TRUE(items->Enable("javaJob", 1).ok());
  EXPECT_FALSE(Has("/javaJob/sharding/1/disabled"));
  Status bad = items->Disable("javaJob", 3);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "item 3: job 'javaJob' has items 0 to 2");
}

TEST_F(LifecycleApiTest, UnknownJobsAndServersAreNamed) {
  WriteJavaJob();
  auto ops = NewJobOperateAPI(*reg_);
  EXPECT_EQ(ops->Trigger("nope", "").status().ToString(), "NOT_FOUND: job 'nope' not found");
  EXPECT_EQ(ops->Disable("", "10.9.9.9").status().ToString(),
            "NOT_FOUND: server '10.9.9.9' not found in any job");
  EXPECT_EQ(ops->Shutdown("javaJob", "10.9.9.9").status().ToString(),
            "NOT_FOUND: server '10.9.9.9' not found in job 'javaJob'");
  EXPECT_EQ(ops->Disable("", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ops->Trigger("a/b", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NewShardingOperateAPI(*reg_)->Disable("nope", 0).code(), StatusCode::kNotFound);
  ASSERT_TRUE(reg_->Remove("/javaJob/instances").ok());
  EXPECT_EQ(ops->Trigger("javaJob", "").status().ToString(),
            "FAILED_PRECONDITION: job 'javaJob' has no live instance to trigger");
}

TEST_F(LifecycleApiTest, UpdateValidatesAndKeepsTheWrittenVersion) {
  WriteJavaJob();
  auto api = NewJobConfigurationAPI(*reg_);
  auto config = api->GetJobConfiguration("javaJob");
  ASSERT_TRUE(config.ok());
  JobConfiguration bad = *config;
  bad.cron = "0 0 25 * * ?";
  Status refused = api->UpdateJobConfiguration(bad);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("hour"), std::string::npos) << refused;
  EXPECT_EQ(Get("/javaJob/config"), kJavaConfig);  // nothing written

  config->cron = "0/10 * * * * ?";
  ASSERT_TRUE(api->UpdateJobConfiguration(*config).ok());
  const std::string written = Get("/javaJob/config");
  EXPECT_NE(written.find("cron: 0/10 * * * * ?\n"), std::string::npos) << written;
  // A 3.0.4 node is written back with 3.0.4's thread-pool key.
  EXPECT_NE(written.find("jobExecutorServiceHandlerType: CPU"), std::string::npos) << written;
  JobConfiguration missing = *config;
  missing.job_name = "nope";
  EXPECT_EQ(api->UpdateJobConfiguration(missing).code(), StatusCode::kNotFound);
}

TEST_F(LifecycleApiTest, AddsAndRemovesJobs) {
  auto api = NewJobConfigurationAPI(*reg_);
  auto config = JobConfiguration::Builder("added", 2)
                    .Cron("0 0 12 * * ?")
                    .TimeZone("UTC")
                    .SetProperty("script.command.line", "/bin/true")
                    .Build();
  ASSERT_TRUE(config.ok());
  ASSERT_TRUE(api->AddJob(*config, "SCRIPT").ok());
  EXPECT_EQ(Get("/added"), "SCRIPT");
  EXPECT_EQ(Get("/added/config"), ConfigToYaml(*config));
  EXPECT_EQ(api->AddJob(*config, "SCRIPT").code(), StatusCode::kAlreadyExists);

  auto stats = NewJobStatisticsAPI(*reg_);
  auto from = TimeZone::Utc().ParseIso8601("2024-06-01T13:00:00Z");
  ASSERT_TRUE(from.ok());
  auto times = stats->GetNextFireTimes("added", 2, *from);
  ASSERT_TRUE(times.ok()) << times.status();
  ASSERT_EQ(times->size(), 2u);
  EXPECT_EQ(TimeZone::Utc().FormatIso8601((*times)[0]).substr(0, 19), "2024-06-02T12:00:00");
  EXPECT_EQ(TimeZone::Utc().FormatIso8601((*times)[1]).substr(0, 19), "2024-06-03T12:00:00");

  ASSERT_TRUE(api->RemoveJobConfiguration("added").ok());
  EXPECT_FALSE(Has("/added"));
  EXPECT_EQ(api->RemoveJobConfiguration("added").code(), StatusCode::kNotFound);
}

// What a running C++ instance does with the operations.
class CountingJob : public SimpleJob {
 public:
  void Execute(const ShardingContext& context) override {
    std::lock_guard lock(mu_);
    parameters_.push_back(context.job_parameter);
    cv_.notify_all();
  }
  bool WaitForRuns(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return parameters_.size() >= n; });
  }
  std::vector<std::string> parameters() {
    std::lock_guard lock(mu_);
    return parameters_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> parameters_;
};

TEST_F(LifecycleApiTest, ARunningInstanceHonoursTriggerParameterAndShutdown) {
  auto job = std::make_shared<CountingJob>();
  // Fires once a year: every run seen is an operator's.
  auto config =
      JobConfiguration::Builder("live", 1).Cron("0 0 0 1 1 ?").JobParameter("configured").Build();
  ASSERT_TRUE(config.ok());
  BootstrapOptions options;
  options.server_ip = "10.1.0.1";
  options.on_item_run = [](const ItemRunReport&) {};
  ScheduleJobBootstrap boot(*reg_, job, *config, options);
  ASSERT_TRUE(boot.Schedule().ok());
  auto ops = NewJobOperateAPI(*reg_);
  auto n = ops->Trigger("live", "");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  ASSERT_TRUE(job->WaitForRuns(1));
  EXPECT_EQ(job->parameters()[0], "configured");
  // A one-time parameter: that run sees it, the next one the configured parameter again.
  ASSERT_TRUE(ops->Trigger("live", "", "just once").ok());
  ASSERT_TRUE(job->WaitForRuns(2));
  EXPECT_EQ(job->parameters()[1], "just once");
  ASSERT_TRUE(ops->Trigger("live", "").ok());
  ASSERT_TRUE(job->WaitForRuns(3));
  EXPECT_EQ(job->parameters()[2], "configured");
  // Shutdown: the instance leaves the cluster (its node is not registered again).
  EXPECT_EQ(ops->Shutdown("live", "10.1.0.1").value_or(-1), 1);
  EXPECT_EQ(NewJobStatisticsAPI(*reg_)->GetJobBriefInfo("live")->status, JobStatus::kCrashed);
  boot.Shutdown();
}

}  // namespace
}  // namespace elasticjob
