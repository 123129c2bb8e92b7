// RemoveWithin: a registry that never answers does not hold the caller past its deadline
// (issue 31, item 8: a shutdown's leave waited for the client's timeouts and retries).
#include "reg/bounded_removal.h"

#include <gtest/gtest.h>

#include "reg/memory/memory_registry.h"
#include "unit/bootstrap/forwarding_registry.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

// Takes asynchronous transactions and never answers them (a frozen server).
class SilentRegistry final : public test_support::ForwardingRegistry {
 public:
  using ForwardingRegistry::ForwardingRegistry;
  void ExecuteInTransactionAsync(std::vector<TransactionOp>, Executor&,
                                 std::function<void(Status)>) override {}
};

TEST(RemoveWithinTest, ARegistryThatNeverAnswersGetsTimeoutNamingTheNodesAtTheDeadline) {
  auto memory = NewMemoryRegistry(std::make_shared<MemoryServer>(), "ns");
  ASSERT_TRUE(memory->Init().ok());
  SilentRegistry silent(*memory);
  Status s = RemoveWithin(silent, {"/job/instances/a", "/job/leader/election/instance"},
                          std::chrono::steady_clock::now() + 10ms);
  EXPECT_EQ(s.code(), StatusCode::kTimeout);
  EXPECT_NE(s.message().find("/job/instances/a"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("/job/leader/election/instance"), std::string::npos);
}

TEST(RemoveWithinTest, NodesAreDeletedAndAbsentOnesAreNoError) {
  auto memory = NewMemoryRegistry(std::make_shared<MemoryServer>(), "ns");
  ASSERT_TRUE(memory->Init().ok());
  ASSERT_TRUE(memory->PersistEphemeral("/job/instances/a", "").ok());
  EXPECT_TRUE(RemoveWithin(*memory, {"/job/instances/a", "/job/instances/gone"},
                           std::chrono::steady_clock::now() + 20s)
                  .ok());
  EXPECT_FALSE(*memory->IsExisted("/job/instances/a"));
}

}  // namespace
}  // namespace elasticjob::reg
