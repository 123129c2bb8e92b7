// The lifecycle API on memory:// (no server): what each operation writes and how the
// statistics read it. tests/integration/lifecycle has the same against a real ZooKeeper and
// a Java-written namespace.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "elasticjob/lifecycle/job_configuration_api.h"
#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/lifecycle/statistics_api.h"
#include "elasticjob/reg/registry_center.h"

namespace elasticjob {
namespace {

class LifecycleMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    auto r = NewRegistryCenter(std::string("memory://lifecycle_") + info->name());
    ASSERT_TRUE(r.ok());
    reg_ = std::move(r).value();
    ASSERT_TRUE(reg_->Init().ok());
    auto config = JobConfiguration::Builder("job", 2)
                      .Cron("0/5 * * * * ?")
                      .SetProperty("script.command.line", "/bin/true")
                      .Build();
    ASSERT_TRUE(config.ok());
    ASSERT_TRUE(NewJobConfigurationAPI(*reg_)->AddJob(*config, "SCRIPT").ok());
    ASSERT_TRUE(reg_->Persist("/job/servers/10.0.0.1", "ENABLED").ok());
    ASSERT_TRUE(reg_->PersistEphemeral("/job/instances/10.0.0.1@-@1",
                                       "jobInstanceId: 10.0.0.1@-@1\nserverIp: 10.0.0.1\n")
                    .ok());
  }
  void TearDown() override { reg_->Close(); }
  std::string Get(const std::string& key) { return reg_->GetDirectly(key).value_or("<none>"); }

  std::unique_ptr<RegistryCenter> reg_;
};

TEST_F(LifecycleMemoryTest, StatusMovesFromShardingFlagToOkToDisabledToCrashed) {
  auto stats = NewJobStatisticsAPI(*reg_);
  EXPECT_EQ(stats->GetJobBriefInfo("job")->status, JobStatus::kShardingFlag);  // no owners
  ASSERT_TRUE(reg_->Persist("/job/sharding/0/instance", "10.0.0.1@-@1").ok());
  ASSERT_TRUE(reg_->Persist("/job/sharding/1/instance", "10.0.0.1@-@1").ok());
  EXPECT_EQ(stats->GetJobBriefInfo("job")->status, JobStatus::kOk);
  auto ops = NewJobOperateAPI(*reg_);
  EXPECT_EQ(ops->Disable("job", "").value_or(-1), 1);
  EXPECT_EQ(stats->GetJobBriefInfo("job")->status, JobStatus::kDisabled);
  EXPECT_EQ(ops->Shutdown("job", "").value_or(-1), 1);
  EXPECT_EQ(stats->GetJobBriefInfo("job")->status, JobStatus::kCrashed);
}

