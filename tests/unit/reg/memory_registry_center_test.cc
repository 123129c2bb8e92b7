// Memory-only behaviour; the shared behaviour is in tests/integration/reg (both backends).
#include "reg/memory/memory_registry_center.h"

#include <gtest/gtest.h>

#include "elasticjob/simulated_clock.h"

namespace elasticjob::reg {
namespace {

TEST(MemoryRegistryCenterTest, RegistryTimeComesFromTheInjectedClock) {
  SimulatedClock clock(Clock::WallTime{} + std::chrono::seconds(1000));
  auto store = std::make_shared<MemoryStore>(clock);
  MemoryRegistryCenter reg(store, "ns");
  ASSERT_TRUE(reg.Init().ok());
  EXPECT_EQ(*reg.GetRegistryCenterTime("/systemTime/current"), 1'000'000);
  clock.Advance(std::chrono::seconds(5));
  EXPECT_EQ(*reg.GetRegistryCenterTime("/systemTime/current"), 1'005'000);
}

TEST(MemoryRegistryCenterTest, SameNamespaceSharesAStoreAcrossRegistries) {
  auto a = NewRegistryCenter("memory://shared-ns-test");
  auto b = NewRegistryCenter("memory://shared-ns-test");
  ASSERT_TRUE((*a)->Init().ok());
  ASSERT_TRUE((*b)->Init().ok());
  ASSERT_TRUE((*a)->Persist("/k", "v").ok());
  EXPECT_EQ(*(*b)->Get("/k"), "v");
  auto other = NewRegistryCenter("memory://other-ns-test");
  ASSERT_TRUE((*other)->Init().ok());
  EXPECT_FALSE(*(*other)->IsExisted("/k"));
}

TEST(MemoryRegistryCenterTest, ExpireSessionDropsEphemeralsAndKeepsTheRest) {
  auto store = std::make_shared<MemoryStore>();
  MemoryRegistryCenter reg(store, "ns");
  ASSERT_TRUE(reg.Init().ok());
  int64_t before = reg.session_id();
  ASSERT_TRUE(reg.PersistEphemeral("/e", "1").ok());
  ASSERT_TRUE(reg.Persist("/p", "2").ok());
  reg.ExpireSession();
  EXPECT_NE(reg.session_id(), before);
  EXPECT_FALSE(*reg.IsExisted("/e"));
  EXPECT_EQ(*reg.Get("/p"), "2");
}

// A failed step undoes the earlier ones, children lists included (the undo log keeps no copy
// of them: it reverses the changes), down to a container the transaction cascaded away and
// the parent's sequence counter.
TEST(MemoryRegistryCenterTest, AFailedTransactionLeavesEveryNodeAndChildListAsItWas) {
  auto store = std::make_shared<MemoryStore>();
  MemoryRegistryCenter reg(store, "ns");
  ASSERT_TRUE(reg.Init().ok());
  ASSERT_TRUE(reg.CreateContainer("/c").ok());
  ASSERT_TRUE(reg.Persist("/c/x", "1").ok());
  ASSERT_TRUE(reg.Persist("/p", "2").ok());
  auto first = reg.PersistSequential("/p/s-", "");
  ASSERT_TRUE(first.ok());
  const auto root_before = *reg.GetChildrenKeys("/");
  Status s = reg.ExecuteInTransaction({
      TransactionOp::Delete("/c/x"),  // the container /c goes with its last child
      TransactionOp::Create("/y", "3"),
      TransactionOp::Create("/p/s-", "", CreateMode::kPersistentSequential),
      TransactionOp::SetData("/p", "changed"), TransactionOp::SetData("/missing", "4"),  // fails
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(*reg.GetChildrenKeys("/"), root_before);
  EXPECT_EQ(*reg.GetChildrenKeys("/c"), std::vector<std::string>{"x"});
  EXPECT_EQ(*reg.Get("/c/x"), "1");
  EXPECT_FALSE(*reg.IsExisted("/y"));
  EXPECT_EQ(*reg.Get("/p"), "2");
  EXPECT_EQ(reg.GetChildrenKeys("/p")->size(), 1u);
  // Sequential names go on after the failed create.
  auto second = reg.PersistSequential("/p/s-", "");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(reg.GetChildrenKeys("/p")->size(), 2u);
  // The container still goes with its last child afterwards.
  ASSERT_TRUE(reg.ExecuteInTransaction({TransactionOp::Delete("/c/x")}).ok());
  EXPECT_FALSE(*reg.IsExisted("/c"));
}

TEST(MemoryRegistryCenterTest, CallsBeforeInitFail) {
  MemoryRegistryCenter reg(std::make_shared<MemoryStore>(), "ns");
  EXPECT_EQ(reg.Persist("/a", "").code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace elasticjob::reg
