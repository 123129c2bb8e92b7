// A leader shut down by an operator (its `instances/{id}` deleted, as the console's shutdown
// does) in a cluster with a passive ElasticJob instance: it raises the resharding flag and
// abdicates, and from its shutdown on writes nothing the leader owns, whatever point a
// sharding of its own had reached and whatever its cache says of the leadership (issue 31,
// item 9). In one process on a memory store; the test orders the steps by holding the
// sharding task inside the registry, never by sleeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <shared_mutex>
#include <thread>

#include "unit/bootstrap/forwarding_registry.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

constexpr std::string_view kNecessary = "/job/leader/sharding/necessary";
constexpr std::string_view kLeader = "/job/leader/election/instance";

// The leader's session, forwarded, with three additions:
//   - what it writes that the leader owns (leader/sharding/* but the flag a shutdown raises,
//     sharding/*/instance) and the server accepted after the operator's removal of its
//     instance node (RemoveInstance orders that removal with the leader's writes: a write
//     under way then, or one of a sharding that began before it, counts on the side of the
//     removal it reached the server on);
//   - a stale cache on demand: once this session deleted its leader node, its cached reads
//     of that node still name it (the cache has not caught up);
//   - a hold: the sharding task (the thread that, after Arm, reads the flag and then the
//     leadership, followed while its calls are the sharding task's) stops at its
//     `hold_at`-th registry call (from 1: the leadership's read) until Release.
class HoldingRegistry final : public test_support::ForwardingRegistry {
 public:
  HoldingRegistry(RegistryCenter& inner, std::string self)
      : ForwardingRegistry(inner), self_(std::move(self)) {}

