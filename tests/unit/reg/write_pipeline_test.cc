// WritePipeline over a FakeRegistryClient: an idle pipeline sends at once, transactions sent
// while a multi-op is on its way leave together (within the step limit), a failing member of a
// batch is answered alone and the others as if sent alone, and every transaction is answered
// exactly once, also when the client closes.
#include "reg/write_pipeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "unit/reg/fake_registry_client.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

// One transaction's steps and its answers (the test fails if there is more than one).
struct Sent {
  std::vector<ClientOp> steps;
  std::mutex mu;
  std::condition_variable cv;
  int answers = 0;
  ClientCode rc = ClientCode::kOther;
  std::vector<ClientOpResult> results;
  uint64_t seq = 0;

  bool Wait() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 10s, [&] { return answers > 0; });
  }
};

ClientOp Create(const std::string& path) {
  ClientOp op;
  op.type = ClientOp::Type::kCreate;
  op.path = path;
  return op;
}

class WritePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.SetHooks({nullptr, [this](RequestKind kind) {
                      if (kind == RequestKind::kMulti) multis_.fetch_add(1);
                    }});
    ASSERT_TRUE(fake_.Connect().ok());
  }
  // The client answers what it owed before the pipeline goes, as its contract asks.
  void TearDown() override { fake_.Close(); }

  // Sends a transaction of `steps` through the pipeline.
  Sent* Send(std::vector<ClientOp> steps) {
    auto sent = std::make_unique<Sent>();
    sent->steps = std::move(steps);
    Sent* s = sent.get();
    sent_.push_back(std::move(sent));
    pipeline_.Send(s->steps, [s](ClientCode rc, std::vector<ClientOpResult> results, uint64_t seq) {
      std::lock_guard<std::mutex> lock(s->mu);
      ++s->answers;
      s->rc = rc;
      s->results = std::move(results);
      s->seq = seq;
      s->cv.notify_all();
    });
    return s;
  }

  FakeRegistryClient fake_;
  std::atomic<int> multis_{0};
  std::atomic<uint64_t> seq_{0};
  std::atomic<int> answered_{0};
  WritePipeline pipeline_{fake_,
                          {[this](std::atomic<uint64_t>* seq, const std::function<void()>& send) {
                             seq->store(++seq_);
                             send();
                           },
                           [this](int64_t, uint64_t epoch) {
                             EXPECT_EQ(epoch, fake_.session_epoch());
                             answered_.fetch_add(1);
                           },
                           nullptr}};
  std::vector<std::unique_ptr<Sent>> sent_;
};

TEST_F(WritePipelineTest, AnIdlePipelineSendsAtOnceAndWhatIsSentMeanwhileLeavesTogether) {
  fake_.HoldReplies();
  Sent* first = Send({Create("/a")});
  Sent* second = Send({Create("/b"), Create("/b/c")});
  Sent* third = Send({Create("/d")});
  EXPECT_EQ(pipeline_.queued(), 2u);  // behind the first, which went at once
  EXPECT_EQ(fake_.held_replies(), 1u);
  fake_.ReleaseReplies();
  for (Sent* s : {first, second, third}) {
    ASSERT_TRUE(s->Wait());
    EXPECT_EQ(s->rc, ClientCode::kOk);
    EXPECT_EQ(s->results.size(), s->steps.size());  // its own slice of the batch's results
  }
  EXPECT_EQ(multis_.load(), 2);  // the first, then the other two in one multi-op
  EXPECT_EQ(second->seq, third->seq);
  EXPECT_LT(first->seq, second->seq);
  EXPECT_EQ(answered_.load(), 2);
  EXPECT_EQ(fake_.Read("/b/c"), std::optional<std::string>(""));
  EXPECT_EQ(pipeline_.queued(), 0u);
}

TEST_F(WritePipelineTest, ABatchStaysWithinTheStepLimitAndKeepsTheOrderSent) {
  fake_.HoldReplies();
  Send({Create("/first")});
  std::vector<Sent*> big;
  for (int t = 0; t < 3; ++t) {
    std::vector<ClientOp> steps;
    for (int i = 0; i < 600; ++i) steps.push_back(Create(fmt::format("/t{}-{}", t, i)));
    big.push_back(Send(std::move(steps)));
  }
  fake_.ReleaseReplies();
  for (Sent* s : big) {
    ASSERT_TRUE(s->Wait());
    EXPECT_EQ(s->rc, ClientCode::kOk);
  }
  // 600 + 600 steps exceed kMaxBatchOps: each leaves alone, in the order sent.
  EXPECT_EQ(multis_.load(), 4);
  EXPECT_LT(big[0]->seq, big[1]->seq);
  EXPECT_LT(big[1]->seq, big[2]->seq);
}

TEST_F(WritePipelineTest, AFailingMemberIsAnsweredAloneAndTheOthersAsIfSentAlone) {
  fake_.Write("/taken", "x");
  fake_.HoldReplies();
  Sent* first = Send({Create("/first")});
  Sent* before = Send({Create("/before")});
  Sent* failing = Send({Create("/fresh"), Create("/taken")});
  Sent* after = Send({Create("/after")});
  Sent* also_failing = Send({Create("/taken")});
  fake_.ReleaseReplies();
  for (Sent* s : {first, before, failing, after, also_failing}) ASSERT_TRUE(s->Wait());
  EXPECT_EQ(before->rc, ClientCode::kOk);
  EXPECT_EQ(after->rc, ClientCode::kOk);
  EXPECT_EQ(failing->rc, ClientCode::kNodeExists);
  ASSERT_EQ(failing->results.size(), 2u);  // its own multi-op's results: the step to blame
  EXPECT_EQ(failing->results[0].code, ClientCode::kOk);
  EXPECT_EQ(failing->results[1].code, ClientCode::kNodeExists);
  EXPECT_EQ(also_failing->rc, ClientCode::kNodeExists);
  // Nothing of the failing one applied; the others are.
  EXPECT_FALSE(fake_.Read("/fresh").has_value());
  EXPECT_TRUE(fake_.Read("/before").has_value());
  EXPECT_TRUE(fake_.Read("/after").has_value());
  // The first, the batch, then "before" (the members ahead of the failing one), the failing
  // one, and each after it alone.
  EXPECT_EQ(multis_.load(), 6);
  EXPECT_LT(before->seq, failing->seq);
  EXPECT_LT(failing->seq, after->seq);
  EXPECT_LT(after->seq, also_failing->seq);
}

TEST_F(WritePipelineTest, EveryTransactionIsAnsweredOnceWhenTheClientCloses) {
  fake_.HoldReplies();
  Sent* on_its_way = Send({Create("/a")});
  Sent* queued = Send({Create("/b")});
  Sent* queued_too = Send({Create("/c")});
  fake_.Close();  // answers the one on its way; the batch behind it is refused at once
  for (Sent* s : {on_its_way, queued, queued_too}) {
    ASSERT_TRUE(s->Wait());
    EXPECT_NE(s->rc, ClientCode::kOk);
  }
  EXPECT_EQ(on_its_way->rc, ClientCode::kClosing);
  EXPECT_EQ(answered_.load(), 0);      // no answer from the server: the lease is not renewed
  Sent* later = Send({Create("/d")});  // idle again: sent, and refused
  ASSERT_TRUE(later->Wait());
  EXPECT_EQ(later->rc, ClientCode::kInvalidState);
  for (const auto& s : sent_) EXPECT_EQ(s->answers, 1);
  EXPECT_EQ(pipeline_.queued(), 0u);
}

}  // namespace
}  // namespace elasticjob::reg
