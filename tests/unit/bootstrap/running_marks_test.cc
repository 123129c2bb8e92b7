// Never one item on two instances at once (issue 24): a run claims its items (their running
// marks) before any starts, a mark whose owner is still registered is a conflict, and a run
// picked up long after its fire time (a pause that may have outlived the session) does not
// start. Instances are sessions on one memory store; time is a SimulatedClock.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "unit/bootstrap/forwarding_registry.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

class RunningMarksTest : public test_support::RuntimeTest {
 protected:
  // Advances to `fire` and waits until `n` cron triggers of that fire time are reported.
  bool FireAt(Clock::WallTime fire, size_t n = 1) {
    clock_.Advance(fire - clock_.WallNow());
    return rec_.Wait([fire, n](const auto&, const auto& triggers) {
      size_t seen = 0;
      for (const auto& t : triggers) {
        seen += t.source == TriggerReport::Source::kCron && t.scheduled == fire ? 1 : 0;
      }
      return seen >= n;
    });
  }
  Clock::WallTime Next() { return clock_.WallNow() + 1s; }
  // Defined below, after the registry gate it uses.
  void PickUpAPreparedRunLongAfterItsFireTime(bool claim_answered_before_the_pause,
                                              bool misfire = true);
  // (item, instance) of the runs for the cron fire time `fire`.
  std::set<std::pair<int, std::string>> RunsAt(Clock::WallTime fire) {
    std::set<std::pair<int, std::string>> out;
    for (const auto& r : rec_.runs()) {
      if (r.fire_time == fire) out.emplace(r.item, r.instance_id);
    }
    return out;
  }
};

// A job that records whether each item's running mark named this instance when it started.
class MarkCheckingJob final : public SimpleJob {
 public:
  MarkCheckingJob(RegistryCenter& reg, std::string id) : reg_(reg), id_(std::move(id)) {}
  void Execute(const ShardingContext& ctx) override {
    auto mark = reg_.GetDirectly("/job/sharding/" + std::to_string(ctx.sharding_item) + "/running");
    ++(mark.ok() && *mark == id_ ? marked_ : unmarked_);
  }
  int marked() const { return marked_.load(); }
  int unmarked() const { return unmarked_.load(); }

 private:
  RegistryCenter& reg_;
  const std::string id_;
  std::atomic<int> marked_{0};
  std::atomic<int> unmarked_{0};
};

TEST_F(RunningMarksTest, ItemsStartOnlyOnceTheirRunningMarksAreWritten) {
  auto reg = Session();
  auto job = std::make_shared<MarkCheckingJob>(*reg, Id("10.0.0.1"));
  ScheduleJobBootstrap boot(*reg, job, Config(3), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 3, 1));
  // The first fires are worked out at the fire time, the later ones prepared ahead: both.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(rec_.WaitRuns(12)) << rec_.Dump();
  EXPECT_EQ(job->unmarked(), 0) << "items started before their running marks were written";
  EXPECT_EQ(job->marked(), 12);
}

TEST_F(RunningMarksTest, AMarkOfAnInstanceStillRegisteredIsAConflictNotReplaced) {
  auto r1 = Session(), r2 = Session();
  ScheduleJobBootstrap a(*r1, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(2), Options("10.0.0.2"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 2)) << DumpTree(*r1, "/job");
  const int a_item = *r1->Get("/job/sharding/0/instance") == Id("10.0.0.1") ? 0 : 1;
  const std::string a_mark = "/job/sharding/" + std::to_string(a_item) + "/running";
  // B (still registered) is running A's item: a stale view of B's, or a run from before a
  // resharding. A must leave it, and its mark, alone.
  auto other = Session();
  ASSERT_TRUE(other->Persist(a_mark, Id("10.0.0.2")).ok());
  const auto fire = Next();
  ASSERT_TRUE(FireAt(fire, 2)) << rec_.Dump();
  EXPECT_EQ(RunsAt(fire), (std::set<std::pair<int, std::string>>{{1 - a_item, Id("10.0.0.2")}}))
      << rec_.Dump();
  EXPECT_EQ(*other->GetDirectly(a_mark), Id("10.0.0.2")) << "the live owner's mark was replaced";
  // Once that run is over, A runs its item again.
  ASSERT_TRUE(other->Remove(a_mark).ok());
  const auto after = Next();
  ASSERT_TRUE(FireAt(after, 2)) << rec_.Dump();
  EXPECT_EQ(RunsAt(after).count({a_item, Id("10.0.0.1")}), 1u) << rec_.Dump();
}

