// TypedJob's pinned starts (executor::PinningJob): a start with the state pinned at a run's
// preparation runs that state while it is current, and the new one once a configuration
// change has replaced it.
#include "executor/typed_job.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "error_handler/notification_sender.h"

namespace elasticjob::executor {
namespace {

// Records, for each item it runs, the job parameter of the configuration it was made from.
class TaggedExecutor final : public JobItemExecutor {
 public:
  TaggedExecutor(std::string tag, std::shared_ptr<std::vector<std::string>> ran)
      : tag_(std::move(tag)), ran_(std::move(ran)) {}
  void Process(const JobConfiguration&, const ShardingContext&, JobRunState&) override {
    ran_->push_back(tag_);
  }

 private:
  const std::string tag_;
  const std::shared_ptr<std::vector<std::string>> ran_;
};

JobConfiguration ConfigWith(const std::string& parameter) {
  auto config = JobConfiguration::Builder("pinned", 1).JobParameter(parameter).Build();
  EXPECT_TRUE(config.ok());
  return *config;
}

class TypedJobTest : public ::testing::Test {
 protected:
  std::shared_ptr<TypedJob> Make() {
    auto job = TypedJob::Create(
        [ran = ran_](const JobConfiguration& config) -> Result<std::shared_ptr<JobItemExecutor>> {
          return std::shared_ptr<JobItemExecutor>(
              std::make_shared<TaggedExecutor>(config.job_parameter, ran));
        },
        nullptr, ConfigWith("first"), "host@-@1", nullptr, sender_);
    EXPECT_TRUE(job.ok());
    return *job;
  }

  error_handler::NotificationSender sender_;
  std::shared_ptr<std::vector<std::string>> ran_ = std::make_shared<std::vector<std::string>>();
  ShardingContext context_{"pinned", "task", 1, "", 0, std::nullopt};
};

TEST_F(TypedJobTest, AStartWithAPinRunsThePinnedExecutorWhileItIsCurrent) {
  auto job = Make();
  std::shared_ptr<const void> pin = job->Pin();
  ASSERT_NE(pin, nullptr);
  job->ExecutePinned(context_, pin.get());
  job->ExecutePinned(context_, nullptr);  // no pin: the current state
  EXPECT_EQ(*ran_, (std::vector<std::string>{"first", "first"}));
}

TEST_F(TypedJobTest, AStartWithAPinTakenBeforeAConfigChangeRunsTheNewExecutor) {
  auto job = Make();
  std::shared_ptr<const void> pin = job->Pin();
  ASSERT_TRUE(job->Update(ConfigWith("second")).ok());
  job->ExecutePinned(context_, pin.get());
  EXPECT_EQ(*ran_, (std::vector<std::string>{"second"}));
  // A pin taken after the change is current again.
  pin = job->Pin();
  job->ExecutePinned(context_, pin.get());
  EXPECT_EQ(*ran_, (std::vector<std::string>{"second", "second"}));
}

TEST_F(TypedJobTest, AConfigurationTheFactoryRejectsKeepsThePinCurrent) {
  auto job = TypedJob::Create(
      [ran = ran_](const JobConfiguration& config) -> Result<std::shared_ptr<JobItemExecutor>> {
        if (config.job_parameter == "bad") return InvalidArgument("jobParameter: 'bad'");
        return std::shared_ptr<JobItemExecutor>(
            std::make_shared<TaggedExecutor>(config.job_parameter, ran));
      },
      nullptr, ConfigWith("good"), "host@-@1", nullptr, sender_);
  ASSERT_TRUE(job.ok());
  std::shared_ptr<const void> pin = (*job)->Pin();
  EXPECT_FALSE((*job)->Update(ConfigWith("bad")).ok());
  EXPECT_EQ((*job)->Pin(), pin);
  (*job)->ExecutePinned(context_, pin.get());
  EXPECT_EQ(*ran_, (std::vector<std::string>{"good"}));
}

}  // namespace
}  // namespace elasticjob::executor
