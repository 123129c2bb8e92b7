// LeaderLatch over a FakeRegistryClient: the first contender makes the latch's containers and
// holds it at once; a later one waits on its predecessor's node, not on a timer, and runs when
// it goes; a contender whose node went with its session makes it again; Close ends a wait;
// a container a cache believed there but the server had reaped is made again.
#include "reg/leader_latch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>

#include "unit/reg/fake_registry_client.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

constexpr char kLatch[] = "/ns/job/leader/election/latch";

// A contender that holds the latch, on a thread of its own, until Release.
class Holder {
 public:
  explicit Holder(LeaderLatch& latch)
      : thread_([this, &latch] {
          status_ = latch.ExecuteInLeader(kLatch, "latch", [this] {
            holding_.set_value();
            release_.get_future().wait();
          });
        }) {
    holding_.get_future().wait();
  }
  // Ends the callback; returns what ExecuteInLeader returned.
  Status Release() {
    release_.set_value();
    thread_.join();
    return status_;
  }

 private:
  std::promise<void> holding_;
  std::promise<void> release_;
  Status status_;
  std::thread thread_;  // last: started once the rest is there
};

class LeaderLatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.SetHooks({nullptr, [this](RequestKind kind) {
                      if (kind == RequestKind::kExists) exists_.fetch_add(1);
                    }});
    ASSERT_TRUE(fake_.Connect().ok());
    fake_.Write("/ns", "");
  }
  // The client closes its handle (no watch of the latch's is called after) before it goes.
  void TearDown() override { fake_.Close(); }

  // Waits (bounded) until `n` exists watches were set: as many contenders wait.
  bool WaitWatches(int n) {
    for (int i = 0; i < 20'000 && exists_.load() < n; ++i) std::this_thread::yield();
    return exists_.load() >= n;
  }
  std::vector<std::string> Contenders() {
    std::vector<std::string> out;
    (void)fake_.ChildrenSync(kLatch, nullptr, &out);
    return out;
  }

  FakeRegistryClient fake_;
  std::atomic<int> exists_{0};
  std::optional<bool> cached_;  // what the cache hook answers
  LeaderLatch latch_{fake_,
                     "/ns",
                     {[this](RequestKind, const std::function<ClientCode()>& attempt) {
                        return fake_.WithRetry(attempt);
                      },
                      [](ClientCode rc, const std::string& full) {
                        return Status(StatusCode::kInternal,
                                      std::string(ClientCodeText(rc)) + " " + full);
                      },
                      [this](const std::string&) { return cached_; }}};
};

TEST_F(LeaderLatchTest, TheFirstContenderMakesTheContainersAndHoldsTheLatchAtOnce) {
  std::vector<std::string> during;
  ASSERT_TRUE(
      latch_.ExecuteInLeader(kLatch, "/job/leader/election/latch", [&] { during = Contenders(); })
          .ok());
  ASSERT_EQ(during.size(), 1u);
  EXPECT_EQ(during[0].rfind("_c_", 0), 0u) << during[0];
  EXPECT_NE(during[0].find("-latch-"), std::string::npos) << during[0];
  EXPECT_TRUE(Contenders().empty());  // our node is deleted after the callback
  EXPECT_EQ(exists_.load(), 0);       // nothing to wait on
}

TEST_F(LeaderLatchTest, ALaterContenderWaitsForTheHolderAndRunsOnceItIsDone) {
  Holder first(latch_);
  std::atomic<bool> second_ran{false};
  std::thread second([&] {
    EXPECT_TRUE(latch_.ExecuteInLeader(kLatch, "latch", [&] { second_ran = true; }).ok());
  });
  ASSERT_TRUE(WaitWatches(1));  // it watches the holder's node
  EXPECT_FALSE(second_ran.load());
  EXPECT_EQ(Contenders().size(), 2u);
  EXPECT_TRUE(first.Release().ok());
  second.join();
  EXPECT_TRUE(second_ran.load());
  EXPECT_TRUE(Contenders().empty());
}

TEST_F(LeaderLatchTest, AContenderWhoseNodeWentWithTheSessionMakesItAgainAndHoldsTheLatch) {
  Holder first(latch_);
  std::promise<std::vector<std::string>> seen;
  std::thread second([&] {
    EXPECT_TRUE(
        latch_.ExecuteInLeader(kLatch, "latch", [&] { seen.set_value(Contenders()); }).ok());
  });
  ASSERT_TRUE(WaitWatches(1));
  fake_.Expire();  // both nodes go; the watch is told
  fake_.ReplaceSession();
  // The waiter sees its node gone, makes a new one (the holder's is gone too) and holds it.
  auto contenders = seen.get_future().get();
  EXPECT_EQ(contenders.size(), 1u);
  second.join();
  (void)first.Release();
}

TEST_F(LeaderLatchTest, CloseEndsAWaitWithCancelledAndRefusesLaterCallsUntilOpen) {
  Holder first(latch_);
  std::promise<Status> waited;
  std::thread second([&] { waited.set_value(latch_.ExecuteInLeader(kLatch, "latch", [] {})); });
  ASSERT_TRUE(WaitWatches(1));
  latch_.Close();
  Status s = waited.get_future().get();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s;
  EXPECT_NE(s.message().find("latch"), std::string::npos) << s;
  second.join();
  EXPECT_EQ(latch_.ExecuteInLeader(kLatch, "latch", [] {}).code(), StatusCode::kCancelled);
  EXPECT_TRUE(first.Release().ok());  // the holder's callback was running: it ends as it would
  latch_.Open();
  EXPECT_TRUE(latch_.ExecuteInLeader(kLatch, "latch", [] {}).ok());
}

TEST_F(LeaderLatchTest, AContainerACacheBelievesThereButTheServerReapedIsMadeAgain) {
  fake_.Write(kLatch, "");
  ASSERT_TRUE(latch_.ExecuteInLeader(kLatch, "latch", [] {}).ok());
  fake_.Remove(kLatch);            // reaped as an empty container
  fake_.Remove("/ns/job/leader");  // and the ones above it
  cached_ = true;                  // the caches have not heard yet
  bool ran = false;
  ASSERT_TRUE(latch_.ExecuteInLeader(kLatch, "latch", [&] { ran = true; }).ok());
  EXPECT_TRUE(ran);
  std::string value;
  EXPECT_EQ(fake_.GetSync(kLatch, nullptr, &value, nullptr), ClientCode::kOk);
}

}  // namespace
}  // namespace elasticjob::reg
