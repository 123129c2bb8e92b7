// The console's watched copy of a namespace against the lifecycle statistics API on the same
// memory:// registry: every status rule, the servers, the items, and changes followed.
#include "console/registry_view.h"

#include <gtest/gtest.h>

#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/lifecycle/statistics_api.h"

namespace elasticjob::console {
namespace {

const char* kConfig =
    "jobName: {}\ncron: 0/5 * * * * ?\nshardingTotalCount: 2\ndescription: <i>{}</i>\n";

class RegistryViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    auto reg = NewRegistryCenter(std::string("memory://view_") + info->name());
    ASSERT_TRUE(reg.ok());
    ASSERT_TRUE((*reg)->Init().ok());
    reg_ = reg->get();
    view_ = std::make_unique<RegistryView>(std::move(reg).value(), pool_,
                                           [this](const std::string& job, bool jobs_changed) {
                                             changes_.push_back(job);
                                             if (jobs_changed) ++membership_changes_;
                                           });
  }

  void Put(const std::string& key, const std::string& value) {
    ASSERT_TRUE(reg_->Persist(key, value).ok()) << key;
  }
  void Job(const std::string& name) {
    std::string yaml = kConfig;
    yaml.replace(yaml.find("{}"), 2, name);
    yaml.replace(yaml.find("{}"), 2, name);
    Put("/" + name, "SCRIPT");
    Put("/" + name + "/config", yaml);
  }
  void Instance(const std::string& job, const std::string& ip, int pid) {
    const std::string id = ip + "@-@" + std::to_string(pid);
    Put("/" + job + "/instances/" + id, "jobInstanceId: " + id + "\nserverIp: " + ip + "\n");
  }

  // The view's answers equal the statistics API's, read from the registry itself.
  void ExpectSameAsStatistics() {
    view_->Sync();
    auto stats = NewJobStatisticsAPI(*reg_);
    auto expected = stats->GetAllJobsBriefInfo();
    ASSERT_TRUE(expected.ok());
    auto rows = view_->Jobs(std::chrono::system_clock::now());
    ASSERT_EQ(rows.size(), expected->size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const JobBriefInfo& got = rows[i].brief;
      const JobBriefInfo& want = (*expected)[i];
      EXPECT_EQ(got.job_name, want.job_name);
      EXPECT_EQ(JobStatusName(got.status), std::string(JobStatusName(want.status))) << got.job_name;
      EXPECT_EQ(got.cron, want.cron) << got.job_name;
      EXPECT_EQ(got.description, want.description) << got.job_name;
      EXPECT_EQ(got.sharding_total_count, want.sharding_total_count) << got.job_name;
      EXPECT_EQ(got.instance_count, want.instance_count) << got.job_name;
      auto job = view_->Job(got.job_name);
      ASSERT_TRUE(job.has_value());
      ReadRunning(*reg_, &*job);
      auto items = NewShardingStatisticsAPI(*reg_)->GetShardingInfo(got.job_name);
      ASSERT_TRUE(items.ok());
      auto mine = ShardingOf(*job);
      ASSERT_EQ(mine.size(), items->size()) << got.job_name;
      for (size_t k = 0; k < mine.size(); ++k) {
        EXPECT_EQ(mine[k].item, (*items)[k].item);
        EXPECT_EQ(mine[k].instance_id, (*items)[k].instance_id);
        EXPECT_EQ(mine[k].server_ip, (*items)[k].server_ip);
        EXPECT_EQ(mine[k].status, (*items)[k].status) << got.job_name << " item " << k;
        EXPECT_EQ(mine[k].failover, (*items)[k].failover);
      }
    }
    auto servers = NewServerStatisticsAPI(*reg_)->GetAllServersBriefInfo();
    ASSERT_TRUE(servers.ok());
    auto my_servers = view_->Servers();
    ASSERT_EQ(my_servers.size(), servers->size());
    for (size_t i = 0; i < my_servers.size(); ++i) {
      EXPECT_EQ(my_servers[i].server_ip, (*servers)[i].server_ip);
      EXPECT_EQ(my_servers[i].instances, (*servers)[i].instances);
      EXPECT_EQ(my_servers[i].job_names, (*servers)[i].job_names);
      EXPECT_EQ(my_servers[i].disabled_jobs, (*servers)[i].disabled_jobs);
      auto on = stats->GetJobsBriefInfo(my_servers[i].server_ip);
      auto mine_on = view_->JobsOnServer(my_servers[i].server_ip);
      ASSERT_TRUE(on.ok());
      ASSERT_EQ(mine_on.size(), on->size());
      for (size_t k = 0; k < on->size(); ++k) {
        EXPECT_EQ(mine_on[k].job_name, (*on)[k].job_name);
        EXPECT_EQ(mine_on[k].status, (*on)[k].status);
        EXPECT_EQ(mine_on[k].instance_count, (*on)[k].instance_count);
      }
    }
  }