TEST_F(RunningMarksTest, AMarkOfAnInstanceNoLongerRegisteredIsReplaced) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  // Left by a crashed instance (failover on keeps marks persistent).
  ASSERT_TRUE(reg->Persist("/job/sharding/0/running", "10.9.9.9@-@1").ok());
  const auto fire = Next();
  ASSERT_TRUE(FireAt(fire)) << rec_.Dump();
  ASSERT_TRUE(rec_.WaitRuns(2)) << rec_.Dump();
  EXPECT_EQ(RunsAt(fire),
            (std::set<std::pair<int, std::string>>{{0, Id("10.0.0.1")}, {1, Id("10.0.0.1")}}))
      << rec_.Dump();
  // Ours, then cleared when the run ended.
  EXPECT_TRUE(WaitRegistry(*reg, [&] { return !reg->GetDirectly("/job/sharding/0/running").ok(); }))
      << DumpTree(*reg, "/job");
}

// A session that, once armed, holds back the next claim of running marks (a transaction
// creating `.../running` nodes: a prepared run's claim) or sends it on at once, and holds
// back the next removal of such marks, until the test releases it. It tells when each was
// sent and when its answer had been delivered (the caller's `done` returned), and calls the
// test's OnRemovalAnswer as the removal is answered, before the caller's `done` (which may
// claim the marks again). The rest forwards.
class MarkGate final : public test_support::ForwardingRegistry {
 public:
  enum Step { kClaim, kRemoval };
  explicit MarkGate(RegistryCenter& inner) : ForwardingRegistry(inner) {}
  void Arm(bool hold_claim) {
    std::lock_guard<std::mutex> l(mu_);
    for (Gate& g : gates_) g = Gate{};
    gates_[kClaim].armed = gates_[kRemoval].armed = true;
    gates_[kClaim].hold = hold_claim;
    gates_[kRemoval].hold = true;
  }
  // Wait (bounded) until the step's transaction was sent, or its answer delivered.
  bool WaitSent(Step step) {
    return WaitFor([&] { return gates_[step].sent; });
  }
  bool WaitAnswered(Step step) {
    return WaitFor([&] { return gates_[step].answered; });
  }
  // Called with the removal's answer, before it is delivered. REQUIRES: before Arm.
  void OnRemovalAnswer(std::function<void()> f) { on_removal_answer_ = std::move(f); }
  // Sends the step's transaction held back on. REQUIRES: WaitSent(step).
  void Release(Step step) {
    std::function<void()> send;
    {
      std::lock_guard<std::mutex> l(mu_);
      send = std::exchange(gates_[step].held, nullptr);
    }
    if (send) send();
  }

  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override {
    if (!Catch(kClaim, ops)) {
      return inner().ExecuteInTransactionStampedAsync(std::move(ops), executor, std::move(done));
    }
    Send(kClaim, [this, ops, &executor, done] {
      inner().ExecuteInTransactionStampedAsync(ops, executor, [this, done](Result<int64_t> r) {
        done(std::move(r));
        Answered(kClaim);
      });
    });
  }
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override {
    if (!Catch(kRemoval, ops)) {
      return inner().ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
    }
    Send(kRemoval, [this, ops, &executor, done] {
      inner().ExecuteInTransactionAsync(ops, executor, [this, done](Status s) {
        if (on_removal_answer_) on_removal_answer_();
        done(std::move(s));
        Answered(kRemoval);
      });
    });
  }