  // `script`: the keys of the sharding task's calls from the leadership's read on, as an
  // unheld round saw them (script()); empty: nothing is held.
  void Arm(int hold_at, bool stale, std::vector<std::string> script) {
    std::lock_guard<std::mutex> l(mu_);
    armed_ = true;
    hold_at_ = hold_at;
    stale_ = stale;
    script_ = std::move(script);
  }
  bool WaitHeld() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 5s, [&] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // The operator's shutdown: removes `node` through `operator_session`, between two of the
  // leader's writes, and records the leader's writes from then on.
  Status RemoveInstance(RegistryCenter& operator_session, std::string_view node) {
    std::unique_lock<std::shared_mutex> order(order_mu_);
    Status s = operator_session.Remove(node);
    std::lock_guard<std::mutex> l(mu_);
    watching_ = s.ok();
    return s;
  }
  std::vector<std::string> leader_writes() {
    std::lock_guard<std::mutex> l(mu_);
    return leader_writes_;
  }
  // The number of the sharding task's calls up to its assignment's transaction, plus one
  // (set once it has run), and their keys with the next call's.
  std::optional<int> calls_to_assignment() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_to_assignment_;
  }
  std::vector<std::string> script() {
    std::lock_guard<std::mutex> l(mu_);
    return script_out_;
  }

  Result<std::string> Get(std::string_view key) override {
    Step(key, false);
    if (StaleLeader(key)) return self_;
    return inner().Get(key);
  }
  Result<std::string> GetDirectly(std::string_view key) override {
    Step(key, false);
    return inner().GetDirectly(key);
  }
  Result<bool> IsExisted(std::string_view key) override {
    Step(key, true);
    if (StaleLeader(key)) return true;
    return inner().IsExisted(key);
  }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    Step(key, false);
    return inner().GetChildrenKeys(key);
  }
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override {
    Step(key, false);
    return inner().GetChildrenKeysDirectly(key);
  }
  Status Persist(std::string_view key, std::string_view value) override {
    Step(key, false);
    std::shared_lock<std::shared_mutex> order(order_mu_);
    return Wrote(key, inner().Persist(key, value));
  }
  Status Update(std::string_view key, std::string_view value) override {
    Step(key, false);
    std::shared_lock<std::shared_mutex> order(order_mu_);
    return Wrote(key, inner().Update(key, value));
  }
  Status PersistEphemeral(std::string_view key, std::string_view value) override {
    Step(key, false);
    std::shared_lock<std::shared_mutex> order(order_mu_);
    return Wrote(key, inner().PersistEphemeral(key, value));
  }
  Status Remove(std::string_view key) override {
    Step(key, false);
    Status s = inner().Remove(key);
    if (s.ok() && key == kLeader) {
      std::lock_guard<std::mutex> l(mu_);
      abdicated_ = true;
    }
    return s;  // a delete owns nothing (a failed sharding removes its processing node)
  }
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    Step(ops.empty() ? "" : ops.back().key, false);
    const bool assignment = std::any_of(ops.begin(), ops.end(), [](const TransactionOp& op) {
      return op.type == TransactionOp::Type::kDelete && op.key == kNecessary;
    });
    if (assignment) {
      std::lock_guard<std::mutex> l(mu_);
      // (Not one of a sharding already under way at Arm: its thread has no trace.)
      auto trace = traces_.find(std::this_thread::get_id());
      if (armed_ && !in_event_ && !calls_to_assignment_ && trace != traces_.end()) {
        calls_to_assignment_ = static_cast<int>(trace->second.size()) + 1;
        script_out_ = trace->second;
        one_more_ = std::this_thread::get_id();
      }
    }
    std::shared_lock<std::shared_mutex> order(order_mu_);
    Status s = inner().ExecuteInTransaction(ops);
    for (const auto& op : ops) {
      if (op.type == TransactionOp::Type::kCreate || op.type == TransactionOp::Type::kSetData) {
        (void)Wrote(op.key, s);
      }
    }
    return s;
  }
  // The job's events (its strand) run on the same pool threads as the sharding tasks: a
  // call made while handling one is never the task's, nor held.
  Result<std::unique_ptr<reg::CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      reg::WatchPolicy policy) override {
    auto marked = [callback = std::move(callback)](const TreeEvent& e) {
      const bool outer = in_event_;
      in_event_ = true;
      callback(e);
      in_event_ = outer;
    };
    return inner().WatchTree(key, executor, std::move(marked), std::move(policy));
  }
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override {
    if (std::any_of(ops.begin(), ops.end(),
                    [](const TransactionOp& op) { return op.key == kLeader; })) {
      std::lock_guard<std::mutex> l(mu_);
      abdicated_ = true;  // a leave at Join
    }
    inner().ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
  }

 private:
  void Step(std::string_view key, bool exists) {
    std::unique_lock<std::mutex> l(mu_);
    if (!armed_ || in_event_) return;
    // A sharding task reads the flag, then the leadership (ShardNowIfIdleLeader, and again
    // TryShardAsLeader): each thread's calls are traced from its last such pair, and the
    // unheld round's script is the trace of the thread that made the assignment.
    const auto me = std::this_thread::get_id();
    const bool pair = read_flag_last_[me] && !exists && key == kLeader;
    read_flag_last_[me] = exists && key == kNecessary;
    if (pair) traces_[me].clear();
    if (auto t = traces_.find(me); t != traces_.end() && t->second.size() < 100) {
      t->second.emplace_back(key);
    }
    if (one_more_ == me) {  // the call after the assignment's
      script_out_.emplace_back(key);
      one_more_.reset();
    }
    if (!holder_) {
      if (!pair) return;
      holder_ = me;
      calls_ = 1;  // the flag's read was its call 0
    }
    if (holder_ != me) return;
    // A pool thread runs one task after another: the pair above may span two of them (a
    // listener's last read of the flag, then a reconcile reading the leadership), or the
    // task may end early (another sharding is under way), and holding the thread later
    // would hold whatever it runs then (the strand, the shutdown itself). So the thread is
    // followed only while its calls are the script's.
    const size_t i = static_cast<size_t>(calls_ - 1);
    if (i >= script_.size() || script_[i] != key) {
      holder_.reset();
      return;
    }
    if (calls_++ != hold_at_) return;
    held_ = true;
    cv_.notify_all();
    cv_.wait(l, [&] { return released_; });
  }
  bool StaleLeader(std::string_view key) {
    std::lock_guard<std::mutex> l(mu_);
    return stale_ && abdicated_ && key == kLeader;
  }
  Status Wrote(std::string_view key, Status s) {
    static const std::regex owned("/job/(leader/sharding/.*|sharding/[0-9]+/instance)");
    std::lock_guard<std::mutex> l(mu_);
    if (s.ok() && watching_ && key != kNecessary && std::regex_match(std::string(key), owned)) {
      leader_writes_.emplace_back(key);
    }
    return s;
  }

  static inline thread_local bool in_event_ = false;  // this thread handles a watch event
  const std::string self_;
  // Shared by the leader's writes (the call and its recording), exclusive for the
  // operator's removal: every write is wholly before or wholly after it.
  std::shared_mutex order_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  int hold_at_ = -1;
  bool stale_ = false;
  bool held_ = false;
  bool released_ = false;
  bool abdicated_ = false;
  bool watching_ = false;
  std::optional<std::thread::id> holder_;
  std::vector<std::string> script_;
  // Per thread: its calls' keys since its last flag-then-leadership pair (the first 100).
  std::map<std::thread::id, std::vector<std::string>> traces_;
  std::vector<std::string> script_out_;  // the assigning thread's, and its next call
  std::optional<std::thread::id> one_more_;
  std::map<std::thread::id, bool> read_flag_last_;  // per thread: its last call read the flag
  int calls_ = 0;
  std::optional<int> calls_to_assignment_;
  std::vector<std::string> leader_writes_;
};

class JobRuntimeShutdownTest : public test_support::RuntimeTest {
 protected:
  struct Outcome {
    bool held = false;
    std::optional<int> calls_to_assignment;
    std::vector<std::string> script;
    std::vector<std::string> leader_writes;
    std::string tree;
  };

