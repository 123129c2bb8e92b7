// Never one item on two instances at once (issue 24): a run claims its items (their running
// marks) before any starts, a mark whose owner is still registered is a conflict, and a run
// picked up long after its fire time (a pause that may have outlived the session) does not
// start. Instances are sessions on one memory store; time is a SimulatedClock.
#include <gtest/gtest.h>

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

// Issue 24: a run prepared before a pause (SIGSTOP, a debugger, a VM migration) longer than
// the session must not start after it: others have its items by then.
TEST_F(RunningMarksTest, ARunPickedUpLongAfterItsFireTimeDoesNotStart) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(2), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 2, 1));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(FireAt(Next())) << rec_.Dump();  // later ones prepared
  const auto fire = Next();
  clock_.Advance(fire - 10ms - clock_.WallNow());  // prepared (and claimed) by now
  // The process stops here and resumes 5 s later: every timer due meanwhile fires at once.
  clock_.Advance(5s + 10ms);
  const auto resumed = clock_.WallNow();
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& triggers) {
    for (const auto& t : triggers) {
      if (t.source == TriggerReport::Source::kCron && t.scheduled > fire) return true;
    }
    return false;
  })) << rec_.Dump();
  // The marks the prepared run claimed are gone.
  EXPECT_TRUE(WaitRegistry(*reg, [&] {
    return !reg->GetDirectly("/job/sharding/0/running").ok() &&
           !reg->GetDirectly("/job/sharding/1/running").ok();
  })) << DumpTree(*reg, "/job");
  // The next fire times run as usual (the first may still find the skipped run releasing
  // the job's lane: a misfire, re-run after it). By the time they have, a start at the
  // resumption would have been reported long before.
  const auto next = Next();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(FireAt(Next())) << rec_.Dump();
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    size_t n = 0;
    for (const auto& r : runs) n += r.fire_time.has_value() && *r.fire_time >= next ? 1 : 0;
    return n >= 2;
  })) << rec_.Dump();
  for (const auto& r : rec_.runs()) {
    EXPECT_FALSE(r.fire_time.has_value() && *r.fire_time >= fire && *r.fire_time < resumed)
        << "item " << r.item << " of an overdue fire time ran\n"
        << rec_.Dump();
  }
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