 private:
  struct Gate {
    bool armed = false;
    bool hold = false;
    bool sent = false;
    std::function<void()> held;  // the transaction held back, until Release
    bool answered = false;
  };
  // Whether `ops` is the armed step's transaction (then it is the step's: Send sends it).
  bool Catch(Step step, const std::vector<TransactionOp>& ops) {
    const auto type = step == kClaim ? TransactionOp::Type::kCreate : TransactionOp::Type::kDelete;
    const bool marks = std::any_of(ops.begin(), ops.end(), [&](const TransactionOp& op) {
      return op.type == type && op.key.ends_with("/running");
    });
    std::lock_guard<std::mutex> l(mu_);
    if (!gates_[step].armed || !marks) return false;
    gates_[step].armed = false;
    return true;
  }
  void Send(Step step, std::function<void()> send) {
    {
      std::lock_guard<std::mutex> l(mu_);
      gates_[step].sent = true;
      cv_.notify_all();
      if (gates_[step].hold) {
        gates_[step].held = std::move(send);
        return;
      }
    }
    send();
  }
  void Answered(Step step) {
    std::lock_guard<std::mutex> l(mu_);
    gates_[step].answered = true;
    cv_.notify_all();
  }
  bool WaitFor(const std::function<bool()>& ready) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, ready);
  }

  std::function<void()> on_removal_answer_;  // set before Arm
  std::mutex mu_;
  std::condition_variable cv_;
  Gate gates_[2];  // guarded by mu_
};

// Issue 24: a run prepared before a pause (SIGSTOP, a debugger, a VM migration) longer than
// the session must not start after it: others have its items by then. It is let go at its
// fire time, overdue (docs/runtime.md, RunPath step 1), and removes the marks it claimed.
// Its claim, sent in the preparation's lead time, may be answered before the pause or only
// after it: `claim_answered_before_the_pause` picks the order, the gate forces it. The
// removal of its marks is held back until the fire time of the resumption, which is not
// overdue, has found the job's lane still held by the skipped run (a misfire) in either
// order. With `misfire` on, that fire runs once the skipped run lets go of the lane, as a
// misfire re-run (step 8: no misfire is lost), without waiting for the clock to move; with
// it off, it does not run (a later fire time does).
void RunningMarksTest::PickUpAPreparedRunLongAfterItsFireTime(bool claim_answered_before_the_pause,
                                                              bool misfire) {
  auto session = Session();
  MarkGate reg(*session);
  // The marks left when the skipped run's removal is answered (before a re-run claims them).
  std::vector<std::string> left;
  reg.OnRemovalAnswer([&] {
    for (const char* mark : {"/job/sharding/0/running", "/job/sharding/1/running"}) {
      if (session->GetDirectly(mark).ok()) left.push_back(mark);
    }
  });
  JobConfiguration config = Config(2);
  config.misfire = misfire;
  ScheduleJobBootstrap boot(reg, std::make_shared<GateJob>(), config, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*session, 2, 1));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(FireAt(Next())) << rec_.Dump();  // later ones prepared
  const auto fire = Next();
  reg.Arm(/*hold_claim=*/!claim_answered_before_the_pause);
  clock_.Advance(fire - 10ms - clock_.WallNow());  // past its preparation (200 ms ahead)
  if (claim_answered_before_the_pause) {
    ASSERT_TRUE(reg.WaitAnswered(MarkGate::kClaim)) << rec_.Dump();
  } else {
    ASSERT_TRUE(reg.WaitSent(MarkGate::kClaim)) << rec_.Dump();
  }
  // The process stops here and resumes 5 s later: every timer due meanwhile fires at once.
  clock_.Advance(5s + 10ms);
  const auto resumed = clock_.WallNow();
  auto overdue_runs = [&] {
    size_t n = 0;
    for (const auto& r : rec_.runs()) {
      n += r.fire_time.has_value() && *r.fire_time >= fire && *r.fire_time < resumed ? 1 : 0;
    }
    return n;
  };
  // The fire time of the resumption, not overdue, comes at once, while the lane is held: a
  // misfire (noted, with misfire on, for the run that holds the lane to re-run).
  TriggerReport resumption;
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
    for (const TriggerReport& t : triggers) {
      if (t.source == TriggerReport::Source::kCron && t.scheduled >= resumed) {
        resumption = t;
        return true;
      }
    }
    return false;
  })) << rec_.Dump();
  EXPECT_EQ(resumption.outcome, TriggerReport::Outcome::kMisfire) << rec_.Dump();
  if (!claim_answered_before_the_pause) {
    reg.Release(MarkGate::kClaim);
    ASSERT_TRUE(reg.WaitAnswered(MarkGate::kClaim)) << rec_.Dump();
  }
  // The skipped run ends with the removal of its marks: had it started, its items' reports
  // would have come before.
  ASSERT_TRUE(reg.WaitSent(MarkGate::kRemoval)) << rec_.Dump() << DumpTree(*session, "/job");
  reg.Release(MarkGate::kRemoval);
  ASSERT_TRUE(reg.WaitAnswered(MarkGate::kRemoval)) << rec_.Dump();
  EXPECT_EQ(overdue_runs(), 0u) << "an overdue fire time's items ran\n" << rec_.Dump();
  EXPECT_TRUE(left.empty()) << "marks left: " << left.size() << "\n" << DumpTree(*session, "/job");
  auto reruns = [&] {
    std::set<int> items;
    for (const auto& r : rec_.runs()) {
      if (r.misfire_rerun) items.insert(r.item);
    }
    return items;
  };
  if (misfire) {
    // The resumption's fire is re-run by the skipped run once it has let go (the clock has
    // not moved): both items, as a misfire re-run (no fire time of their own), reported
    // with the skipped run, whose report stands for its re-run (a normal run's does too).
    ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
      return std::any_of(triggers.begin(), triggers.end(), [&](const TriggerReport& t) {
        return t.source == TriggerReport::Source::kCron && t.scheduled == fire;
      });
    })) << "the fire time of the resumption was lost\n"
        << rec_.Dump();
    EXPECT_EQ(reruns(), (std::set<int>{0, 1})) << rec_.Dump();
    // Its misfire marks go with the re-run's end.
    EXPECT_TRUE(WaitRegistry(*session, [&] {
      return !session->IsExisted("/job/sharding/0/misfire").value_or(true) &&
             !session->IsExisted("/job/sharding/1/misfire").value_or(true);
    })) << DumpTree(*session, "/job");
  }
  // The lane is free again: the next fire time runs as usual (a re-run that still held it
  // would make it a misfire).
  const auto next = Next();
  ASSERT_TRUE(FireAt(next)) << rec_.Dump();
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
    return std::any_of(triggers.begin(), triggers.end(), [&](const TriggerReport& t) {
      return t.source == TriggerReport::Source::kCron && t.scheduled == next &&
             t.outcome == TriggerReport::Outcome::kRan;
    });
  })) << rec_.Dump();
  EXPECT_EQ(overdue_runs(), 0u) << "an overdue fire time's items ran\n" << rec_.Dump();
  if (!misfire) {
    EXPECT_TRUE(reruns().empty()) << "re-run with misfire off\n" << rec_.Dump();
  }
}

