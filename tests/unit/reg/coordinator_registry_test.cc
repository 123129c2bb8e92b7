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

#include "elasticjob/api/simple_job.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/executor.h"
#include "elasticjob/metrics/metrics.h"
#include "elasticjob/reg/registry_center.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

// A registry an application wrote itself, as ElasticJob users may implement
// CoordinatorRegistryCenter: it keeps its nodes in a memory:// registry and reaches it through
// the public API only (the pointer is a RegistryCenter, never the library's class).
class ApplicationRegistry final : public RegistryCenter {
 public:
  explicit ApplicationRegistry(const std::string& name_space)
      : store_(std::move(NewRegistryCenter("memory://" + name_space)).value()) {}

  Status Init() override { return store_->Init(); }
  void Close() override { store_->Close(); }
  Result<std::string> Get(std::string_view key) override { return store_->Get(key); }
  Result<std::string> GetDirectly(std::string_view key) override {
    return store_->GetDirectly(key);
  }
  Result<bool> IsExisted(std::string_view key) override { return store_->IsExisted(key); }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    return store_->GetChildrenKeys(key);
  }
  Result<int> GetNumChildren(std::string_view key) override { return store_->GetNumChildren(key); }
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override {
    return store_->GetChildrenKeysDirectly(key);
  }
  Status Persist(std::string_view key, std::string_view value) override {
    return store_->Persist(key, value);
  }
  Status Update(std::string_view key, std::string_view value) override {
    return store_->Update(key, value);
  }
  Status PersistEphemeral(std::string_view key, std::string_view value) override {
    return store_->PersistEphemeral(key, value);
  }
  Result<std::string> PersistSequential(std::string_view key, std::string_view value) override {
    return store_->PersistSequential(key, value);
  }
  Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                 std::string_view value) override {
    return store_->PersistEphemeralSequential(key, value);
  }
  Status CreateContainer(std::string_view key) override { return store_->CreateContainer(key); }
  Status Remove(std::string_view key) override { return store_->Remove(key); }
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    ++transactions;
    return store_->ExecuteInTransaction(ops);
  }
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override {
    return store_->GetRegistryCenterTime(key);
  }
  Result<std::unique_ptr<Subscription>> Watch(
      std::string_view key, Executor& executor,
      std::function<void(const TreeEvent&)> callback) override {
    return store_->Watch(key, executor, std::move(callback));
  }
  std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) override {
    return store_->AddConnectionStateListener(executor, std::move(callback));
  }
  Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) override {
    return store_->ExecuteInLeader(key, callback);
  }

  std::atomic<int> transactions{0};

 private:
  std::unique_ptr<RegistryCenter> store_;
};

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
