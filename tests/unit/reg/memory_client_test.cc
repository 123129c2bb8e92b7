// MemoryClient and MemoryServer (reg/memory/memory_client.h) held to ZooKeeper's rules: stat,
// versions, sequential suffixes, multi-op results, watch firing, sessions and their
// ephemeral nodes, containers, and the one event thread. The registry class over this
// client runs the registry conformance suite (tests/integration/reg, backend "memclient").
#include "reg/memory/memory_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "elasticjob/simulated_clock.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

constexpr auto kWait = std::chrono::seconds(10);

// Records the events of the watches set with it, and the thread each ran on.
class RecordingWatcher final : public Watcher {
 public:
  struct Seen {
    WatchEvent::Type type;
    ClientState state;
    std::string path;
    std::thread::id thread;
  };
  void OnWatch(const WatchEvent& event) override {
    MutexLock lock(&mu_);
    seen_.push_back({event.type, event.state, std::string(event.path), std::this_thread::get_id()});
    cv_.SignalAll();
  }
  // Waits (bounded) until `n` events were seen; returns them.
  std::vector<Seen> Await(size_t n) {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (seen_.size() < n && cv_.WaitUntil(deadline)) {
    }
    return seen_;
  }
  std::vector<Seen> seen() {
    MutexLock lock(&mu_);
    return seen_;
  }

 private:
  Mutex mu_;
  CondVar cv_{&mu_};
  std::vector<Seen> seen_ ELASTICJOB_GUARDED_BY(mu_);
};

// A client with its session events and request counts recorded.
struct Recorded {
  explicit Recorded(std::shared_ptr<MemoryServer> server)
      : client(std::make_unique<MemoryClient>(std::move(server))) {
    client->SetHooks({[this](const SessionEvent& e) {
                        MutexLock lock(&mu);
                        events.push_back(e);
                        cv.SignalAll();
                      },
                      [this](RequestKind kind) {
                        MutexLock lock(&mu);
                        ++requests[static_cast<size_t>(kind)];
                      }});
  }
  std::vector<SessionEvent> AwaitEvents(size_t n) {
    MutexLock lock(&mu);
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (events.size() < n && cv.WaitUntil(deadline)) {
    }
    return events;
  }
  uint64_t Requests(RequestKind kind) {
    MutexLock lock(&mu);
    return requests[static_cast<size_t>(kind)];
  }

  Mutex mu;
  CondVar cv{&mu};
  std::vector<SessionEvent> events ELASTICJOB_GUARDED_BY(mu);
  uint64_t requests[static_cast<size_t>(RequestKind::kCount)] ELASTICJOB_GUARDED_BY(mu) = {};
  std::unique_ptr<MemoryClient> client;  // last: destroyed (its thread stopped) first
};

class MemoryClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(a_.client->Connect().ok());
    ASSERT_TRUE(b_.client->Connect().ok());
  }

  // Waits until everything queued so far on `c`'s event thread has run: the events of one
  // client are delivered in order, so a fence watch of its own fires after them.
  void Fence(MemoryClient& c) {
    RecordingWatcher fence;
    const std::string path = "/fence" + std::to_string(fences_++);
    ASSERT_EQ(c.ExistsSync(path, &fence, nullptr), ClientCode::kNoNode);
    ASSERT_EQ(c.CreateSync(path, "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
    ASSERT_EQ(fence.Await(1).size(), 1u);
  }

  SimulatedClock clock_{Clock::WallTime{} + 1000h};
  std::shared_ptr<MemoryServer> server_ = std::make_shared<MemoryServer>(clock_, 0ms);
  Recorded a_{server_};
  Recorded b_{server_};
  int fences_ = 0;
  MemoryClient& a() { return *a_.client; }
  MemoryClient& b() { return *b_.client; }
};

ClientOp Op(ClientOp::Type type, std::string path, std::string value = "", int32_t version = -1) {
  ClientOp op;
  op.type = type;
  op.path = std::move(path);
  op.value = std::move(value);
  op.version = version;
  op.want_stat = type == ClientOp::Type::kSet;
  return op;
}

TEST_F(MemoryClientTest, NodesCarryZooKeepersStatFromOneZxidCounterAndTheServersClock) {
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  ASSERT_EQ(a().CreateSync("/a", "xy", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  NodeStat created;
  ASSERT_EQ(a().ExistsSync("/a", nullptr, &created), ClientCode::kOk);
  EXPECT_EQ(created.czxid, server_->last_zxid());
  EXPECT_EQ(created.mzxid, created.czxid);
  EXPECT_EQ(created.pzxid, created.czxid);
  EXPECT_EQ(created.ctime, now_ms);
  EXPECT_EQ(created.version, 0);
  EXPECT_EQ(created.data_length, 2);
  EXPECT_EQ(created.ephemeral_owner, 0);

  clock_.Advance(5s);
  NodeStat set;
  ASSERT_EQ(b().SetSync("/a", "xyz", 0, &set, 0), ClientCode::kOk);  // another session
  EXPECT_EQ(set.version, 1);
  EXPECT_EQ(set.czxid, created.czxid);
  EXPECT_GT(set.mzxid, created.mzxid);
  EXPECT_EQ(set.mtime, now_ms + 5000);
  EXPECT_EQ(set.ctime, now_ms);
  EXPECT_EQ(set.data_length, 3);

  ASSERT_EQ(a().CreateSync("/a/e", "", CreateMode::kEphemeral, nullptr), ClientCode::kOk);
  NodeStat child, parent;
  ASSERT_EQ(a().ExistsSync("/a/e", nullptr, &child), ClientCode::kOk);
  ASSERT_EQ(a().ExistsSync("/a", nullptr, &parent), ClientCode::kOk);
  EXPECT_EQ(child.ephemeral_owner, a().session().id);
  EXPECT_NE(child.ephemeral_owner, 0);
  EXPECT_GT(child.czxid, set.mzxid);
  EXPECT_EQ(parent.num_children, 1);
  EXPECT_EQ(parent.cversion, 1);
  EXPECT_EQ(parent.pzxid, child.czxid);
  EXPECT_EQ(parent.version, 1);  // a child is not a change of the parent's data
}

TEST_F(MemoryClientTest, WritesAnswerZooKeepersCodes) {
  ASSERT_EQ(a().CreateSync("/v", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  EXPECT_EQ(a().CreateSync("/v", "", CreateMode::kPersistent, nullptr), ClientCode::kNodeExists);
  EXPECT_EQ(a().CreateSync("/missing/x", "", CreateMode::kPersistent, nullptr),
            ClientCode::kNoNode);
  EXPECT_EQ(a().SetSync("/v", "1", 3, nullptr, 0), ClientCode::kBadVersion);
  EXPECT_EQ(a().SetSync("/missing", "1", -1, nullptr, 0), ClientCode::kNoNode);
  ASSERT_EQ(a().SetSync("/v", "1", 0, nullptr, 0), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/v/c", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  EXPECT_EQ(a().DeleteSync("/v", -1), ClientCode::kNotEmpty);
  EXPECT_EQ(a().DeleteSync("/v/c", 7), ClientCode::kBadVersion);
  EXPECT_EQ(a().DeleteSync("/nothing", -1), ClientCode::kNoNode);
  ASSERT_EQ(a().CreateSync("/eph", "", CreateMode::kEphemeral, nullptr), ClientCode::kOk);
  EXPECT_EQ(a().CreateSync("/eph/c", "", CreateMode::kPersistent, nullptr),
            ClientCode::kNoChildrenForEphemerals);
  EXPECT_EQ(a().CreateSync("bad", "", CreateMode::kPersistent, nullptr), ClientCode::kOther);
  EXPECT_EQ(a().GetSync("/v/", nullptr, nullptr, nullptr), ClientCode::kOther);
  std::string value;
  ASSERT_EQ(b().GetSync("/v", nullptr, &value, nullptr), ClientCode::kOk);
  EXPECT_EQ(value, "1");
}

TEST_F(MemoryClientTest, ASequentialSuffixIsTheParentsChildVersion) {
  ASSERT_EQ(a().CreateSync("/q", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  std::string first, second, third;
  ASSERT_EQ(a().CreateSync("/q/n-", "", CreateMode::kPersistentSequential, &first),
            ClientCode::kOk);
  ASSERT_EQ(b().CreateSync("/q/n-", "", CreateMode::kEphemeralSequential, &second),
            ClientCode::kOk);
  EXPECT_EQ(first, "/q/n-0000000000");
  EXPECT_EQ(second, "/q/n-0000000001");
  ASSERT_EQ(a().DeleteSync(first, -1), ClientCode::kOk);  // a delete moves cversion too
  ASSERT_EQ(a().CreateSync("/q/", "", CreateMode::kPersistentSequential, &third), ClientCode::kOk);
  EXPECT_EQ(third, "/q/0000000003");
}

TEST_F(MemoryClientTest, AFailedMultiChangesNothingAndReportsEveryStep) {
  ASSERT_EQ(a().CreateSync("/m", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  const int64_t zxid = server_->last_zxid();
  RecordingWatcher w;
  ASSERT_EQ(b().GetSync("/m", &w, nullptr, nullptr), ClientCode::kOk);
  std::vector<ClientOpResult> results;
  EXPECT_EQ(
      a().MultiSync({Op(ClientOp::Type::kCreate, "/m/a"), Op(ClientOp::Type::kSet, "/m", "x"),
                     Op(ClientOp::Type::kCheck, "/m", "", 5), Op(ClientOp::Type::kCreate, "/m/b")},
                    &results),
      ClientCode::kBadVersion);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].code, ClientCode::kOk);
  EXPECT_EQ(results[1].code, ClientCode::kOk);
  EXPECT_EQ(results[2].code, ClientCode::kBadVersion);
  EXPECT_EQ(results[3].code, ClientCode::kNotRun);
  EXPECT_EQ(a().ExistsSync("/m/a", nullptr, nullptr), ClientCode::kNoNode);
  NodeStat stat;
  std::string value = "?";
  ASSERT_EQ(a().GetSync("/m", nullptr, &value, &stat), ClientCode::kOk);
  EXPECT_EQ(value, "");
  EXPECT_EQ(stat.version, 0);
  EXPECT_EQ(stat.cversion, 0);
  EXPECT_EQ(server_->last_zxid(), zxid);
  Fence(b());
  EXPECT_TRUE(w.seen().empty());  // nothing happened, so no watch fired
}

// The undo keeps no copy of a parent's children: a delete taken back puts the node, its name
// among its parent's children and the parent's stat back as they were.
TEST_F(MemoryClientTest, AFailedMultiPutsADeletedNodeAndItsParentBack) {
  ASSERT_EQ(a().CreateSync("/p", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/p/a", "va", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/p/b", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  NodeStat parent_before, a_before;
  ASSERT_EQ(a().ExistsSync("/p", nullptr, &parent_before), ClientCode::kOk);
  ASSERT_EQ(a().ExistsSync("/p/a", nullptr, &a_before), ClientCode::kOk);
  std::vector<ClientOpResult> results;
  EXPECT_EQ(a().MultiSync({Op(ClientOp::Type::kDelete, "/p/a"), Op(ClientOp::Type::kCreate, "/p/c"),
                           Op(ClientOp::Type::kSet, "/p", "x"), Op(ClientOp::Type::kDelete, "/p/c"),
                           Op(ClientOp::Type::kCheck, "/p", "", 7)},
                          &results),
            ClientCode::kBadVersion);
  std::vector<std::string> children;
  ASSERT_EQ(a().ChildrenSync("/p", nullptr, &children), ClientCode::kOk);
  EXPECT_EQ(children, (std::vector<std::string>{"a", "b"}));
  std::string value;
  NodeStat parent_after, a_after;
  ASSERT_EQ(a().GetSync("/p", nullptr, &value, &parent_after), ClientCode::kOk);
  EXPECT_EQ(value, "");
  EXPECT_EQ(parent_after.version, parent_before.version);
  EXPECT_EQ(parent_after.cversion, parent_before.cversion);
  EXPECT_EQ(parent_after.num_children, 2);
  EXPECT_EQ(parent_after.pzxid, parent_before.pzxid);
  ASSERT_EQ(a().GetSync("/p/a", nullptr, &value, &a_after), ClientCode::kOk);
  EXPECT_EQ(value, "va");
  EXPECT_EQ(a_after.czxid, a_before.czxid);
  EXPECT_EQ(a().ExistsSync("/p/c", nullptr, nullptr), ClientCode::kNoNode);
}

TEST_F(MemoryClientTest, AnAsynchronousMultiSeesItsOwnEarlierSteps) {
  ASSERT_EQ(a().CreateSync("/m", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ClientOp seq = Op(ClientOp::Type::kCreate, "/m/s-");
  seq.mode = CreateMode::kPersistentSequential;
  std::promise<std::pair<ClientCode, std::vector<ClientOpResult>>> answered;
  a().Multi({seq, Op(ClientOp::Type::kSet, "/m", "v"), Op(ClientOp::Type::kCheck, "/m", "", 1),
             Op(ClientOp::Type::kDelete, "/m/s-0000000000")},
            [&](ClientCode rc, std::vector<ClientOpResult> results) {
              answered.set_value({rc, std::move(results)});
            });
  auto future = answered.get_future();
  ASSERT_EQ(future.wait_for(kWait), std::future_status::ready);
  auto [rc, results] = future.get();
  EXPECT_EQ(rc, ClientCode::kOk);
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) EXPECT_EQ(r.code, ClientCode::kOk);
  EXPECT_EQ(results[0].path, "/m/s-0000000000");
  EXPECT_EQ(results[1].stat.version, 1);
  std::vector<std::string> children;
  ASSERT_EQ(a().ChildrenSync("/m", nullptr, &children), ClientCode::kOk);
  EXPECT_TRUE(children.empty());
}

TEST_F(MemoryClientTest, AMultiCreatesSequentialNodesAndStampsItsStepsWithOneZxid) {
  ASSERT_EQ(a().CreateSync("/m", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/m/x", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ClientOp seq = Op(ClientOp::Type::kCreate, "/m/s-");
  seq.mode = CreateMode::kPersistentSequential;
  std::vector<ClientOpResult> results;
  ASSERT_EQ(a().MultiSync({seq, Op(ClientOp::Type::kSet, "/m/x", "v")}, &results), ClientCode::kOk);
  EXPECT_EQ(results[0].path, "/m/s-0000000001");
  EXPECT_EQ(results[1].stat.version, 1);
  NodeStat created;
  ASSERT_EQ(a().ExistsSync(results[0].path, nullptr, &created), ClientCode::kOk);
  EXPECT_EQ(created.czxid, results[1].stat.mzxid);
  EXPECT_EQ(server_->last_zxid(), created.czxid);
}

TEST_F(MemoryClientTest, ADataWatchFiresOnceOnAChangeAndOnceOnTheDelete) {
  ASSERT_EQ(a().CreateSync("/d", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  RecordingWatcher w;
  ASSERT_EQ(a().GetSync("/d", &w, nullptr, nullptr), ClientCode::kOk);
  ASSERT_EQ(b().SetSync("/d", "1", -1, nullptr, 0), ClientCode::kOk);
  ASSERT_EQ(b().SetSync("/d", "2", -1, nullptr, 0), ClientCode::kOk);  // one-shot: gone
  ASSERT_EQ(b().CreateSync("/d/child", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  Fence(a());
  auto seen = w.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kChanged);
  EXPECT_EQ(seen[0].state, ClientState::kConnected);
  EXPECT_EQ(seen[0].path, "/d");
  ASSERT_EQ(b().DeleteSync("/d/child", -1), ClientCode::kOk);
  ASSERT_EQ(a().ExistsSync("/d", &w, nullptr), ClientCode::kOk);  // on a present node: data
  ASSERT_EQ(b().DeleteSync("/d", -1), ClientCode::kOk);
  seen = w.Await(2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].type, WatchEvent::Type::kDeleted);
  // A get of a missing node sets no watch.
  ASSERT_EQ(a().GetSync("/d", &w, nullptr, nullptr), ClientCode::kNoNode);
  ASSERT_EQ(b().CreateSync("/d", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  Fence(a());
  EXPECT_EQ(w.seen().size(), 2u);
}

TEST_F(MemoryClientTest, AnExistsWatchOnAMissingNodeFiresOnItsCreation) {
  RecordingWatcher w;
  ASSERT_EQ(a().ExistsSync("/later", &w, nullptr), ClientCode::kNoNode);
  ASSERT_EQ(b().CreateSync("/later", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  auto seen = w.Await(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kCreated);
  EXPECT_EQ(seen[0].path, "/later");
}

TEST_F(MemoryClientTest, AChildrenWatchFiresWhenAChildComesOrGoesOrTheNodeIsDeleted) {
  ASSERT_EQ(a().CreateSync("/p", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  RecordingWatcher w;
  std::vector<std::string> children;
  ASSERT_EQ(a().ChildrenSync("/p", &w, &children), ClientCode::kOk);
  EXPECT_TRUE(children.empty());
  ASSERT_EQ(b().SetSync("/p", "data", -1, nullptr, 0), ClientCode::kOk);  // not a child change
  ASSERT_EQ(b().CreateSync("/p/c", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ASSERT_EQ(w.Await(1).size(), 1u);
  ASSERT_EQ(a().ChildrenSync("/p", &w, &children), ClientCode::kOk);
  EXPECT_EQ(children, std::vector<std::string>{"c"});
  ASSERT_EQ(b().SetSync("/p/c", "x", -1, nullptr, 0), ClientCode::kOk);  // a child's data: no
  ASSERT_EQ(b().DeleteSync("/p/c", -1), ClientCode::kOk);
  ASSERT_EQ(w.Await(2).size(), 2u);
  ASSERT_EQ(a().ChildrenSync("/p", &w, &children), ClientCode::kOk);
  ASSERT_EQ(b().DeleteSync("/p", -1), ClientCode::kOk);
  auto seen = w.Await(3);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kChildren);
  EXPECT_EQ(seen[0].path, "/p");
  EXPECT_EQ(seen[1].type, WatchEvent::Type::kChildren);
  EXPECT_EQ(seen[2].type, WatchEvent::Type::kDeleted);
  Fence(a());
  EXPECT_EQ(w.seen().size(), 3u);
}

TEST_F(MemoryClientTest, OneWatcherSetTwiceOnOnePathIsCalledOncePerEvent) {
  ASSERT_EQ(a().CreateSync("/once", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  RecordingWatcher w;
  ASSERT_EQ(a().GetSync("/once", &w, nullptr, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().GetSync("/once", &w, nullptr, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().ExistsSync("/once", &w, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().ChildrenSync("/once", &w, nullptr), ClientCode::kOk);
  ASSERT_EQ(b().DeleteSync("/once", -1), ClientCode::kOk);  // data and children watches both
  Fence(a());
  auto seen = w.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kDeleted);
}

TEST_F(MemoryClientTest, EveryAnswerAndWatchRunsOnOneEventThreadInTheOrderTheServerMadeThem) {
  constexpr int kNodes = 50;
  RecordingWatcher w;
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_EQ(a().ExistsSync("/o" + std::to_string(i), &w, nullptr), ClientCode::kNoNode);
  }
  Mutex mu;
  std::vector<std::string> order;  // guarded by mu
  std::set<std::thread::id> threads;
  struct Forward final : Watcher {
    Mutex* mu;
    std::vector<std::string>* order;
    std::set<std::thread::id>* threads;
    void OnWatch(const WatchEvent& e) override {
      MutexLock lock(mu);
      order->push_back("watch " + std::string(e.path));
      threads->insert(std::this_thread::get_id());
    }
  } forward;
  forward.mu = &mu;
  forward.order = &order;
  forward.threads = &threads;
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_EQ(a().ExistsSync("/o" + std::to_string(i), &forward, nullptr), ClientCode::kNoNode);
  }
  std::promise<void> last;
  for (int i = 0; i < kNodes; ++i) {
    const std::string path = "/o" + std::to_string(i);
    a().Create(path, "", CreateMode::kPersistent, [&, i, path](ClientCode rc, std::string_view c) {
      EXPECT_EQ(rc, ClientCode::kOk);
      EXPECT_EQ(c, path);
      MutexLock lock(&mu);
      order.push_back("answer " + path);
      threads.insert(std::this_thread::get_id());
      if (i == kNodes - 1) last.set_value();
    });
  }
  ASSERT_EQ(last.get_future().wait_for(kWait), std::future_status::ready);
  MutexLock lock(&mu);
  ASSERT_EQ(order.size(), 2u * kNodes);
  for (int i = 0; i < kNodes; ++i) {
    const std::string path = "/o" + std::to_string(i);
    EXPECT_EQ(order[2 * i], "watch " + path);  // the watch a write fired, before its answer
    EXPECT_EQ(order[2 * i + 1], "answer " + path);
  }
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
  auto seen = w.Await(kNodes);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kNodes));
  for (const auto& s : seen) EXPECT_EQ(s.thread, *threads.begin());
}

TEST_F(MemoryClientTest, ConnectReportsTheFirstConnectionBeforeItReturnsAndRequestsAreCounted) {
  auto events = a_.AwaitEvents(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, SessionEvent::Type::kConnected);
  EXPECT_TRUE(events[0].first);
  EXPECT_EQ(events[0].epoch, 1u);
  EXPECT_EQ(a().state(), ClientState::kConnected);
  EXPECT_NE(a().session().id, b().session().id);
  EXPECT_EQ(a().session().password.size(), 16u);
  ASSERT_EQ(a().ExistsSync("/", nullptr, nullptr), ClientCode::kOk);
  std::promise<ClientCode> done;
  a().Get("/", nullptr,
          [&](ClientCode rc, std::string_view, const NodeStat&) { done.set_value(rc); });
  EXPECT_EQ(done.get_future().get(), ClientCode::kOk);
  EXPECT_EQ(a_.Requests(RequestKind::kExists), 1u);
  EXPECT_EQ(a_.Requests(RequestKind::kGet), 1u);
  EXPECT_EQ(b_.Requests(RequestKind::kGet), 0u);
  // Without a session a request is answered at once, on the calling thread, and not counted.
  a().Close();
  EXPECT_EQ(a().state(), ClientState::kClosed);
  EXPECT_EQ(a().GetSync("/", nullptr, nullptr, nullptr), ClientCode::kInvalidState);
  std::thread::id answered_on;
  a().Delete("/x", -1, [&](ClientCode rc) {
    EXPECT_EQ(rc, ClientCode::kInvalidState);
    answered_on = std::this_thread::get_id();
  });
  EXPECT_EQ(answered_on, std::this_thread::get_id());
  EXPECT_EQ(a_.Requests(RequestKind::kGet), 1u);
  EXPECT_EQ(a_.Requests(RequestKind::kDelete), 0u);
}

TEST_F(MemoryClientTest, EphemeralNodesGoWhenTheSessionClosesAndOthersSeeThemGo) {
  ASSERT_EQ(a().CreateSync("/e", "", CreateMode::kEphemeral, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/p", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  RecordingWatcher w;
  ASSERT_EQ(b().ExistsSync("/e", &w, nullptr), ClientCode::kOk);
  a().Close();
  auto seen = w.Await(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kDeleted);
  EXPECT_EQ(b().ExistsSync("/e", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_EQ(b().ExistsSync("/p", nullptr, nullptr), ClientCode::kOk);
  EXPECT_EQ(server_->open_sessions(), 1u);
  // Connect opens a new session after Close.
  ASSERT_TRUE(a().Connect().ok());
  EXPECT_EQ(a().state(), ClientState::kConnected);
  EXPECT_EQ(a().session_epoch(), 2u);
}

TEST_F(MemoryClientTest, ExpiryEndsTheSessionAsTheServerWouldUntilTheOwnerReplacesIt) {
  ASSERT_EQ(a().CreateSync("/e", "", CreateMode::kEphemeral, nullptr), ClientCode::kOk);
  RecordingWatcher mine, theirs;
  ASSERT_EQ(a().ExistsSync("/later", &mine, nullptr), ClientCode::kNoNode);
  ASSERT_EQ(b().ExistsSync("/e", &theirs, nullptr), ClientCode::kOk);
  const uint64_t epoch = a().session_epoch();
  a().Expire();
  EXPECT_EQ(a().state(), ClientState::kExpired);
  EXPECT_EQ(a().GetSync("/", nullptr, nullptr, nullptr), ClientCode::kInvalidState);
  // Its watches are told, and gone; the hooks hear kExpired after them.
  auto seen = mine.Await(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kSession);
  EXPECT_EQ(seen[0].state, ClientState::kExpired);
  auto events = a_.AwaitEvents(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, SessionEvent::Type::kExpired);
  EXPECT_EQ(events[1].epoch, epoch);
  // Its ephemeral node went, and another session saw it go.
  ASSERT_EQ(theirs.Await(1).size(), 1u);
  EXPECT_EQ(theirs.seen()[0].type, WatchEvent::Type::kDeleted);
  EXPECT_EQ(b().ExistsSync("/e", nullptr, nullptr), ClientCode::kNoNode);

  a().ReplaceSession();
  events = a_.AwaitEvents(4);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].type, SessionEvent::Type::kNewSession);
  EXPECT_EQ(events[2].epoch, epoch + 1);
  EXPECT_EQ(events[3].type, SessionEvent::Type::kConnected);
  EXPECT_FALSE(events[3].first);
  EXPECT_EQ(events[3].epoch, epoch + 1);
  EXPECT_EQ(a().state(), ClientState::kConnected);
  ASSERT_EQ(b().CreateSync("/later", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  Fence(a());
  EXPECT_EQ(mine.seen().size(), 1u);  // the expired session's watch is not called again
}

TEST_F(MemoryClientTest, AWriteGuardedByAReplacedEpochIsRefused) {
  ASSERT_EQ(a().CreateSync("/g", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  const uint64_t epoch = a().session_epoch();
  EXPECT_EQ(a().SetSync("/g", "1", -1, nullptr, epoch), ClientCode::kOk);
  a().ReplaceSession();
  EXPECT_EQ(a().SetSync("/g", "2", -1, nullptr, epoch), ClientCode::kSessionMoved);
  EXPECT_EQ(a().SetSync("/g", "3", -1, nullptr, a().session_epoch()), ClientCode::kOk);
}

// Answers still queued when the session's handle closes are answered once, on the closing
// thread: here a callback on the event thread closes it, with the answers behind it queued
// (it waits until they are: a test's stand-in for a slow event thread).
TEST_F(MemoryClientTest, AnswersStillQueuedAtCloseAreAnsweredOnceWithClosing) {
  std::vector<ClientCode> codes;  // written on the event thread only
  std::promise<void> queued, closed;
  a().Exists("/", nullptr, [&, sent = queued.get_future().share()](ClientCode rc, const NodeStat&) {
    sent.wait();
    codes.push_back(rc);
    a().Close();  // on the event thread: the answers queued behind this one are owed
    closed.set_value();
  });
  for (int i = 0; i < 3; ++i) {
    a().Create("/w" + std::to_string(i), "", CreateMode::kEphemeral,
               [&](ClientCode rc, std::string_view) { codes.push_back(rc); });
  }
  queued.set_value();
  ASSERT_EQ(closed.get_future().wait_for(kWait), std::future_status::ready);
  a().Close();  // waits for the delivery in progress
  ASSERT_EQ(codes.size(), 4u);
  EXPECT_EQ(codes[0], ClientCode::kOk);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(codes[i], ClientCode::kClosing);
  // The writes were applied (their answers were lost), and went with the session.
  EXPECT_EQ(b().ExistsSync("/w0", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_GT(server_->last_zxid(), 3);
}

TEST_F(MemoryClientTest, AnswersStillQueuedAtReplaceSessionAreAnsweredOnceWithSessionExpired) {
  std::vector<ClientCode> codes;  // written on the event thread only
  std::promise<void> queued, replaced;
  a().Exists("/", nullptr, [&, sent = queued.get_future().share()](ClientCode rc, const NodeStat&) {
    sent.wait();
    codes.push_back(rc);
    a().ReplaceSession();
    replaced.set_value();
  });
  for (int i = 0; i < 3; ++i) {
    a().Set("/", "x", -1, [&](ClientCode rc, const NodeStat&) { codes.push_back(rc); });
  }
  queued.set_value();
  ASSERT_EQ(replaced.get_future().wait_for(kWait), std::future_status::ready);
  Fence(a());
  ASSERT_EQ(codes.size(), 4u);
  EXPECT_EQ(codes[0], ClientCode::kOk);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(codes[i], ClientCode::kSessionExpired);
  EXPECT_EQ(a().state(), ClientState::kConnected);
  EXPECT_EQ(a().session_epoch(), 2u);
}

TEST_F(MemoryClientTest, WithRetryWaitsForTheReplacementSession) {
  a().Expire();
  std::thread owner([&] { a().ReplaceSession(); });
  int attempts = 0;
  const ClientCode rc = a().WithRetry([&] {
    ++attempts;
    return a().ExistsSync("/", nullptr, nullptr);
  });
  owner.join();
  EXPECT_EQ(rc, ClientCode::kOk);
  EXPECT_GE(attempts, 1);
  a().Close();
  EXPECT_EQ(a().WithRetry([&] { return a().ExistsSync("/", nullptr, nullptr); }),
            ClientCode::kClosing);
}

TEST_F(MemoryClientTest, AContainerGoesOnAReaperPassOnceItsLastChildHasGone) {
  ASSERT_EQ(a().CreateSync("/c", "", CreateMode::kContainer, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/c/d", "", CreateMode::kContainer, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/c/d/x", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().CreateSync("/never", "", CreateMode::kContainer, nullptr), ClientCode::kOk);
  EXPECT_EQ(server_->ReapContainers(), 0);  // none emptied; one never had a child
  RecordingWatcher w;
  ASSERT_EQ(b().ExistsSync("/c", &w, nullptr), ClientCode::kOk);
  ASSERT_EQ(a().DeleteSync("/c/d/x", -1), ClientCode::kOk);
  EXPECT_EQ(a().ExistsSync("/c/d", nullptr, nullptr), ClientCode::kOk);  // until a pass
  EXPECT_EQ(server_->ReapContainers(), 1);
  EXPECT_EQ(a().ExistsSync("/c/d", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_EQ(a().ExistsSync("/c", nullptr, nullptr), ClientCode::kOk);
  EXPECT_EQ(server_->ReapContainers(), 1);  // emptied by the last pass: one level a pass
  EXPECT_EQ(a().ExistsSync("/c", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_EQ(a().ExistsSync("/never", nullptr, nullptr), ClientCode::kOk);
  auto seen = w.Await(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kDeleted);
}

// The server's indexes (each session's ephemeral nodes, the containers) follow what a failed
// multi-op undoes: a container it created is no reaper's business, an ephemeral node it
// deleted still goes with its session, one it created does not.
TEST_F(MemoryClientTest, AFailedMultiLeavesTheReaperAndTheSessionsCloseAsBefore) {
  ASSERT_EQ(a().CreateSync("/box", "", CreateMode::kContainer, nullptr), ClientCode::kOk);
  std::vector<ClientOpResult> results;
  ASSERT_EQ(
      a().MultiSync({Op(ClientOp::Type::kCreate, "/box/x"), Op(ClientOp::Type::kDelete, "/box/x"),
                     Op(ClientOp::Type::kCreate, "/lost")},
                    &results),
      ClientCode::kOk);  // the container has had a child; /lost is persistent
  ClientOp container = Op(ClientOp::Type::kCreate, "/c2");
  container.mode = CreateMode::kContainer;
  ClientOp ephemeral = Op(ClientOp::Type::kCreate, "/e2");
  ephemeral.mode = CreateMode::kEphemeral;
  EXPECT_EQ(a().MultiSync({container, Op(ClientOp::Type::kCreate, "/c2/x"),
                           Op(ClientOp::Type::kDelete, "/c2/x"), ephemeral,
                           Op(ClientOp::Type::kSet, "/missing", "v")},
                          &results),
            ClientCode::kNoNode);
  EXPECT_EQ(a().ExistsSync("/c2", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_EQ(server_->ReapContainers(), 1);  // /box only: /c2 was never made
  ASSERT_EQ(b().CreateSync("/mine", "", CreateMode::kEphemeral, nullptr), ClientCode::kOk);
  ASSERT_EQ(b().CreateSync("/e3", "", CreateMode::kEphemeral, nullptr), ClientCode::kOk);
  EXPECT_EQ(
      b().MultiSync({Op(ClientOp::Type::kDelete, "/e3"), Op(ClientOp::Type::kSet, "/missing", "v")},
                    &results),
      ClientCode::kNoNode);
  b().Close();  // its ephemeral nodes go, the one the failed multi deleted included
  EXPECT_EQ(a().ExistsSync("/mine", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_EQ(a().ExistsSync("/e3", nullptr, nullptr), ClientCode::kNoNode);
  EXPECT_EQ(a().ExistsSync("/lost", nullptr, nullptr), ClientCode::kOk);
  EXPECT_EQ(a().ExistsSync("/e2", nullptr, nullptr), ClientCode::kNoNode);
}

TEST(MemoryServerTest, AReaperThreadReapsEmptyContainersOnItsOwn) {
  auto server = std::make_shared<MemoryServer>(Clock::System(), 10ms);
  MemoryClient client(server);
  ASSERT_TRUE(client.Connect().ok());
  ASSERT_EQ(client.CreateSync("/c", "", CreateMode::kContainer, nullptr), ClientCode::kOk);
  ASSERT_EQ(client.CreateSync("/c/x", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
  RecordingWatcher w;
  ASSERT_EQ(client.ExistsSync("/c", &w, nullptr), ClientCode::kOk);
  ASSERT_EQ(client.DeleteSync("/c/x", -1), ClientCode::kOk);
  auto seen = w.Await(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kDeleted);
}

// The names of this process's threads.
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  return names;
}

// Keeps its client's event thread busy: each event it sees watches `path` again and writes
// it, which queues the next event, until stopped.
class PingPong final : public Watcher {
 public:
  PingPong(MemoryClient& client, std::string path) : client_(client), path_(std::move(path)) {}
  void Start() { Again(); }
  void Stop() { stop_.store(true); }
  void OnWatch(const WatchEvent&) override {
    if (!stop_.load()) Again();
  }
  int rounds() const { return rounds_.load(); }

 private:
  void Again() {
    ++rounds_;
    client_.GetSync(path_, this, nullptr, nullptr);
    client_.SetSync(path_, std::to_string(rounds_.load()), -1, nullptr, 0);
  }
  MemoryClient& client_;
  const std::string path_;
  std::atomic<bool> stop_{false};
  std::atomic<int> rounds_{0};
};

// A client of a server whose reaper pass is due every 50 ms, with a container `/c` that had
// a child: `watcher` hears of `/c`'s deletion once the child goes (RemoveTheChild).
class MemoryServerReaperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(a_.client->Connect().ok());
    ASSERT_EQ(client().CreateSync("/tick", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
    ASSERT_EQ(client().CreateSync("/c", "", CreateMode::kContainer, nullptr), ClientCode::kOk);
    ASSERT_EQ(client().CreateSync("/c/x", "", CreateMode::kPersistent, nullptr), ClientCode::kOk);
    ASSERT_EQ(client().ExistsSync("/c", &watcher_, nullptr), ClientCode::kOk);
  }
  void TearDown() override { client().Close(); }  // before the watchers go
  MemoryClient& client() { return *a_.client; }
  void RemoveTheChild() { ASSERT_EQ(client().DeleteSync("/c/x", -1), ClientCode::kOk); }

  std::shared_ptr<MemoryServer> server_ =
      std::make_shared<MemoryServer>(Clock::System(), std::chrono::milliseconds(50));
  Recorded a_{server_};
  RecordingWatcher watcher_;
};

// ZooKeeper's container reaper on its timer, without a thread of its own: the pass runs on
// a client's event thread when due.
TEST_F(MemoryServerReaperTest, AClientsEventThreadRunsTheReaperPassOnTheServersTimer) {
  RemoveTheChild();
  auto seen = watcher_.Await(1);  // no one calls ReapContainers
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kDeleted);
  EXPECT_EQ(client().ExistsSync("/c", nullptr, nullptr), ClientCode::kNoNode);
  for (const std::string& name : ThreadNames()) EXPECT_NE(name, "ej-mem-reaper");
}

TEST_F(MemoryServerReaperTest, AnEventQueueThatNeverEmptiesStillLetsThePassRunInItsTime) {
  PingPong busy(client(), "/tick");
  busy.Start();
  RemoveTheChild();
  auto seen = watcher_.Await(1);
  const int rounds = busy.rounds();
  busy.Stop();
  client().WaitIdleForTesting();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kDeleted);
  EXPECT_GT(rounds, 1);  // the queue was busy meanwhile
  client().Close();      // before `busy` goes
}

}  // namespace
}  // namespace elasticjob::reg