TEST_F(RunningMarksTest, ARunPickedUpLongAfterItsFireTimeDoesNotStartThoughItsClaimCameBefore) {
  PickUpAPreparedRunLongAfterItsFireTime(/*claim_answered_before_the_pause=*/true);
}

TEST_F(RunningMarksTest, ARunPickedUpLongAfterItsFireTimeDoesNotStartWhenItsClaimComesAfter) {
  PickUpAPreparedRunLongAfterItsFireTime(/*claim_answered_before_the_pause=*/false);
}

// Those two also check that the fire time of the resumption, which came while the skipped
// run held the lane to remove its marks, is re-run once that run lets go. With misfire off
// it is skipped, as any fire that finds the lane held is.
TEST_F(RunningMarksTest, WithMisfireOffAFireDueWhileAnOverdueRunRemovesItsMarksIsSkipped) {
  PickUpAPreparedRunLongAfterItsFireTime(/*claim_answered_before_the_pause=*/true,
                                         /*misfire=*/false);
}

// Issue 24: after a partition, a mark of the leader's own that no run of it holds (its
// clearing lost with the connection) kept the leader waiting for "running items" for good,
// `leader/sharding/necessary` set and no item running.
TEST_F(RunningMarksTest, AStaleMarkOfTheLeadersOwnDoesNotHoldUpSharding) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(reg->Persist("/job/sharding/0/running", Id("10.0.0.1")).ok());
  ASSERT_TRUE(reg->Persist("/job/leader/sharding/necessary", "").ok());
  const auto fire = Next();
  ASSERT_TRUE(FireAt(fire)) << rec_.Dump() << DumpTree(*reg, "/job");
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    size_t n = 0;
    for (const auto& r : runs) n += r.fire_time == fire ? 1 : 0;
    return n == 2;
  })) << rec_.Dump()
      << DumpTree(*reg, "/job");
  EXPECT_FALSE(*reg->IsExisted("/job/leader/sharding/necessary"));
}

