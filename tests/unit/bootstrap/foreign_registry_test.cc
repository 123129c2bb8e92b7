// Jobs and metrics on a registry an application wrote itself (reg::ForeignRegistry).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "elasticjob/api/simple_job.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/metrics/metrics.h"
#include "elasticjob/reg/registry_center.h"
#include "unit/reg/application_registry.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

TEST(ForeignRegistryTest, MetricsIgnoreAnApplicationsRegistry) {
  ApplicationRegistry app("foreign_metrics");
  ASSERT_TRUE(app.Init().ok());
  auto metrics = Metrics::Create();
  metrics->AddRegistry(app, "app");  // nothing counted there: ignored
  std::string why;
  EXPECT_FALSE(metrics->Ready(&why));
  EXPECT_EQ(why, "no registry center");
  auto own = NewRegistryCenter("memory://foreign_metrics_own");
  ASSERT_TRUE(own.ok() && (*own)->Init().ok());
  metrics->AddRegistry(**own, "own");
  EXPECT_TRUE(metrics->Ready(&why)) << why;
}

// Reports each item's fencing token.
class TokenJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& context) override {
    std::lock_guard<std::mutex> l(mu_);
    tokens_[context.sharding_item] = context.fencing_token();
    if (tokens_.size() == 2) all_.set_value();
  }
  std::future<void> all() { return all_.get_future(); }
  std::map<int, int64_t> tokens() {
    std::lock_guard<std::mutex> l(mu_);
    return tokens_;
  }

 private:
  std::mutex mu_;
  std::map<int, int64_t> tokens_;
  std::promise<void> all_;
};

TEST(ForeignRegistryTest, AJobRunsOnAnApplicationsRegistryWithFencingTokenZero) {
  ApplicationRegistry app("foreign_job");
  ASSERT_TRUE(app.Init().ok());
  auto job = std::make_shared<TokenJob>();
  auto ran = job->all();
  OneOffJobBootstrap bootstrap(app, job, *JobConfiguration::Builder("appJob", 2).Build());
  ASSERT_TRUE(bootstrap.Execute().ok());
  ASSERT_EQ(ran.wait_for(30s), std::future_status::ready) << "the job never ran";
  EXPECT_EQ(job->tokens(), (std::map<int, int64_t>{{0, 0}, {1, 0}}));
  // Its claims went through the application's transactions (monitorExecution is on).
  EXPECT_GT(app.transactions.load(), 0);
  bootstrap.Shutdown();
  // The run's marks are gone, through the application's registry.
  EXPECT_TRUE(app.GetChildrenKeysDirectly("/appJob/sharding/0").ok());
  EXPECT_FALSE(app.IsExisted("/appJob/sharding/0/running").value_or(true));
}

}  // namespace
}  // namespace elasticjob::reg
