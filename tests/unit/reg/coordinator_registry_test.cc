#include "reg/coordinator_registry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/executor.h"
#include "elasticjob/reg/registry_center.h"
#include "unit/reg/application_registry.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

// Runs inline: the adapter's asynchronous calls answer before they return.
class InlineExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override { task(); }
};

TEST(CoordinatorRefTest, ARegistryTheLibraryMadeIsItsOwnProtocol) {
  auto made = NewRegistryCenter("memory://coordinator_ref_own");
  ASSERT_TRUE(made.ok());
  CoordinatorRef ref(**made);
  EXPECT_FALSE(ref.foreign());
  EXPECT_EQ(static_cast<RegistryCenter*>(&*ref), made->get());
  EXPECT_NE(ref->stats(), nullptr);
}

TEST(CoordinatorRefTest, AnApplicationsRegistryIsReachedThroughAnAdapterOverItsPublicApi) {
  ApplicationRegistry app("coordinator_ref_foreign");
  ASSERT_TRUE(app.Init().ok());
  CoordinatorRef ref(app);
  EXPECT_TRUE(ref.foreign());
  ASSERT_TRUE(ref->Persist("/a", "1").ok());
  EXPECT_EQ(app.Get("/a").value_or(""), "1");
  // No cache, no counts, no sessions.
  EXPECT_FALSE(ref->GetCached("/a").covered);
  EXPECT_EQ(ref->stats(), nullptr);
  EXPECT_EQ(ref->session_epoch(), 0u);
  EXPECT_TRUE(ref->LeaseHeld());
  EXPECT_EQ(ref->lease_expiry(), std::chrono::steady_clock::time_point::max());
  InlineExecutor inline_executor;
  std::vector<TreeEvent> seen;
  auto watch = ref->WatchTree(
      "/a", inline_executor, [&](const TreeEvent& e) { seen.push_back(e); }, nullptr);
  ASSERT_TRUE(watch.ok());
  EXPECT_FALSE((*watch)->changes().has_value());
  EXPECT_EQ((*watch)->change_counter(), nullptr);
}

TEST(ForeignRegistryTest, AsynchronousTransactionsRunTheApplicationsTransactionOnTheExecutor) {
  ApplicationRegistry app("foreign_async");
  ASSERT_TRUE(app.Init().ok());
  ForeignRegistry foreign(app);
  InlineExecutor inline_executor;
  Status outcome = Status(StatusCode::kInternal, "not called");
  foreign.ExecuteInTransactionAsync({TransactionOp::Create("/t", "x")}, inline_executor,
                                    [&](Status s) { outcome = s; });
  EXPECT_TRUE(outcome.ok()) << outcome;
  EXPECT_EQ(app.transactions.load(), 1);
  EXPECT_EQ(app.Get("/t").value_or(""), "x");
}

TEST(ForeignRegistryTest, AStampedTransactionIsAppliedAndStampedZeroForNoOrderOfWrites) {
  ApplicationRegistry app("foreign_stamped");
  ASSERT_TRUE(app.Init().ok());
  ForeignRegistry foreign(app);
  InlineExecutor inline_executor;
  std::optional<Result<int64_t>> stamp;
  foreign.ExecuteInTransactionStampedAsync({TransactionOp::Create("/s", "x")}, inline_executor,
                                           [&](Result<int64_t> r) { stamp = std::move(r); });
  ASSERT_TRUE(stamp.has_value() && stamp->ok());
  EXPECT_EQ(**stamp, 0);
  EXPECT_EQ(app.Get("/s").value_or(""), "x");
  // As the backends: a transaction that cannot be stamped is refused, and nothing is written.
  foreign.ExecuteInTransactionStampedAsync({TransactionOp::Delete("/s")}, inline_executor,
                                           [&](Result<int64_t> r) { stamp = std::move(r); });
  EXPECT_EQ(stamp->status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(app.IsExisted("/s").value_or(false));
}

}  // namespace
}  // namespace elasticjob::reg