// Issue 24: an operator removing the leader's instance node (ElasticJob's console "shutdown")
// stopped it without a resharding flag, so its items stayed assigned to it, run by nobody,
// until the reconcile ten minutes later (when the other instances are not ours to raise it).
TEST_F(RunningMarksTest, AnOperatorShutdownOfTheLeaderRaisesTheReshardingFlag) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  // Another instance (a Java one, say) that shares the job but is not this process's.
  auto other = Session();
  ASSERT_TRUE(other->Persist("/job/servers/10.0.0.9", "ENABLED").ok());
  ASSERT_TRUE(other->PersistEphemeral("/job/instances/10.0.0.9@-@1", "jobInstanceId: x").ok());
  // Its own listener raises the flag on seeing its instance added (ElasticJob's
  // ListenServersChangedJobListener); ours leave a joiner's flag to the joiner.
  ASSERT_TRUE(other->Persist("/job/leader/sharding/necessary", "").ok());
  // Sharded at once (no run of this fire yet: ShardingService's guard), then a fire runs.
  ASSERT_TRUE(WaitSettled(*reg, 2, 2)) << DumpTree(*reg, "/job");
  ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(other->Remove("/job/instances/" + Id("10.0.0.1")).ok());
  // Its items go to the other instance: the flag is up for the next leader, or this one
  // (still leader when it raised it) sharded them away before it stopped.
  EXPECT_TRUE(WaitRegistry(*other, [&] {
    const bool moved = other->Get("/job/sharding/0/instance").value_or("") == "10.0.0.9@-@1" &&
                       other->Get("/job/sharding/1/instance").value_or("") == "10.0.0.9@-@1";
    return (moved || other->IsExisted("/job/leader/sharding/necessary").value_or(false)) &&
           !other->IsExisted("/job/leader/election/instance").value_or(true);
  })) << DumpTree(*other, "/job");
}

// Records each item run's fencing token: (item, token) in the order the runs started.
class TokenJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    std::lock_guard<std::mutex> l(mu_);
    tokens_.emplace_back(ctx.sharding_item, ctx.fencing_token());
  }
  std::vector<std::pair<int, int64_t>> tokens() {
    std::lock_guard<std::mutex> l(mu_);
    return tokens_;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<int, int64_t>> tokens_;
};

// Issue 31: a freeze just after a fire time, while the run's items were being started, let
// the resumed instance start the rest of them although its session had expired meanwhile.
// Each start now needs a recent word from the registry (the session lease).
TEST_F(RunningMarksTest, ItemsWaitForTheRegistrysWordWhileTheLeaseHasLapsed) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  ASSERT_TRUE(FireAt(Next())) << rec_.Dump();  // one run before: the prepared path after it
  ASSERT_TRUE(rec_.WaitRuns(2));
  reg->SetLeaseHeldForTesting(false);
  const auto fire = Next();
  clock_.Advance(fire - clock_.WallNow());
  ASSERT_TRUE(reg->WaitLeaseWaitersForTesting(1, 20s)) << rec_.Dump();
  EXPECT_EQ(job->started(), 2) << "an item started without a word from the registry";
  reg->SetLeaseHeldForTesting(true);  // the registry answers in the same session
  ASSERT_TRUE(rec_.WaitRuns(4)) << rec_.Dump();
  EXPECT_EQ(RunsAt(fire),
            (std::set<std::pair<int, std::string>>{{0, Id("10.0.0.1")}, {1, Id("10.0.0.1")}}));
  for (const auto& r : rec_.runs()) EXPECT_TRUE(r.success) << r.error;
  EXPECT_EQ(job->started(), 4);
}

