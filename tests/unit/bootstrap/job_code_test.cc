// JobCode, the one object a job's executor calls for an item's user code: the gate first,
// a workflow node's run through the node's wrapper, every other item straight to the typed
// job with the state pinned at its run's preparation.
#include "bootstrap/job_code.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/simulated_clock.h"
#include "error_handler/notification_sender.h"
#include "reg/memory/memory_registry.h"

namespace elasticjob::bootstrap {
namespace {

// Records what each item it runs was given.
class RecordingJob final : public SimpleJob {
 public:
  struct Seen {
    std::string parameter;
    std::optional<std::string> workflow_node;
  };
  void Execute(const ShardingContext& context) override {
    seen.push_back(
        {context.job_parameter, context.workflow != nullptr
                                    ? std::optional<std::string>(context.workflow->node_id())
                                    : std::nullopt});
  }
  std::vector<Seen> seen;
};

class JobCodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_->Init().ok());
    auto config = JobConfiguration::Builder("coded", 1).JobParameter("own").Build();
    ASSERT_TRUE(config.ok());
    auto typed =
        executor::TypedJob::Create(nullptr, std::make_shared<executor::SimpleJobExecutor>(job_),
                                   *config, "host@-@1", nullptr, sender_);
    ASSERT_TRUE(typed.ok());
    typed_ = *typed;
    auto node = std::make_shared<workflow::NodeJob>(typed_, runs_, [] { return "own"; });
    code_ = std::make_shared<JobCode>(typed_, node, gate_);
  }

  ShardingContext Context(std::string parameter) {
    return ShardingContext{"coded", "task", 1, std::move(parameter), 0, std::nullopt};
  }

  SimulatedClock clock_{Clock::WallTime{} + std::chrono::seconds(1'795'305'600)};
  std::unique_ptr<reg::ComposedRegistry> registry_ =
      reg::NewMemoryRegistry(std::make_shared<reg::MemoryServer>(clock_), "ns");
  ThreadPool pool_{1};
  std::shared_ptr<workflow::NodeRuns> runs_ =
      std::make_shared<workflow::NodeRuns>(*registry_, pool_, "coded");
  error_handler::NotificationSender sender_;
  std::shared_ptr<RecordingJob> job_ = std::make_shared<RecordingJob>();
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  std::shared_ptr<executor::TypedJob> typed_;
  std::shared_ptr<JobCode> code_;
};

TEST_F(JobCodeTest, AnOrdinaryItemRunsTheJobWithOrWithoutAPin) {
  std::shared_ptr<const void> pin = code_->Pin();
  ASSERT_NE(pin, nullptr);
  code_->ExecutePinned(Context("own"), pin.get());
  code_->Execute(Context("own"));
  ASSERT_EQ(job_->seen.size(), 2u);
  EXPECT_EQ(job_->seen[0].parameter, "own");
  EXPECT_FALSE(job_->seen[0].workflow_node.has_value());
}

TEST_F(JobCodeTest, AClosedGateCallsNothingOfTheUsersPinnedOrNot) {
  std::shared_ptr<const void> pin = code_->Pin();
  gate_->Close();
  code_->ExecutePinned(Context("own"), pin.get());
  code_->Execute(Context("own"));
  workflow::Envelope envelope{"flow", "i1", "n1", 1, "node-param"};
  code_->ExecutePinned(Context(workflow::EncodeEnvelope(envelope)), pin.get());
  EXPECT_TRUE(job_->seen.empty());
}

TEST_F(JobCodeTest, AWorkflowNodesItemGoesThroughTheNodeWithItsParameterAndRun) {
  std::shared_ptr<const void> pin = code_->Pin();
  workflow::Envelope with_param{"flow", "i1", "n1", 1, "node-param"};
  code_->ExecutePinned(Context(workflow::EncodeEnvelope(with_param)), pin.get());
  workflow::Envelope without{"flow", "i1", "n2", 1, std::nullopt};
  code_->ExecutePinned(Context(workflow::EncodeEnvelope(without)), pin.get());
  ASSERT_EQ(job_->seen.size(), 2u);
  EXPECT_EQ(job_->seen[0].parameter, "node-param");
  EXPECT_EQ(job_->seen[0].workflow_node, "n1");
  EXPECT_EQ(job_->seen[1].parameter, "own");  // the job's own, the node giving none
  EXPECT_EQ(job_->seen[1].workflow_node, "n2");
}

}  // namespace
}  // namespace elasticjob::bootstrap
