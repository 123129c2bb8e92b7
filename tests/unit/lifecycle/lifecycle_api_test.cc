// The lifecycle API on memory:// (no server): what each operation writes and how the
// statistics read it. tests/integration/lifecycle has the same against a real ZooKeeper and
// a Java-written namespace.
#include <gtest/gtest.h>

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
    auto config = JobConfiguration::Builder("job", 2).Cron("0/5 * * * * ?").Build();
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