TEST_F(RunningMarksTest, AnItemWaitingForTheLeaseNeverStartsOnceTheSessionHasExpired) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  reg->SetLeaseHeldForTesting(false);
  const auto fire = Next();
  clock_.Advance(fire - clock_.WallNow());
  ASSERT_TRUE(reg->WaitLeaseWaitersForTesting(1, 20s)) << rec_.Dump();
  // The registry's word: the session is gone (others may run the items now).
  reg->ExpireSession();
  ASSERT_TRUE(rec_.WaitRuns(2)) << rec_.Dump();
  EXPECT_EQ(job->started(), 0) << "an item of a run whose session expired started";
  for (const auto& r : rec_.runs()) {
    EXPECT_FALSE(r.success);
    EXPECT_NE(r.error.find("cancelled"), std::string::npos) << r.error;
  }
}

TEST_F(RunningMarksTest, EveryClaimOfAnItemCarriesALargerFencingTokenWhoeverMakesIt) {
  auto r1 = Session(), r2 = Session();
  auto j1 = std::make_shared<TokenJob>(), j2 = std::make_shared<TokenJob>();
  ScheduleJobBootstrap a(*r1, j1, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 1));
  // Worked out at the fire time, then prepared ahead: both paths carry tokens.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(rec_.WaitRuns(6));
  auto first = j1->tokens();
  ASSERT_EQ(first.size(), 6u);
  std::map<int, int64_t> last;
  for (size_t i = 0; i < first.size(); i += 2) {
    // One claim per run: its two items share its token, and each run's is larger.
    auto [item_a, token_a] = first[i];
    auto [item_b, token_b] = first[i + 1];
    EXPECT_GT(token_a, 0);
    EXPECT_EQ(token_a, token_b);
    for (int item : {item_a, item_b}) {
      EXPECT_GT(token_a, last[item]) << "item " << item;
      last[item] = token_a;
    }
  }
  // The items move to another instance: its claims are later still.
  a.Shutdown();
  ScheduleJobBootstrap b(*r2, j2, Config(2), Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r2, 2, 1));
  ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(rec_.WaitRuns(8));
  for (auto [item, token] : j2->tokens()) EXPECT_GT(token, last[item]) << "item " << item;
}

// A session that tells when, once armed, the children of a key ending with `suffix` are read
// (a trigger waiting for the sharding reads the instances); the rest forwards.
class ChildrenReadSignal final : public test_support::ForwardingRegistry {
 public:
  ChildrenReadSignal(RegistryCenter& inner, std::string suffix)
      : ForwardingRegistry(inner), suffix_(std::move(suffix)) {}
  void Arm() {
    std::lock_guard<std::mutex> l(mu_);
    armed_ = true;
    read_ = false;
  }
  // Waits (bounded) for such a read since Arm.
  bool WaitRead() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return read_; });
  }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    auto r = inner().GetChildrenKeys(key);
    if (key.ends_with(suffix_)) {
      std::lock_guard<std::mutex> l(mu_);
      read_ = armed_;
      cv_.notify_all();
    }
    return r;
  }

 private:
  const std::string suffix_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;  // guarded by mu_
  bool read_ = false;   // guarded by mu_
};

