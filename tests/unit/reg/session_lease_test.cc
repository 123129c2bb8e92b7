// SessionLease over a FakeRegistryClient, on a clock of the test's: held while the newest
// answer's send time is within the bound, probed ahead past half of it (one probe on its way
// at most), renewed by nothing from a replaced session, and waited for until an answer, the
// session's replacement or the deadline.
#include "reg/session_lease.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "unit/reg/fake_registry_client.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kBound = 3'000'000'000;  // 3 s, in ns

class SessionLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.SetHooks({nullptr, [this](RequestKind kind) {
                      if (kind == RequestKind::kExists) probes_.fetch_add(1);
                    }});
    ASSERT_TRUE(fake_.Connect().ok());
  }
  // The client answers what it owed (a probe's answer may still be on its event thread)
  // before the lease goes, as the lease's contract asks.
  void TearDown() override { fake_.Close(); }

  FakeRegistryClient fake_;
  std::atomic<int> probes_{0};
  std::atomic<int64_t> now_{1'000'000'000'000};
  std::atomic<bool> closing_{false};
  SessionLease lease_{fake_,
                      {"/", std::chrono::nanoseconds(kBound), [this] { return closing_.load(); },
                       nullptr, [this] { return now_.load(); }}};
};

TEST_F(SessionLeaseTest, HeldWhileTheNewestAnswerIsWithinTheBoundAndProbedAheadPastHalfOfIt) {
  fake_.HoldReplies();
  EXPECT_FALSE(lease_.Held());  // nothing heard yet: asks
  EXPECT_EQ(fake_.held_replies(), 1u);
  EXPECT_FALSE(lease_.Held());  // one probe on its way at most
  EXPECT_EQ(fake_.held_replies(), 1u);
  EXPECT_EQ(lease_.expiry(), std::chrono::steady_clock::time_point::min());
  const int64_t sent = now_.load();
  fake_.ReleaseReplies();  // the probe's answer renews the lease from its send time
  // Waited for without Await, whose own probe would be on its way below.
  while (lease_.expiry() == std::chrono::steady_clock::time_point::min()) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(lease_.Held());
  EXPECT_EQ(lease_.expiry().time_since_epoch(), std::chrono::nanoseconds(sent + 2 * kBound));
  // Within half the bound: held, nothing asked.
  const int probes = probes_.load();
  now_ += kBound / 2 - 1;
  EXPECT_TRUE(lease_.Held());
  EXPECT_EQ(probes_.load(), probes);
  // Past half: still held, and asked ahead.
  now_ += 2;
  fake_.HoldReplies();
  EXPECT_TRUE(lease_.Held());
  EXPECT_EQ(fake_.held_replies(), 1u);
  // Past the bound with no answer: not held.
  now_ += kBound;
  EXPECT_FALSE(lease_.Held());
  fake_.ReleaseReplies();
}

TEST_F(SessionLeaseTest, AnAnswerFromAReplacedSessionRenewsNothing) {
  const uint64_t old_epoch = fake_.session_epoch();
  lease_.Heard(now_.load(), old_epoch);
  ASSERT_TRUE(lease_.Held());
  fake_.ReplaceSession();
  lease_.NewSession();
  fake_.HoldReplies();  // the new session's probe stays unanswered
  EXPECT_FALSE(lease_.Held());
  lease_.Heard(now_.load() + 1, old_epoch);  // an old request's late answer
  EXPECT_FALSE(lease_.Held());
  lease_.Heard(now_.load() + 2, fake_.session_epoch());
  EXPECT_TRUE(lease_.Held());
  fake_.ReleaseReplies();
}

TEST_F(SessionLeaseTest, AnOlderAnswerNeverMovesTheLeaseBack) {
  lease_.Heard(now_.load(), fake_.session_epoch());
  const auto expiry = lease_.expiry();
  lease_.Heard(now_.load() - kBound, fake_.session_epoch());
  EXPECT_EQ(lease_.expiry(), expiry);
}

TEST_F(SessionLeaseTest, AWaitEndsFalseWhenTheSessionIsReplacedOrTheRegistryCloses) {
  fake_.HoldReplies();  // no probe is answered
  std::atomic<int> outcome{-1};
  std::thread waiter(
      [&] { outcome = lease_.Await(std::chrono::steady_clock::now() + 60s) ? 1 : 0; });
  while (fake_.held_replies() == 0) std::this_thread::yield();  // it probed, and waits
  fake_.ReplaceSession();
  lease_.NewSession();
  waiter.join();
  EXPECT_EQ(outcome.load(), 0);

  std::thread closing_waiter(
      [&] { outcome = lease_.Await(std::chrono::steady_clock::now() + 60s) ? 1 : 0; });
  closing_ = true;
  lease_.WakeWaiters();
  closing_waiter.join();
  EXPECT_EQ(outcome.load(), 0);
  fake_.ReleaseReplies();
}

TEST_F(SessionLeaseTest, AWaitPastItsDeadlineEndsFalse) {
  fake_.HoldReplies();
  EXPECT_FALSE(lease_.Await(std::chrono::steady_clock::now()));
  fake_.ReleaseReplies();
}

}  // namespace
}  // namespace elasticjob::reg