  ThreadPool pool_{2};
  RegistryCenter* reg_ = nullptr;
  std::vector<std::string> changes_;  // written on the view's executor, read after Sync
  int membership_changes_ = 0;
  std::unique_ptr<RegistryView> view_;
};

TEST_F(RegistryViewTest, WorksOutEveryStatusAsTheStatisticsApiDoes) {
  // crashed: no instance.
  Job("crashed");
  Put("/crashed/servers/10.0.0.1", "ENABLED");
  // disabled: every server DISABLED.
  Job("disabled");
  Put("/disabled/servers/10.0.0.1", "DISABLED");
  Put("/disabled/servers/10.0.0.2", "DISABLED");
  Instance("disabled", "10.0.0.1", 1);
  // unassigned: instances but no item owner.
  Job("unassigned");
  Put("/unassigned/servers/10.0.0.1", "ENABLED");
  Instance("unassigned", "10.0.0.1", 1);
  Put("/unassigned/sharding/0", "");
  // orphaned: an item owned by an instance that is gone.
  Job("orphaned");
  Put("/orphaned/servers/10.0.0.1", "ENABLED");
  Instance("orphaned", "10.0.0.1", 1);
  Put("/orphaned/sharding/0/instance", "10.0.0.1@-@1");
  Put("/orphaned/sharding/1/instance", "10.0.0.9@-@9");
  // ok: one disabled server of two, items assigned, a running, a disabled and a failover item.
  Job("ok");
  Put("/ok/servers/10.0.0.1", "ENABLED");
  Put("/ok/servers/10.0.0.2", "DISABLED");
  Instance("ok", "10.0.0.1", 1);
  Instance("ok", "10.0.0.1", 2);
  Put("/ok/sharding/0/instance", "10.0.0.1@-@1");
  Put("/ok/sharding/0/running", "");
  Put("/ok/sharding/1/instance", "10.0.0.1@-@2");
  Put("/ok/sharding/1/failover", "10.0.0.1@-@2");
  Put("/ok/sharding/2/instance", "10.0.0.1@-@2");
  Put("/ok/sharding/2/disabled", "");
  Put("/ok/leader/election/instance", "10.0.0.1@-@1");  // not the console's: ignored
  // unreadable config, and a top-level node that is no job.
  Put("/broken", "SCRIPT");
  Put("/broken/config", "cron: [unclosed\n");
  Put("/notajob/x", "");
  ASSERT_TRUE(view_->Start().ok());
  ExpectSameAsStatistics();
  auto rows = view_->Jobs(std::chrono::system_clock::now());
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[1].brief.job_name, "crashed");
  EXPECT_EQ(rows[1].brief.status, JobStatus::kCrashed);
  EXPECT_EQ(rows[2].brief.status, JobStatus::kDisabled);
  EXPECT_EQ(rows[3].brief.status, JobStatus::kOk);
  EXPECT_EQ(rows[4].brief.status, JobStatus::kShardingFlag);
  EXPECT_EQ(rows[5].brief.status, JobStatus::kShardingFlag);
  EXPECT_TRUE(rows[1].next_fire_time.has_value());
  EXPECT_FALSE(rows[0].next_fire_time.has_value());  // broken: no config to fire from
}

TEST_F(RegistryViewTest, FollowsChanges) {
  ASSERT_TRUE(view_->Start().ok());
  EXPECT_TRUE(view_->Jobs(std::chrono::system_clock::now()).empty());
  Job("a");
  Put("/a/servers/10.0.0.1", "ENABLED");
  Instance("a", "10.0.0.1", 7);
  Put("/a/sharding/0/instance", "10.0.0.1@-@7");
  ExpectSameAsStatistics();
  EXPECT_EQ(membership_changes_, 1);
  // An operation through the lifecycle API.
  ASSERT_TRUE(NewJobOperateAPI(*reg_)->Disable("a", "").ok());
  ExpectSameAsStatistics();
  EXPECT_EQ(view_->Jobs(std::chrono::system_clock::now())[0].brief.status, JobStatus::kDisabled);
  ASSERT_TRUE(NewJobOperateAPI(*reg_)->Enable("a", "").ok());
  // A new config: the copy re-parses it.
  Put("/a/config", "jobName: a\ncron: 0 0 * * * ?\nshardingTotalCount: 1\n");
  ExpectSameAsStatistics();
  EXPECT_EQ(view_->Job("a")->config->cron, "0 0 * * * ?");
  // The instance leaves, then the job goes.
  ASSERT_TRUE(reg_->Remove("/a/instances/10.0.0.1@-@7").ok());
  ExpectSameAsStatistics();
  EXPECT_EQ(view_->Jobs(std::chrono::system_clock::now())[0].brief.status, JobStatus::kCrashed);
  ASSERT_TRUE(reg_->Remove("/a").ok());
  ExpectSameAsStatistics();
  EXPECT_FALSE(view_->Job("a").has_value());
  EXPECT_EQ(membership_changes_, 2);
  EXPECT_FALSE(changes_.empty());
  EXPECT_EQ(changes_.back(), "a");
}

}  // namespace
}  // namespace elasticjob::console
