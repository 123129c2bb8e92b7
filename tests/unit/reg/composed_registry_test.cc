// ComposedRegistry over a fake client (fake_registry_client.h): what the registry does
// with the seam's answers, watches and session events, without a server. The behaviour
// against a real server is in tests/integration/reg (both backends).
#include "reg/composed_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "elasticjob/executor.h"
#include "unit/reg/fake_registry_client.h"

namespace elasticjob::reg {
namespace {

constexpr auto kWait = std::chrono::seconds(10);

class ZooKeeperRegistryOverAFakeClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = std::make_unique<FakeRegistryClient>();
    fake_ = client.get();
    RegistryUrl url;
    url.scheme = RegistryUrl::Scheme::kZooKeeper;
    url.name_space = "ns";
    url.cache_batch_ms = 0;  // a fired watch is read again at once
    reg_ = std::make_unique<ComposedRegistry>(url, std::move(client));
    ASSERT_TRUE(reg_->Init().ok());
  }

  uint64_t Requests() {
    uint64_t n = 0;
    for (const auto& [kind, count] : reg_->request_counts()) n += count;
    return n;
  }

  // A transaction sent without waiting; its outcome.
  std::future<Status> SendAsync(std::vector<TransactionOp> ops) {
    auto outcome = std::make_shared<std::promise<Status>>();
    reg_->ExecuteInTransactionAsync(std::move(ops), pool_,
                                    [outcome](Status s) { outcome->set_value(s); });
    return outcome->get_future();
  }

  ThreadPool pool_{1};
  FakeRegistryClient* fake_ = nullptr;  // owned by reg_
  std::unique_ptr<ComposedRegistry> reg_;
};

TEST_F(ZooKeeperRegistryOverAFakeClientTest, InitCreatesTheNamespaceAsAContainer) {
  EXPECT_TRUE(fake_->Read("/ns").has_value());
}

TEST_F(ZooKeeperRegistryOverAFakeClientTest,
       ATransactionOwedWhenTheSessionExpiresFailsWithSessionExpiredAndIsNotSentAgain) {
  fake_->HoldReplies();
  auto outcome = SendAsync({TransactionOp::Create("/a", "1")});
  ASSERT_EQ(fake_->held_replies(), 1u);
  fake_->Expire();  // the registry replaces the session, which answers what the old one owed
  ASSERT_EQ(outcome.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(outcome.get().code(), StatusCode::kSessionExpired);
  EXPECT_FALSE(fake_->Read("/ns/a").has_value());
  EXPECT_EQ(fake_->held_replies(), 0u);
}

TEST_F(ZooKeeperRegistryOverAFakeClientTest, ATransactionOwedWhenTheRegistryClosesIsCancelled) {
  fake_->HoldReplies();
  auto outcome = SendAsync({TransactionOp::Create("/a", "1")});
  reg_->Close();
  ASSERT_EQ(outcome.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(outcome.get().code(), StatusCode::kCancelled);
}

// Closed by its owner, the registry has no session: a transaction sent then is CANCELLED, as a
// blocking call is, not SESSION_EXPIRED (no server ended anything; a job shut down after its
// registry was closed warned that it could not leave the cluster).
TEST_F(ZooKeeperRegistryOverAFakeClientTest, ATransactionSentAfterTheRegistryClosedIsCancelled) {
  reg_->Close();
  auto outcome = SendAsync({TransactionOp::Create("/a", "1")});
  ASSERT_EQ(outcome.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(outcome.get().code(), StatusCode::kCancelled);
  EXPECT_EQ(reg_->Persist("/b", "1").code(), StatusCode::kCancelled);
}

TEST_F(ZooKeeperRegistryOverAFakeClientTest, TransactionsSentWhileOneIsOnItsWayLeaveTogether) {
  fake_->HoldReplies();
  auto first = SendAsync({TransactionOp::Create("/a", "1")});
  auto second = SendAsync({TransactionOp::Create("/b", "2")});
  auto third = SendAsync({TransactionOp::Create("/c", "3")});
  ASSERT_EQ(fake_->held_replies(), 1u);  // the others wait for its answer
  const auto multis = reg_->request_counts().at("multi");
  fake_->ReleaseReplies();  // its answer sends the other two as one multi-op
  for (auto* f : {&first, &second, &third}) {
    ASSERT_EQ(f->wait_for(kWait), std::future_status::ready);
    EXPECT_TRUE(f->get().ok());
  }
  EXPECT_EQ(reg_->request_counts().at("multi") - multis, 2u);
  EXPECT_EQ(fake_->Read("/ns/c"), "3");
}

TEST_F(ZooKeeperRegistryOverAFakeClientTest,
       AFiredWatchRefreshesTheCacheAndCachedReadsCostNothing) {
  fake_->Write("/ns/jobs/a", "1");
  std::promise<void> updated;
  std::atomic<bool> seen{false};
  auto sub = reg_->WatchTree(
      "/jobs", pool_,
      [&](const TreeEvent& e) {
        if (e.type == TreeEvent::Type::kUpdated && e.key == "/jobs/a" && e.value == "2" &&
            !seen.exchange(true)) {
          updated.set_value();
        }
      },
      nullptr);
  ASSERT_TRUE(sub.ok());
  const uint64_t before = Requests();
  EXPECT_EQ(*reg_->Get("/jobs/a"), "1");
  EXPECT_EQ(Requests(), before);
  fake_->Write("/ns/jobs/a", "2");  // another session's write: the value watch fires
  ASSERT_EQ(updated.get_future().wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(reg_->GetCached("/jobs/a").value, "2");
}

TEST_F(ZooKeeperRegistryOverAFakeClientTest, AnOwnWriteIsReadFromTheCacheAtOnce) {
  fake_->Write("/ns/jobs/a", "1");
  auto sub = reg_->WatchTree(
      "/jobs", pool_, [](const TreeEvent&) {}, nullptr);
  ASSERT_TRUE(sub.ok());
  ASSERT_TRUE(reg_->Persist("/jobs/a", "own").ok());
  EXPECT_EQ(reg_->GetCached("/jobs/a").value, "own");
}

}  // namespace
}  // namespace elasticjob::reg