  // One run: the leader shards 4 items between itself and a passive instance; the passive
  // one raises the flag (as a restarted ElasticJob instance does); the leader's sharding
  // task is held at its `hold_at`-th registry call (never, for a negative one) while the
  // operator deletes the leader's instance node and the leader abdicates; then it goes on.
  // The passive instance raises the flag once more after the shutdown (a sharding queued
  // after the stop), and the leader shuts down.
  Outcome Run(int round, int hold_at, bool stale, std::vector<std::string> script = {}) {
    const std::string ns = "leader-shutdown-" + std::to_string(round);
    auto java_session = reg::NewMemoryRegistry(server_, ns);  // the passive (Java) instance's
    auto leader_session = reg::NewMemoryRegistry(server_, ns);
    reg::ComposedRegistry& java = *java_session;
    reg::ComposedRegistry& session = *leader_session;
    EXPECT_TRUE(java.Init().ok());
    EXPECT_TRUE(session.Init().ok());
    HoldingRegistry leader(session, Id("10.0.0.1"));
    Outcome out;
    {
      ScheduleJobBootstrap boot(leader, std::make_shared<GateJob>(), Config(4),
                                Options("10.0.0.1"));
      EXPECT_TRUE(boot.Schedule().ok());
      EXPECT_TRUE(WaitSettled(java, 4, 1)) << DumpTree(java, "/job");
      EXPECT_TRUE(java.Persist("/job/servers/10.0.0.2", "ENABLED").ok());
      EXPECT_TRUE(java.PersistEphemeral("/job/instances/10.0.0.2@-@7", "jobInstanceId: x").ok());
      // ElasticJob's own listener raises the flag on seeing its instance added.
      EXPECT_TRUE(java.Persist(std::string(kNecessary), "").ok());
      EXPECT_TRUE(WaitSettled(java, 4, 2)) << DumpTree(java, "/job");
      leader.Arm(hold_at < 0 ? 1'000'000 : hold_at, stale, std::move(script));
      EXPECT_TRUE(java.Persist(std::string(kNecessary), "").ok());
      if (hold_at >= 0) {
        out.held = leader.WaitHeld();
        // Not held: the task followed ended before that call (another sharding task of the
        // leader held the lock); this round does not order it, and must not hold another.
        if (!out.held) leader.Release();
        EXPECT_TRUE(leader.RemoveInstance(java, "/job/instances/" + Id("10.0.0.1")).ok());
        EXPECT_TRUE(WaitRegistry(java, [&] { return !*java.IsExisted(kLeader); }))
            << "the leader did not abdicate";
        leader.Release();
      } else {
        EXPECT_TRUE(WaitSettled(java, 4, 2)) << DumpTree(java, "/job");
        EXPECT_TRUE(leader.RemoveInstance(java, "/job/instances/" + Id("10.0.0.1")).ok());
        EXPECT_TRUE(WaitRegistry(java, [&] { return !*java.IsExisted(kLeader); }));
      }
      EXPECT_TRUE(java.Persist(std::string(kNecessary), "").ok());  // queued after the stop
      boot.Shutdown();  // waits for the held sharding task (counted as outstanding)
      out.calls_to_assignment = leader.calls_to_assignment();
      out.script = leader.script();
      out.leader_writes = leader.leader_writes();
      out.tree = DumpTree(java, "/job");
      // The cluster is left to reshard: the flag is up, nobody leads, nothing is processing.
      EXPECT_TRUE(*java.IsExisted(kNecessary)) << out.tree;
      EXPECT_FALSE(*java.IsExisted(kLeader)) << out.tree;
      EXPECT_FALSE(*java.IsExisted("/job/leader/sharding/processing")) << out.tree;
    }
    return out;
  }
};

TEST_F(JobRuntimeShutdownTest,
       ALeaderShutDownByAnOperatorWritesNothingTheLeaderOwnsWhereverItsQueuedShardingWas) {
  // Unheld: the number of calls the sharding task makes up to its assignment; the sweep
  // holds it before each of them, so the shutdown lands before every step (the last hold is
  // just before the assignment's multi-op).
  Outcome full = Run(0, -1, false);
  ASSERT_TRUE(full.calls_to_assignment.has_value()) << full.tree;
  EXPECT_TRUE(full.leader_writes.empty()) << full.leader_writes.front();
  int round = 1;
  int held = 0;
  for (bool stale : {false, true}) {
    for (int k = 1; k <= *full.calls_to_assignment; ++k) {
      SCOPED_TRACE(::testing::Message()
                   << "held before call " << k << " of " << *full.calls_to_assignment
                   << (stale ? ", the cache still naming it leader" : ""));
      Outcome o = Run(round++, k, stale, full.script);
      held += o.held ? 1 : 0;
      std::string writes;
      for (const auto& w : o.leader_writes) writes += w + "\n";
      EXPECT_TRUE(o.leader_writes.empty()) << "written after its shutdown:\n" << writes << o.tree;
    }
  }
  // Most rounds held the task where they meant to (a second sharding task of the leader,
  // queued by an event of the settling, may take a round's place now and then).
  EXPECT_GE(held * 4, (round - 1) * 3) << held << " of " << round - 1 << " rounds held";
}

}  // namespace
}  // namespace elasticjob