// Chaos sigstop_around_fire (issue 31): an instance back from a pause past its session
// raised the resharding flag on reconnecting, just before a fire. The survivor (the leader),
// which held all the items since its resharding, had its run of that fire claimed already
// and ran them all; the returned instance's trigger of the same fire waits for the leader's
// sharding. Had the leader sharded as soon as its run ended, that trigger would have run the
// item given back to it a second time for that fire. The leader writes the new assignment
// for its next fire instead (ShardingService: the guard), and the waiting trigger gives way
// to the returned instance's trigger of that fire: each item runs once per fire. Each
// instance has a clock of its own (a timer of its own), so that the survivor's run of the
// fire is under way before the other's trigger of it.
TEST_F(RunningMarksTest, ATriggerWaitingForAReshardingAroundAFireGivesWayToTheNextFire) {
  SimulatedClock other_clock{clock_.WallNow()};
  auto reg = Session();
  auto other_session = Session();
  ChildrenReadSignal other_reg(*other_session, "/instances");
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap survivor(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(survivor.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  BootstrapOptions options = Options("10.0.0.2");
  options.clock = &other_clock;
  ScheduleJobBootstrap returned(other_reg, std::make_shared<GateJob>(), Config(2), options);
  ASSERT_TRUE(returned.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 2)) << DumpTree(*reg, "/job");
  const std::string survivor_id = Id("10.0.0.1");
  const std::string returned_id = Id("10.0.0.2");
  // The returned instance's item, and the survivor's.
  const int moved = *reg->GetDirectly("/job/sharding/0/instance") == returned_id ? 0 : 1;
  const int kept = 1 - moved;
  const std::string moved_node = "/job/sharding/" + std::to_string(moved);
  // Its session expired meanwhile: the survivor's resharding gave it both items.
  ASSERT_TRUE(reg->Persist(moved_node + "/instance", survivor_id).ok());
  ASSERT_TRUE(WaitRegistry(*other_session, [&] {
    return other_session->Get(moved_node + "/instance").value_or("") == survivor_id;
  }));
  // The survivor's run of the fire: both items, claimed and running.
  job->Close();
  const auto fire = Next();
  clock_.Advance(fire - clock_.WallNow());
  ASSERT_TRUE(job->WaitStarted(2)) << rec_.Dump() << DumpTree(*reg, "/job");
  ASSERT_TRUE(WaitRegistry(*reg, [&] {
    return reg->GetDirectly(moved_node + "/running").value_or("") == survivor_id;
  })) << DumpTree(*reg, "/job");
  // The returned instance raises the flag (its reconnection) and its trigger of the same
  // fire comes: it waits for the leader's sharding.
  ASSERT_TRUE(other_session->Persist("/job/leader/sharding/necessary", "").ok());
  ASSERT_TRUE(WaitRegistry(
      *other_session, [&] { return other_session->Get("/job/leader/sharding/necessary").ok(); }));
  other_reg.Arm();
  other_clock.Advance(fire - other_clock.WallNow());
  ASSERT_TRUE(other_reg.WaitRead());  // its trigger looks at the instances, waiting
  job->Release();
  // The survivor's run ends (its trigger reported: the lane is free); the flag stays up
  // until the leader's next trigger.
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
    for (const auto& t : triggers) {
      if (t.scheduled == fire && t.outcome == TriggerReport::Outcome::kRan) return true;
    }
    return false;
  })) << rec_.Dump();
  EXPECT_TRUE(reg->GetDirectly("/job/leader/sharding/necessary").ok()) << DumpTree(*reg, "/job");
  EXPECT_EQ(*reg->GetDirectly(moved_node + "/instance"), survivor_id);
  // The next fire: the returned instance's trigger of it takes the waiting one's place (that
  // one is reported with nothing run), then the leader shards in its trigger, and the
  // returned instance runs the item given back to it for that fire, once.
  const auto next = Next();
  other_clock.Advance(next - other_clock.WallNow());
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
    for (const auto& t : triggers) {
      if (t.scheduled == fire && t.outcome == TriggerReport::Outcome::kNoItems) return true;
    }
    return false;
  })) << rec_.Dump();
  clock_.Advance(next - clock_.WallNow());
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    size_t n = 0;
    for (const auto& r : runs) n += r.fire_time == next ? 1 : 0;
    return n >= 2;
  })) << rec_.Dump()
      << DumpTree(*reg, "/job");
  EXPECT_EQ(RunsAt(fire),
            (std::set<std::pair<int, std::string>>{{kept, survivor_id}, {moved, survivor_id}}))
      << rec_.Dump();
  EXPECT_EQ(RunsAt(next),
            (std::set<std::pair<int, std::string>>{{kept, survivor_id}, {moved, returned_id}}))
      << rec_.Dump();
  EXPECT_EQ(rec_.runs().size(), 4u) << rec_.Dump();
}

TEST_F(RunningMarksTest, ARunWithoutRunningMarksHasNoFencingToken) {
  auto reg = Session();
  auto job = std::make_shared<TokenJob>();
  auto config =
      *JobConfiguration::Builder("job", 2).Cron("* * * * * ?").MonitorExecution(false).Build();
  ScheduleJobBootstrap boot(*reg, job, config, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(rec_.WaitRuns(2));
  for (auto [item, token] : job->tokens()) EXPECT_EQ(token, 0) << "item " << item;
}

}  // namespace
}  // namespace elasticjob