TEST_F(LifecycleMemoryTest, TriggerWritesOneNodePerInstanceWithTheParameter) {
  auto ops = NewJobOperateAPI(*reg_);
  EXPECT_EQ(ops->Trigger("job", "", "p").value_or(-1), 1);
  EXPECT_EQ(Get("/job/trigger/10.0.0.1@-@1"), "p");
  EXPECT_EQ(ops->Trigger("job", "10.0.0.2").status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(LifecycleMemoryTest, UpdateRefusesABadConfigAndWritesNothing) {
  auto api = NewJobConfigurationAPI(*reg_);
  const std::string before = Get("/job/config");
  auto config = api->GetJobConfiguration("job");
  ASSERT_TRUE(config.ok());
  config->sharding_total_count = 0;
  Status s = api->UpdateJobConfiguration(*config);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("shardingTotalCount"), std::string::npos) << s;
  EXPECT_EQ(Get("/job/config"), before);
  config->sharding_total_count = 3;
  ASSERT_TRUE(api->UpdateJobConfiguration(*config).ok());
  EXPECT_EQ(api->GetJobConfiguration("job")->sharding_total_count, 3);
}

// Valid YAML an instance cannot run: refused by every writer (the CLI's `job config set` and
// `job add`, the console's save and add all write through this API), the known names listed.
TEST_F(LifecycleMemoryTest, UpdateAndAddRefuseNamesNoInstanceCanRunListingTheKnownOnes) {
  auto api = NewJobConfigurationAPI(*reg_);
  const std::string before = Get("/job/config");
  struct Case {
    std::function<void(JobConfiguration&)> set;
    std::string field;
    std::string known;  // part of the list the error gives
  };
  const std::vector<Case> cases = {
      {[](JobConfiguration& c) { c.job_sharding_strategy_type = "NO_SUCH"; },
       "jobShardingStrategyType", "AVG_ALLOCATION"},
      {[](JobConfiguration& c) { c.job_executor_thread_pool_size_provider_type = "NO_SUCH"; },
       "jobExecutorThreadPoolSizeProviderType", "SINGLE_THREAD"},
      {[](JobConfiguration& c) { c.job_error_handler_type = "NO_SUCH"; }, "jobErrorHandlerType",
       "DINGTALK"},
      {[](JobConfiguration& c) { c.job_error_handler_type = "DINGTALK"; }, "dingtalk", ""},
      {[](JobConfiguration& c) {
         c.job_listener_types = {"LOG", "NO_SUCH"};
       },
       "jobListenerTypes", "DISTRIBUTE_ONCE_LOG"},
      {[](JobConfiguration& c) { c.props["script.command.line"] = "echo 'unbalanced"; },
       "script.command.line", ""},
  };
  for (const Case& c : cases) {
    auto config = api->GetJobConfiguration("job");
    ASSERT_TRUE(config.ok());
    c.set(*config);
    Status s = api->UpdateJobConfiguration(*config);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s;
    EXPECT_NE(s.message().find(c.known), std::string::npos) << s;
    EXPECT_EQ(Get("/job/config"), before) << c.field;
    config->job_name = "added";
    Status added = api->AddJob(*config, "SCRIPT");
    EXPECT_EQ(added.code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(added.message().find(c.field), std::string::npos) << added;
    EXPECT_EQ(Get("/added/config"), "<none>") << c.field;
  }
  // An HTTP job's URL is the type's own check.
  auto http = JobConfiguration::Builder("web", 1)
                  .Cron("0/5 * * * * ?")
                  .SetProperty("http.uri", "ftp://example.com/")
                  .SetProperty("http.method", "GET")
                  .Build();
  ASSERT_TRUE(http.ok());
  Status s = api->AddJob(*http, "HTTP");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("http.uri"), std::string::npos) << s;
}

TEST_F(LifecycleMemoryTest, ANameTheRegistryAlreadyHasIsKeptForAnEmbeddingAppsOwnStrategy) {
  // An embedding application registered MY_STRATEGY and wrote it; an operator may still
  // change the cron from another process, but not switch to another unknown name.
  auto api = NewJobConfigurationAPI(*reg_);
  auto config = api->GetJobConfiguration("job");
  ASSERT_TRUE(config.ok());
  config->job_sharding_strategy_type = "MY_STRATEGY";
  ASSERT_TRUE(reg_->Update("/job/config", ConfigToYaml(*config)).ok());
  config->cron = "0/7 * * * * ?";
  ASSERT_TRUE(api->UpdateJobConfiguration(*config).ok());
  EXPECT_EQ(api->GetJobConfiguration("job")->cron, "0/7 * * * * ?");
  config->job_sharding_strategy_type = "OTHER";
  EXPECT_EQ(api->UpdateJobConfiguration(*config).code(), StatusCode::kInvalidArgument);
}

TEST_F(LifecycleMemoryTest, ItemsAndServersAreListed) {
  ASSERT_TRUE(NewShardingOperateAPI(*reg_)->Disable("job", 1).ok());
  ASSERT_TRUE(reg_->Persist("/job/sharding/0/instance", "10.0.0.1@-@1").ok());
  auto items = NewShardingStatisticsAPI(*reg_)->GetShardingInfo("job");
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].status, ShardingStatus::kPending);
  EXPECT_EQ((*items)[1].status, ShardingStatus::kDisabled);
  auto servers = NewServerStatisticsAPI(*reg_)->GetAllServersBriefInfo();
  ASSERT_TRUE(servers.ok());
  ASSERT_EQ(servers->size(), 1u);
  EXPECT_EQ((*servers)[0].instances.size(), 1u);
  EXPECT_EQ(NewServerStatisticsAPI(*reg_)->GetServersTotalCount().value_or(-1), 1);
}

TEST_F(LifecycleMemoryTest, AnUnreadableConfigIsNamedAndDoesNotHideTheOtherJobs) {
  ASSERT_TRUE(reg_->Persist("/broken/config", "shardingTotalCount: three\n").ok());
  auto config = NewJobConfigurationAPI(*reg_)->GetJobConfiguration("broken");
  EXPECT_EQ(config.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(config.status().message().find("job 'broken'"), std::string::npos);
  EXPECT_NE(config.status().message().find("three"), std::string::npos);
  auto jobs = NewJobStatisticsAPI(*reg_)->GetAllJobsBriefInfo();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_name, "broken");
  EXPECT_EQ((*jobs)[0].status, JobStatus::kCrashed);
  EXPECT_EQ((*jobs)[0].description.rfind("config not readable: job 'broken': ", 0), 0u)
      << (*jobs)[0].description;
  EXPECT_EQ((*jobs)[1].job_name, "job");
}

}  // namespace
}  // namespace elasticjob
