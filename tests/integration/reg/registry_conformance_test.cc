// One conformance suite, three backends: every test runs against the in-memory registry
// (memory: what NewRegistryCenter makes of memory://ns, with its settings), against a real
// ZooKeeper server (Debian's package, started per test by scripts/zk-server.sh), and against
// the registry class over the in-process memory client with the ZooKeeper backend's settings
// (memclient). All three are one registry class (ComposedRegistry) over either client.
// Fault injection: session close, kill -9 of another process holding a session, session
// expiry (the session killed from a second handle, or MemoryClient::Expire), and a server
// restart.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "elasticjob/reg/registry_center.h"
#include "infra/thread_name.h"
#include "reg/composed_registry.h"
#include "reg/coordinator_registry.h"
#include "reg/memory/memory_client.h"
#include "reg/memory/memory_registry.h"
#include "reg/zk_test_server.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using reg::NodeWatches;
using reg::WatchPolicy;

// The library's registries implement the internal protocol too (reg/coordinator_registry.h),
// which this suite also holds them to.
std::unique_ptr<reg::CoordinatorRegistry> Internal(std::unique_ptr<RegistryCenter> r) {
  auto* internal = dynamic_cast<reg::CoordinatorRegistry*>(r.get());
  if (internal == nullptr) return nullptr;
  (void)r.release();
  return std::unique_ptr<reg::CoordinatorRegistry>(internal);
}

// Collects events and states; waits on a condition variable (never sleeps).
class Recorder {
 public:
  void Add(const TreeEvent& e) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(e);
    cv_.notify_all();
  }
  void Add(ConnectionState s) {
    std::lock_guard<std::mutex> l(mu_);
    states_.push_back(s);
    cv_.notify_all();
  }
  bool HasEvent(TreeEvent::Type type, const std::string& key, const std::string& value = "\x01") {
    for (const auto& e : events_)
      if (e.type == type && e.key == key && (value == "\x01" || e.value == value)) return true;
    return false;
  }
  bool WaitEvent(TreeEvent::Type type, const std::string& key, const std::string& value = "\x01",
                 std::chrono::seconds timeout = 20s) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return HasEvent(type, key, value); });
  }
  bool WaitState(ConnectionState s, std::chrono::seconds timeout = 30s) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(
        l, timeout, [&] { return std::find(states_.begin(), states_.end(), s) != states_.end(); });
  }
  std::vector<ConnectionState> states() {
    std::lock_guard<std::mutex> l(mu_);
    return states_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TreeEvent> events_;
  std::vector<ConnectionState> states_;
};

// Polls `pred` each time `changed` may have happened; bounded by `timeout`.
bool Eventually(const std::function<bool()>& pred, Recorder& rec,
                std::chrono::seconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    rec.WaitEvent(TreeEvent::Type::kAdded, "/never", "", 1s);  // wakes on any event
  }
  return true;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Status SetUp() = 0;
  // A new, not yet initialised client of the namespace under test.
  virtual std::unique_ptr<reg::CoordinatorRegistry> NewClient(const std::string& params = "") = 0;
  virtual void ExpireSessions(RegistryCenter& client) = 0;
  virtual testing::ZkTestServer* server() { return nullptr; }
};

std::string UniqueNamespace() {
  static std::atomic<int> n{0};
  return "ns" + std::to_string(getpid()) + "_" + std::to_string(n++);
}

// memory://ns as NewRegistryCenter makes it (its URL's settings: no cache batching, the
// default session timeout), on a server of the test's own whose reaper runs every 200 ms, as
// the test server's (the shared memory://ns server keeps ZooKeeper's 60 s).
class MemoryBackend final : public Backend {
 public:
  Status SetUp() override { return Status::Ok(); }
  std::unique_ptr<reg::CoordinatorRegistry> NewClient(const std::string&) override {
    auto url = reg::ParseRegistryUrl("memory://" + ns_);
    if (!url.ok()) return nullptr;
    return reg::NewMemoryRegistry(server_, std::move(url).value());
  }
  void ExpireSessions(RegistryCenter& client) override {
    static_cast<reg::ComposedRegistry&>(client).ExpireSession();
  }

 private:
  std::string ns_ = UniqueNamespace();
  std::shared_ptr<reg::MemoryServer> server_ =
      std::make_shared<reg::MemoryServer>(Clock::System(), 200ms);
};

// The ZooKeeper registry class over MemoryClients of one in-process server: the same
// settings as the ZooKeeper backend's, no server process.
class MemoryClientBackend final : public Backend {
 public:
  Status SetUp() override { return Status::Ok(); }
  std::unique_ptr<reg::CoordinatorRegistry> NewClient(const std::string&) override {
    reg::RegistryUrl url;
    url.scheme = reg::RegistryUrl::Scheme::kZooKeeper;
    url.servers = "memory";
    url.name_space = ns_;
    url.session_timeout_ms = 2000;
    url.connection_timeout_ms = 5000;
    url.base_sleep_ms = 100;
    url.max_sleep_ms = 500;
    auto client = std::make_unique<reg::MemoryClient>(server_, url);
    reg::MemoryClient* raw = client.get();
    auto registry = std::make_unique<reg::ComposedRegistry>(url, std::move(client));
    clients_[static_cast<RegistryCenter*>(registry.get())] = raw;
    return registry;
  }
  void ExpireSessions(RegistryCenter& client) override { clients_.at(&client)->Expire(); }

 private:
  std::string ns_ = UniqueNamespace();
  // Empty containers reaped every 200 ms, as by the test server (scripts/zk-server.sh).
  std::shared_ptr<reg::MemoryServer> server_ =
      std::make_shared<reg::MemoryServer>(Clock::System(), 200ms);
  std::map<RegistryCenter*, reg::MemoryClient*> clients_;  // owned by the registries
};

class ZooKeeperBackend final : public Backend {
 public:
  Status SetUp() override { return server_.Start(); }
  std::unique_ptr<reg::CoordinatorRegistry> NewClient(const std::string& params) override {
    std::string p = "sessionTimeoutMs=2000&connectionTimeoutMs=5000&baseSleepMs=100&maxSleepMs=500";
    if (!params.empty()) p += "&" + params;
    auto r = NewRegistryCenter(server_.Url(ns_, p));
    return r.ok() ? Internal(std::move(r).value()) : nullptr;
  }
  void ExpireSessions(RegistryCenter& client) override {
    // End the client's session from a second handle (Curator's KillSession). The client may
    // win its session back before the borrowed handle's close reaches the server, so repeat
    // (bounded) until the client reports LOST. Stopping the server past the timeout instead
    // races the client's reconnect against the server's expiry check.
    auto& zk = static_cast<reg::ComposedRegistry&>(client);
    Recorder lost;
    ThreadPool pool(1);
    auto listener =
        client.AddConnectionStateListener(pool, [&](ConnectionState s) { lost.Add(s); });
    const int64_t id = zk.session_id();
    const std::string password = zk.session_password();
    for (int attempt = 0; attempt < 10; ++attempt) {
      Status s = testing::KillSession(server_.port(), id, password);
      EXPECT_TRUE(s.ok()) << s;
      if (lost.WaitState(ConnectionState::kLost, 8s)) return;
    }
    ADD_FAILURE() << "could not expire session " << id;
  }
  testing::ZkTestServer* server() override { return &server_; }

 private:
  testing::ZkTestServer server_;
  std::string ns_ = UniqueNamespace();
};

class RegistryConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      backend_ = std::make_unique<MemoryBackend>();
    } else if (GetParam() == "memclient") {
      backend_ = std::make_unique<MemoryClientBackend>();
    } else {
      backend_ = std::make_unique<ZooKeeperBackend>();
    }
    Status up = backend_->SetUp();
    ASSERT_TRUE(up.ok()) << up;
    reg_ = Client();
  }

  std::unique_ptr<reg::CoordinatorRegistry> Client(const std::string& params = "") {
    auto c = backend_->NewClient(params);
    EXPECT_NE(c, nullptr);
    Status s = c->Init();
    EXPECT_TRUE(s.ok()) << s;
    return c;
  }

  ThreadPool pool_{2};
  SerialExecutor events_{pool_};
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<reg::CoordinatorRegistry> reg_;
};

TEST_P(RegistryConformanceTest, PersistGetUpdateRemove) {
  ASSERT_TRUE(reg_->Persist("/job/config", "a").ok());
  EXPECT_EQ(*reg_->Get("/job/config"), "a");
  EXPECT_EQ(*reg_->GetDirectly("/job/config"), "a");
  EXPECT_TRUE(*reg_->IsExisted("/job"));  // persistent parent created
  EXPECT_EQ(*reg_->GetDirectly("/job"), "");
  ASSERT_TRUE(reg_->Persist("/job/config", "b").ok());  // existing: set data
  EXPECT_EQ(*reg_->GetDirectly("/job/config"), "b");
  ASSERT_TRUE(reg_->Update("/job/config", "c").ok());
  EXPECT_EQ(*reg_->GetDirectly("/job/config"), "c");
  EXPECT_EQ(reg_->Update("/job/missing", "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(reg_->GetDirectly("/job/missing").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(*reg_->IsExisted("/job/missing"));
  ASSERT_TRUE(reg_->Persist("/job/servers/10.0.0.1", "ENABLED").ok());
  ASSERT_TRUE(reg_->Remove("/job").ok());  // recursive
  EXPECT_FALSE(*reg_->IsExisted("/job"));
  EXPECT_TRUE(reg_->Remove("/job").ok());  // absent: fine
}

TEST_P(RegistryConformanceTest, ChildrenAreSortedDescending) {
  for (const char* c : {"b", "a", "c", "10.0.0.2@-@1", "10.0.0.10@-@1"}) {
    ASSERT_TRUE(reg_->Persist(std::string("/p/") + c, "").ok());
  }
  EXPECT_EQ(*reg_->GetChildrenKeys("/p"),
            (std::vector<std::string>{"c", "b", "a", "10.0.0.2@-@1", "10.0.0.10@-@1"}));
  EXPECT_EQ(*reg_->GetNumChildren("/p"), 5);
  EXPECT_EQ(reg_->GetChildrenKeys("/nope").status().code(), StatusCode::kNotFound);
}

TEST_P(RegistryConformanceTest, MalformedKeysAreRejected) {
  for (const char* k : {"", "job", "/job/", "/a//b", "/a/../b"}) {
    EXPECT_EQ(reg_->Persist(k, "x").code(), StatusCode::kInvalidArgument) << k;
  }
}

TEST_P(RegistryConformanceTest, SequentialNodesCountUp) {
  auto a = reg_->PersistSequential("/seq/n-", "1");
  auto b = reg_->PersistSequential("/seq/n-", "2");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, "/seq/n-0000000000");
  EXPECT_EQ(*b, "/seq/n-0000000001");
  auto e = reg_->PersistEphemeralSequential("/seq/e-", "3");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, "/seq/e-0000000002");
  EXPECT_EQ(*reg_->GetDirectly(*e), "3");
}

TEST_P(RegistryConformanceTest, EphemeralNodesGoWhenTheSessionCloses) {
  auto other = Client();
  ASSERT_TRUE(other->PersistEphemeral("/job/instances/a@-@1", "x").ok());
  ASSERT_TRUE(other->PersistEphemeral("/job/instances/a@-@1", "y").ok());  // replace
  EXPECT_EQ(*reg_->GetDirectly("/job/instances/a@-@1"), "y");
  EXPECT_EQ(other->Persist("/job/instances/a@-@1/child", "").code(), StatusCode::kInvalidArgument);
  other->Close();
  EXPECT_EQ(reg_->GetDirectly("/job/instances/a@-@1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(other->Persist("/x", "").code() == StatusCode::kOk, false);  // closed client
}

TEST_P(RegistryConformanceTest, PersistEphemeralOverItsOwnNodeNeverRemovesIt) {
  // An instance writes its instance node again after every reconnect. Deleted and created
  // again, the node would be missing for a moment, and another instance that saw it go would
  // take this one for crashed and run its running items beside it (chaos
  // ensemble_leader_killed). So the owner's node takes the new value in place.
  ASSERT_TRUE(reg_->PersistEphemeral("/own/instance", "v1").ok());
  auto watcher = Client();
  Recorder rec;
  auto tree = watcher->Watch("/own", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(tree.ok());
  ASSERT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/own/instance", "v1"));
  ASSERT_TRUE(reg_->PersistEphemeral("/own/instance", "v2").ok());
  ASSERT_TRUE(watcher->Persist("/own/done", "").ok());  // written after: its event comes after
  ASSERT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/own/done"));
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kUpdated, "/own/instance", "v2", 1s));
  EXPECT_FALSE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/own/instance", "\x01", 0s));
  EXPECT_EQ(*watcher->GetDirectly("/own/instance"), "v2");
  // Another session's node is still replaced, and is ours from then on.
  auto other = Client();
  ASSERT_TRUE(other->PersistEphemeral("/own/theirs", "x").ok());
  ASSERT_TRUE(reg_->PersistEphemeral("/own/theirs", "mine").ok());
  other->Close();
  EXPECT_EQ(*watcher->GetDirectly("/own/theirs"), "mine");
  reg_->Close();
  EXPECT_EQ(watcher->GetDirectly("/own/theirs").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(watcher->GetDirectly("/own/instance").status().code(), StatusCode::kNotFound);
}

TEST_P(RegistryConformanceTest, TransactionsApplyAllOrNothing) {
  ASSERT_TRUE(reg_->Persist("/t", "").ok());
  Status s = reg_->ExecuteInTransaction({TransactionOp::Create("/t/a", "1"),
                                         TransactionOp::Create("/t/b", "2"),
                                         TransactionOp::CheckExists("/t/missing")});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("transaction step 3"), std::string::npos) << s;
  EXPECT_FALSE(*reg_->IsExisted("/t/a"));
  EXPECT_FALSE(*reg_->IsExisted("/t/b"));
  ASSERT_TRUE(reg_->Persist("/t/old", "x").ok());
  s = reg_->ExecuteInTransaction(
      {TransactionOp::CheckExists("/t"), TransactionOp::Create("/t/a", "1"),
       TransactionOp::SetData("/t/old", "y"), TransactionOp::Delete("/t/old")});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(*reg_->GetDirectly("/t/a"), "1");
  EXPECT_FALSE(*reg_->IsExisted("/t/old"));
  EXPECT_EQ(reg_->ExecuteInTransaction({TransactionOp::Create("/t/a", "again")}).code(),
            StatusCode::kAlreadyExists);
}

TEST_P(RegistryConformanceTest, AsyncTransactionsReportOnTheExecutorInTheOrderSent) {
  ASSERT_TRUE(reg_->Persist("/at", "").ok());
  auto sub = reg_->Watch("/at", events_, [](const TreeEvent&) {});
  ASSERT_TRUE(sub.ok()) << sub.status();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, Status>> outcomes;  // guarded by mu
  std::vector<bool> cached;                      // guarded by mu: read-your-writes at `done`
  auto done = [&](int n, std::string key) {
    return [&, n, key](Status s) {
      bool seen = *reg_->IsExisted(key);
      std::lock_guard<std::mutex> lock(mu);
      outcomes.emplace_back(n, std::move(s));
      cached.push_back(seen);
      cv.notify_all();
    };
  };
  SerialExecutor serial(pool_);
  // Sent back to back: the second depends on the first having been applied.
  reg_->ExecuteInTransactionAsync({TransactionOp::Create("/at/a", "1")}, serial, done(1, "/at/a"));
  reg_->ExecuteInTransactionAsync(
      {TransactionOp::CheckExists("/at/a"), TransactionOp::Create("/at/a/b", "2")}, serial,
      done(2, "/at/a/b"));
  reg_->ExecuteInTransactionAsync(
      {TransactionOp::Create("/at/c", "3"), TransactionOp::CheckExists("/at/missing")}, serial,
      done(3, "/at/missing"));
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return outcomes.size() == 3; }));
  EXPECT_EQ(outcomes[0].first, 1);
  EXPECT_TRUE(outcomes[0].second.ok()) << outcomes[0].second;
  EXPECT_TRUE(cached[0]);  // the cache has the write when `done` runs
  EXPECT_EQ(outcomes[1].first, 2);
  EXPECT_TRUE(outcomes[1].second.ok()) << outcomes[1].second;
  EXPECT_TRUE(cached[1]);
  EXPECT_EQ(outcomes[2].second.code(), StatusCode::kNotFound);
  EXPECT_NE(outcomes[2].second.message().find("transaction step 2"), std::string::npos)
      << outcomes[2].second;
  lock.unlock();
  EXPECT_EQ(*reg_->GetDirectly("/at/a/b"), "2");
  EXPECT_FALSE(*reg_->IsExisted("/at/c"));  // all or nothing
}

// A stamp is a place in the one order of writes: a fencing token (docs/runtime.md).
TEST_P(RegistryConformanceTest, StampsGrowWithEveryLaterTransactionOfAnyClient) {
  ASSERT_TRUE(reg_->Persist("/st", "").ok());
  auto other = Client();
  SerialExecutor serial(pool_);
  auto stamped = [&](reg::CoordinatorRegistry& r, std::vector<TransactionOp> ops) {
    auto p = std::make_shared<std::promise<Result<int64_t>>>();
    auto f = p->get_future();
    r.ExecuteInTransactionStampedAsync(std::move(ops), serial,
                                       [p](Result<int64_t> s) { p->set_value(std::move(s)); });
    EXPECT_EQ(f.wait_for(10s), std::future_status::ready);
    return f.get();
  };
  auto a = stamped(*reg_, {TransactionOp::Create("/st/a", "x", CreateMode::kEphemeral)});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GT(*a, 0);
  EXPECT_EQ(*reg_->GetDirectly("/st/a"), "x");  // the stamp's set wrote what was created
  ASSERT_TRUE(reg_->Remove("/st/a").ok());
  auto b = stamped(*other, {TransactionOp::Create("/st/a", "y", CreateMode::kEphemeral)});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_GT(*b, *a);
  auto c =
      stamped(*other, {TransactionOp::CheckExists("/st/a"), TransactionOp::SetData("/st/a", "z")});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(*c, *b);
  EXPECT_EQ(*reg_->GetDirectly("/st/a"), "z");
  // A failed one writes nothing; a stamp needs a last step that writes a named node.
  EXPECT_EQ(stamped(*reg_, {TransactionOp::Create("/st/a", "again")}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(stamped(*reg_, {TransactionOp::Delete("/st/a")}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(stamped(*reg_, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(stamped(*reg_, {TransactionOp::Create("/st/s", "", CreateMode::kPersistentSequential)})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  // Sent together (one multi-op on ZooKeeper): each has its stamp, in the order sent.
  constexpr int kCount = 20;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, Result<int64_t>>> got;  // guarded by mu
  for (int i = 0; i < kCount; ++i) {
    reg_->ExecuteInTransactionStampedAsync(
        {TransactionOp::Create("/st/n" + std::to_string(i), "v")}, serial,
        [&, i](Result<int64_t> s) {
          std::lock_guard<std::mutex> lock(mu);
          got.emplace_back(i, std::move(s));
          cv.notify_all();
        });
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return got.size() == kCount; }));
  int64_t previous = *c;
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(got[i].first, i);
    ASSERT_TRUE(got[i].second.ok()) << got[i].second.status();
    EXPECT_GT(*got[i].second, *c);
    EXPECT_GE(*got[i].second, previous);
    previous = *got[i].second;
  }
}

TEST_P(RegistryConformanceTest, AsyncTransactionsSentTogetherLeaveInFewWritesAndInOrder) {
  ASSERT_TRUE(reg_->Persist("/ab", "").ok());
  auto* zk = dynamic_cast<reg::ComposedRegistry*>(reg_.get());
  const uint64_t multis_before = zk != nullptr ? zk->request_counts().at("multi") : 0;
  constexpr int kCount = 200;
  constexpr int kFailing = 150;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;            // guarded by mu
  std::vector<int> order;  // guarded by mu
  std::vector<Status> failures;
  SerialExecutor serial(pool_);
  for (int i = 0; i < kCount; ++i) {
    // Each depends on the one before (unless that one fails); one fails.
    std::vector<TransactionOp> ops;
    if (i > 0 && i - 1 != kFailing)
      ops.push_back(TransactionOp::CheckExists("/ab/n" + std::to_string(i - 1)));
    if (i == kFailing) ops.push_back(TransactionOp::CheckExists("/ab/missing"));
    ops.push_back(TransactionOp::Create("/ab/n" + std::to_string(i), std::to_string(i)));
    reg_->ExecuteInTransactionAsync(std::move(ops), serial, [&, i](Status st) {
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      order.push_back(i);
      if (!st.ok()) failures.push_back(st);
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done == kCount; }));
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
  // The failing one failed alone; its batch's others went through.
  ASSERT_EQ(failures.size(), size_t{1});
  EXPECT_EQ(failures[0].code(), StatusCode::kNotFound) << failures[0];
  lock.unlock();
  for (int i = 0; i < kCount; ++i) {
    EXPECT_EQ(*reg_->IsExisted("/ab/n" + std::to_string(i)), i != kFailing) << i;
  }
  if (zk != nullptr) {
    // Merged while one was on its way (the failure costs its batch a resend per member).
    EXPECT_LT(zk->request_counts().at("multi") - multis_before, uint64_t{kCount / 2});
  }
}

// A job that fell behind writes marks that are there already: many members of one batch
// fail. Each still gets its own outcome, the others are applied, and all report in order.
TEST_P(RegistryConformanceTest, AsyncTransactionsWithManyFailuresEachGetTheirOwnOutcome) {
  ASSERT_TRUE(reg_->Persist("/af", "").ok());
  constexpr int kCount = 300;
  for (int i = 0; i < kCount; i += 3) {  // every third create finds its node there
    ASSERT_TRUE(reg_->Persist("/af/n" + std::to_string(i), "old").ok());
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, Status>> outcomes;  // guarded by mu
  SerialExecutor serial(pool_);
  for (int i = 0; i < kCount; ++i) {
    reg_->ExecuteInTransactionAsync({TransactionOp::Create("/af/n" + std::to_string(i), "new")},
                                    serial, [&, i](Status st) {
                                      std::lock_guard<std::mutex> lock(mu);
                                      outcomes.emplace_back(i, std::move(st));
                                      cv.notify_all();
                                    });
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(
      cv.wait_for(lock, std::chrono::seconds(30), [&] { return outcomes.size() == kCount; }))
      << outcomes.size() << " of " << kCount << " reported";
  for (int i = 0; i < kCount; ++i) {
    const auto& [n, st] = outcomes[static_cast<size_t>(i)];
    ASSERT_EQ(n, i);
    if (i % 3 == 0) {
      EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << i << ": " << st;
    } else {
      EXPECT_TRUE(st.ok()) << i << ": " << st;
    }
  }
  lock.unlock();
  for (int i = 0; i < kCount; ++i) {
    EXPECT_EQ(*reg_->GetDirectly("/af/n" + std::to_string(i)), i % 3 == 0 ? "old" : "new") << i;
  }
}

TEST_P(RegistryConformanceTest, AWatchPolicyStillSeesMarksComeAndGo) {
  ASSERT_TRUE(reg_->Persist("/p/item", "").ok());
  Recorder rec;
  // Marks under /p/item need no watch of their own; /p/item needs only its children watched.
  WatchPolicy policy = [](std::string_view key) {
    if (key.starts_with("/p/item/")) return NodeWatches{false, false};
    if (key == "/p/item") return NodeWatches{false, true};
    return NodeWatches{};
  };
  auto sub = reg_->WatchTree(
      "/p", events_, [&](const TreeEvent& e) { rec.Add(e); }, policy);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/p/item", ""));
  auto other = Client();
  for (int round = 0; round < 3; ++round) {
    const std::string v = "owner-" + std::to_string(round);
    ASSERT_TRUE(other->Persist("/p/item/running", v).ok());
    EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/p/item/running", v)) << round;
    EXPECT_EQ(*reg_->Get("/p/item/running"), v);
    ASSERT_TRUE(other->Remove("/p/item/running").ok());
    EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/p/item/running", v)) << round;
    EXPECT_FALSE(*reg_->IsExisted("/p/item/running"));
  }
  // Our own mark: in the cache at once, and its removal by another client is seen.
  ASSERT_TRUE(reg_->Persist("/p/item/misfire", "").ok());
  EXPECT_TRUE(*reg_->IsExisted("/p/item/misfire"));
  ASSERT_TRUE(other->Remove("/p/item/misfire").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/p/item/misfire"));
  // A node the policy leaves alone still reports updates in place.
  ASSERT_TRUE(other->Persist("/p/config", "a").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/p/config", "a"));
  ASSERT_TRUE(other->Persist("/p/config", "b").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kUpdated, "/p/config", "b"));
  other->Close();
}

TEST_P(RegistryConformanceTest, WatchDeliversEveryEventTypeAndServesReadsFromTheCache) {
  ASSERT_TRUE(reg_->Persist("/w/existing", "0").ok());
  Recorder rec;
  auto sub = reg_->Watch("/w", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/w/existing", "0"));  // initial contents
  auto other = Client();
  ASSERT_TRUE(other->Persist("/w/a", "1").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/w/a", "1"));
  ASSERT_TRUE(other->Persist("/w/a", "2").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kUpdated, "/w/a", "2"));
  ASSERT_TRUE(other->Persist("/w/a/deep/er", "3").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/w/a/deep/er", "3"));
  EXPECT_EQ(*reg_->Get("/w/a/deep/er"), "3");
  ASSERT_TRUE(other->Remove("/w/a").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/w/a/deep/er"));
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/w/a"));
  EXPECT_EQ(reg_->Get("/w/a").status().code(), StatusCode::kNotFound);
  // Our own writes are visible in the cache at once.
  ASSERT_TRUE(reg_->Persist("/w/mine", "m").ok());
  EXPECT_EQ(*reg_->Get("/w/mine"), "m");
}

TEST_P(RegistryConformanceTest, CacheConvergesAfterABurstOfRemoteChanges) {
  Recorder rec;
  auto sub = reg_->Watch("/burst", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok());
  auto other = Client();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(other->Persist("/burst/n" + std::to_string(i % 20), std::to_string(i)).ok());
  }
  ASSERT_TRUE(other->Remove("/burst/n3").ok());
  ASSERT_TRUE(other->Persist("/burst/done", "yes").ok());
  ASSERT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/burst/done", "yes"));
  EXPECT_TRUE(Eventually(
      [&] {
        for (int i = 0; i < 20; ++i) {
          std::string k = "/burst/n" + std::to_string(i);
          auto cached = reg_->Get(k);
          auto direct = reg_->GetDirectly(k);
          if (cached.ok() != direct.ok() || (cached.ok() && *cached != *direct)) return false;
        }
        return true;
      },
      rec));
  EXPECT_EQ(*reg_->GetChildrenKeys("/burst"), *other->GetChildrenKeys("/burst"));
}

TEST_P(RegistryConformanceTest, ConnectionStatesAndSessionExpiry) {
  Recorder rec;
  auto listener = reg_->AddConnectionStateListener(events_, [&](ConnectionState s) { rec.Add(s); });
  auto tree = reg_->Watch("/exp", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(reg_->PersistEphemeral("/exp/instance", "me").ok());
  backend_->ExpireSessions(*reg_);
  ASSERT_TRUE(rec.WaitState(ConnectionState::kLost));
  ASSERT_TRUE(rec.WaitState(ConnectionState::kReconnected));
  // The ephemeral node went with the old session; the owner restores it on the new one.
  EXPECT_EQ(reg_->GetDirectly("/exp/instance").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/exp/instance"));
  ASSERT_TRUE(reg_->PersistEphemeral("/exp/instance", "me-again").ok());
  EXPECT_EQ(*reg_->GetDirectly("/exp/instance"), "me-again");
  // The cache follows changes made after the new session started.
  auto other = Client();
  ASSERT_TRUE(other->Persist("/exp/later", "v").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/exp/later", "v"));
  EXPECT_EQ(*reg_->Get("/exp/later"), "v");
}

TEST_P(RegistryConformanceTest, LeaderLatchAdmitsOneHolderAtATime) {
  constexpr int kClients = 4;
  constexpr int kRounds = 3;
  std::vector<std::unique_ptr<reg::CoordinatorRegistry>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(Client());
  std::atomic<int> inside{0}, max_inside{0}, runs{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r) {
        Status s =
            clients[static_cast<size_t>(i)]->ExecuteInLeader("/job/leader/election/latch", [&] {
              int now = ++inside;
              int prev = max_inside.load();
              while (now > prev && !max_inside.compare_exchange_weak(prev, now)) {
              }
              std::this_thread::yield();
              --inside;
              ++runs;
            });
        EXPECT_TRUE(s.ok()) << s;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs.load(), kClients * kRounds);
  EXPECT_EQ(max_inside.load(), 1);
  // Curator's node names: released nodes are gone.
  auto left = reg_->GetChildrenKeys("/job/leader/election/latch");
  EXPECT_TRUE(!left.ok() || left->empty());
}

// A node that names the children its cache keeps: those come and go as events (made by us
// or by others), the rest are outside the cache (reads of them ask the server) and, on
// ZooKeeper, cost this client no request however often they change.
TEST_P(RegistryConformanceTest, NamedChildrenKeepOthersOutOfTheCache) {
  static constexpr std::string_view kKept[] = {"owner", "disabled"};
  ASSERT_TRUE(reg_->Persist("/n/item/owner", "a").ok());
  WatchPolicy policy = [](std::string_view key) {
    if (key == "/n/item") return NodeWatches{false, false, kKept};
    if (key.starts_with("/n/item/")) return NodeWatches{true, false};
    return NodeWatches{};
  };
  Recorder rec;
  auto sub = reg_->WatchTree(
      "/n", events_, [&](const TreeEvent& e) { rec.Add(e); }, policy);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/n/item/owner", "a"));
  auto other = Client();
  // Named children: created, updated and deleted by another client, and by us.
  ASSERT_TRUE(other->Persist("/n/item/disabled", "").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/n/item/disabled", ""));
  ASSERT_TRUE(other->Persist("/n/item/owner", "b").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kUpdated, "/n/item/owner", "b"));
  ASSERT_TRUE(other->Remove("/n/item/disabled").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/n/item/disabled"));
  EXPECT_FALSE(*reg_->IsExisted("/n/item/disabled"));
  ASSERT_TRUE(other->Persist("/n/item/disabled", "again").ok());  // its watch was set again
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/n/item/disabled", "again"));
  // The others: what the server has, whoever wrote it.
  auto* zk = dynamic_cast<reg::ComposedRegistry*>(reg_.get());
  auto requests = [&] {
    uint64_t n = 0;
    for (const auto& [kind, count] : zk->request_counts()) n += count;
    return n;
  };
  const uint64_t before = zk != nullptr ? requests() : 0;
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(other->Persist("/n/item/running", std::to_string(round)).ok());
    ASSERT_TRUE(other->Remove("/n/item/running").ok());
  }
  if (zk != nullptr) {
    EXPECT_EQ(requests(), before);  // no watch fired for them
  }
  ASSERT_TRUE(other->Persist("/n/item/running", "x").ok());
  EXPECT_EQ(*reg_->Get("/n/item/running"), "x");
  EXPECT_TRUE(*reg_->IsExisted("/n/item/running"));
  ASSERT_TRUE(reg_->Persist("/n/item/running", "ours").ok());
  EXPECT_EQ(*other->Get("/n/item/running"), "ours");
  ASSERT_TRUE(reg_->Remove("/n/item/running").ok());
  EXPECT_FALSE(*reg_->IsExisted("/n/item/running"));
  ASSERT_TRUE(reg_->Remove("/n/item/disabled").ok());
  EXPECT_FALSE(*reg_->IsExisted("/n/item/disabled"));
  // The named ones stayed right through it.
  ASSERT_TRUE(other->Persist("/n/item/owner", "c").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kUpdated, "/n/item/owner", "c"));
  EXPECT_EQ(*reg_->Get("/n/item/owner"), "c");
  other->Close();
}

// A node whose value is "" by contract and that names its children, the first usually
// there (an item and its owner): a cache loads it without reading its value, reads the
// owner at once, and probes only the others, and an owner missing at the load (probed then)
// is seen when it comes.
TEST_P(RegistryConformanceTest, AnEmptyItemIsNotReadAndItsUsuallyPresentChildIsReadAtOnce) {
  static constexpr std::string_view kKept[] = {"owner", "disabled"};
  ASSERT_TRUE(reg_->Persist("/m/item/a/owner", "x").ok());
  ASSERT_TRUE(reg_->Persist("/m/item/b", "").ok());
  WatchPolicy policy = [](std::string_view key) {
    if (key == "/m/item/a" || key == "/m/item/b") {
      return NodeWatches{false, false, kKept, /*empty_value=*/true, /*named_present=*/1};
    }
    if (key.starts_with("/m/item/")) return NodeWatches{true, false};
    return NodeWatches{};
  };
  auto* zk = dynamic_cast<reg::ComposedRegistry*>(reg_.get());
  const auto before = zk != nullptr ? zk->request_counts() : std::map<std::string, uint64_t>{};
  Recorder rec;
  auto sub = reg_->WatchTree(
      "/m", events_, [&](const TreeEvent& e) { rec.Add(e); }, policy);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/m/item/a", ""));
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/m/item/a/owner", "x"));
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/m/item/b", ""));
  if (zk != nullptr) {
    const auto after = zk->request_counts();
    // Probed: a's and b's "disabled", and b's owner once its read found it missing.
    EXPECT_EQ(after.at("exists") - before.at("exists"), 3u);
    // Read: the values of /m and /m/item, and the owners (a's, b's missing one); never an
    // item's value.
    EXPECT_EQ(after.at("get") - before.at("get"), 4u);
  }
  EXPECT_EQ(*reg_->Get("/m/item/a"), "");
  auto other = Client();
  ASSERT_TRUE(other->Persist("/m/item/b/owner", "y").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/m/item/b/owner", "y"));
  ASSERT_TRUE(other->Persist("/m/item/a/owner", "z").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kUpdated, "/m/item/a/owner", "z"));
  ASSERT_TRUE(other->Persist("/m/item/a/disabled", "").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/m/item/a/disabled", ""));
  ASSERT_TRUE(other->Remove("/m/item/b").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/m/item/b"));
  EXPECT_FALSE(*reg_->IsExisted("/m/item/b/owner"));
  other->Close();
}

// A node whose children are all outside the cache (NodeWatches::children_outside, as a
// job's `runtime`): they are neither loaded nor reported, cost this client no request however
// often they change, and reads of them ask the server.
TEST_P(RegistryConformanceTest,
       ChildrenOutsideTheCacheAreNeitherLoadedNorReportedAndReadFromTheServer) {
  ASSERT_TRUE(reg_->Persist("/r/box/a", "1").ok());
  WatchPolicy policy = [](std::string_view key) {
    if (key == "/r/box") {
      return NodeWatches{false, false, {}, /*empty_value=*/true, 0, /*children_outside=*/true};
    }
    return NodeWatches{};
  };
  auto* zk = dynamic_cast<reg::ComposedRegistry*>(reg_.get());
  auto requests = [&] {
    uint64_t n = 0;
    for (const auto& [kind, count] : zk->request_counts()) n += count;
    return n;
  };
  const uint64_t before_load = zk != nullptr ? requests() : 0;
  Recorder rec;
  auto sub = reg_->WatchTree(
      "/r", events_, [&](const TreeEvent& e) { rec.Add(e); }, policy);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/r/box", ""));
  if (zk != nullptr) {
    EXPECT_EQ(requests() - before_load, 2u);  // /r's value and children; nothing of the box
  }
  auto other = Client();
  const uint64_t before = zk != nullptr ? requests() : 0;
  for (int round = 0; round < 10; ++round) {
    ASSERT_TRUE(other->Persist("/r/box/b", std::to_string(round)).ok());
    ASSERT_TRUE(other->Remove("/r/box/b").ok());
  }
  ASSERT_TRUE(other->Persist("/r/box/c", "3").ok());
  ASSERT_TRUE(other->Persist("/r/after", "").ok());  // reported after everything above
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/r/after", ""));
  if (zk != nullptr) {
    // /r's children, /r/after's value and children; none for the box's twenty changes.
    EXPECT_LE(requests() - before, 3u);
  }
  EXPECT_FALSE(rec.WaitEvent(TreeEvent::Type::kAdded, "/r/box/a", "\x01", 0s));
  EXPECT_FALSE(rec.WaitEvent(TreeEvent::Type::kAdded, "/r/box/b", "\x01", 0s));
  EXPECT_FALSE(rec.WaitEvent(TreeEvent::Type::kAdded, "/r/box/c", "\x01", 0s));
  EXPECT_EQ(*reg_->Get("/r/box/c"), "3");  // from the server
  EXPECT_TRUE(*reg_->IsExisted("/r/box/a"));
  EXPECT_FALSE(*reg_->IsExisted("/r/box/b"));
  auto children = reg_->GetChildrenKeys("/r/box");
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(children->size(), 2u);
  ASSERT_TRUE(reg_->Remove("/r/box/a").ok());
  EXPECT_FALSE(*reg_->IsExisted("/r/box/a"));
  other->Close();
}

// Holds every task posted to it until released, so a test can look between a change and
// its event's delivery.
class HeldExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override {
    std::lock_guard<std::mutex> l(mu_);
    tasks_.push_back(std::move(task));
    cv_.notify_all();
  }
  bool WaitQueued(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return tasks_.size() >= n; });
  }
  size_t queued() {
    std::lock_guard<std::mutex> l(mu_);
    return tasks_.size();
  }
  void RunAll() {
    std::vector<std::function<void()>> tasks;
    {
      std::lock_guard<std::mutex> l(mu_);
      tasks.swap(tasks_);
    }
    for (auto& t : tasks) t();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> tasks_;
};

TEST_P(RegistryConformanceTest, AWatchCountsChangesBeforeTheirEventsAreDelivered) {
  static constexpr std::string_view kKept[] = {"owner"};
  ASSERT_TRUE(reg_->Persist("/c/item/owner", "a").ok());
  WatchPolicy policy = [](std::string_view key) {
    if (key == "/c/item") return NodeWatches{false, false, kKept};
    if (key.starts_with("/c/item/")) return NodeWatches{true, false};
    return NodeWatches{};
  };
  HeldExecutor held;
  std::vector<TreeEvent> seen;
  auto sub = reg_->WatchTree(
      "/c", held, [&](const TreeEvent& e) { seen.push_back(e); }, policy);
  ASSERT_TRUE(sub.ok()) << sub.status();
  auto count = [&] { return (*sub)->changes(); };
  ASSERT_TRUE(count().has_value()) << "a Watch counts its changes";
  // Connection listeners have nothing to count.
  ThreadPool pool(1);
  auto listener = reg_->AddConnectionStateListener(pool, [](ConnectionState) {});
  auto* counted = dynamic_cast<reg::CountedSubscription*>(listener.get());
  EXPECT_TRUE(counted == nullptr || !counted->changes());

  // Our own write: in the cache at once, so counted at once, while its event is still held.
  held.RunAll();
  const size_t delivered = seen.size();
  uint64_t before = *count();
  ASSERT_TRUE(reg_->Persist("/c/config", "1").ok());
  EXPECT_GT(*count(), before);
  EXPECT_EQ(seen.size(), delivered);
  // Another client's write: counted by the time its event is queued, before it is run.
  before = *count();
  size_t queued = held.queued();
  auto other = Client();
  ASSERT_TRUE(other->Persist("/c/item/owner", "b").ok());
  ASSERT_TRUE(held.WaitQueued(queued + 1));
  EXPECT_GT(*count(), before);
  EXPECT_EQ(*reg_->Get("/c/item/owner"), "b");
  EXPECT_EQ(seen.size(), delivered);
  // Writes outside the watched subtree are not its changes.
  before = *count();
  ASSERT_TRUE(reg_->Persist("/elsewhere", "x").ok());
  ASSERT_TRUE(other->Persist("/elsewhere", "y").ok());
  EXPECT_EQ(*count(), before);
  // Nor are children the policy keeps out of the cache (a run's running mark), whoever
  // writes them.
  ASSERT_TRUE(reg_->Persist("/c/item/running", "me").ok());
  ASSERT_TRUE(reg_->Remove("/c/item/running").ok());
  ASSERT_TRUE(other->Persist("/c/item/running", "it").ok());
  ASSERT_TRUE(other->Remove("/c/item/running").ok());
  EXPECT_EQ(*count(), before);
  held.RunAll();
  for (const auto& e : seen) EXPECT_NE(e.key, "/c/item/running");
  EXPECT_GT(seen.size(), delivered);
  sub->reset();
  held.RunAll();  // deliveries after the end of the subscription run nothing
  other->Close();
}

// The server deletes an empty latch container on its own, and a cache covering the latch
// learns of it only later: the next contender must make the container again, not fail.
TEST_P(RegistryConformanceTest, LeaderLatchOutlivesItsContainerBeingDeleted) {
  const std::string latch = "/job/leader/election/latch";
  Recorder rec;
  auto sub = reg_->Watch("/job", events_, [&](const TreeEvent& e) { rec.Add(e); });
  auto other = Client();
  int runs = 0;
  for (int round = 0; round < 10; ++round) {
    Status s = reg_->ExecuteInLeader(latch, [&] { ++runs; });
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s;
    ASSERT_TRUE(other->Remove(latch).ok());  // as the server reaps the empty container
  }
  EXPECT_EQ(runs, 10);
  ASSERT_TRUE(reg_->ExecuteInLeader(latch, [&] { ++runs; }).ok());
  // Made again as a container, as Curator makes it: it goes once empty.
  EXPECT_TRUE(Eventually(
      [&] { return reg_->GetDirectly(latch).status().code() == StatusCode::kNotFound; }, rec, 30s));
}

TEST_P(RegistryConformanceTest, LeaderLatchPassesOnWhenTheHolderSessionEnds) {
  auto holder = Client();
  std::mutex mu;
  std::condition_variable cv;
  bool holding = false, release = false;
  std::thread t([&] {
    Status s = holder->ExecuteInLeader("/l/latch", [&] {
      std::unique_lock<std::mutex> l(mu);
      holding = true;
      cv.notify_all();
      cv.wait(l, [&] { return release; });
    });
    (void)s;
  });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return holding; });
  }
  auto children = reg_->GetChildrenKeys("/l/latch");
  ASSERT_TRUE(children.ok());
  ASSERT_EQ(children->size(), 1u);
  EXPECT_EQ((*children)[0].rfind("_c_", 0), 0u);
  EXPECT_NE((*children)[0].find("-latch-0000000000"), std::string::npos) << (*children)[0];
  std::atomic<bool> acquired{false};
  std::thread waiter(
      [&] { EXPECT_TRUE(reg_->ExecuteInLeader("/l/latch", [&] { acquired = true; }).ok()); });
  holder->Close();  // the holder's session ends while it is still inside
  waiter.join();
  EXPECT_TRUE(acquired.load());
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  t.join();
}

TEST_P(RegistryConformanceTest, RegistryTimeIsTheServersClock) {
  auto t = reg_->GetRegistryCenterTime("/systemTime/current");
  ASSERT_TRUE(t.ok()) << t.status();
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  EXPECT_LT(std::abs(now - *t), 60'000);
}

TEST_P(RegistryConformanceTest, ContainerNodesGoWithTheirLastChild) {
  Recorder rec;
  auto sub = reg_->Watch("/c", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(reg_->Persist("/c", "").ok());
  ASSERT_TRUE(reg_->CreateContainer("/c/box").ok());
  ASSERT_TRUE(reg_->Persist("/c/box/item", "").ok());
  ASSERT_TRUE(reg_->Remove("/c/box/item").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/c/box", "\x01", 30s));
}

INSTANTIATE_TEST_SUITE_P(Backends, RegistryConformanceTest,
                         ::testing::Values("memory", "memclient", "zookeeper"),
                         [](const auto& p) { return p.param; });

// ZooKeeper-only behaviour.
class ZooKeeperRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status up = server_.Start();
    ASSERT_TRUE(up.ok()) << up;
  }
  std::unique_ptr<reg::CoordinatorRegistry> Client(const std::string& ns,
                                                   const std::string& params = "") {
    auto r = NewRegistryCenter(server_.Url(ns,
                                           "sessionTimeoutMs=2000&connectionTimeoutMs=5000&"
                                           "baseSleepMs=100&maxSleepMs=500" +
                                               (params.empty() ? "" : "&" + params)));
    EXPECT_TRUE(r.ok()) << r.status();
    return Internal(std::move(r).value());
  }
  testing::ZkTestServer server_;
  ThreadPool pool_{2};
  SerialExecutor events_{pool_};
};

TEST_F(ZooKeeperRegistryTest, InitFailsClearlyWhenNoServerAnswers) {
  auto r = NewRegistryCenter("zookeeper://127.0.0.1:1/ns?connectionTimeoutMs=500");
  ASSERT_TRUE(r.ok());
  Status s = (*r)->Init();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s;
}

TEST_F(ZooKeeperRegistryTest, ContainersBelowAKnownAncestorCostOneCreateEachAndNothingAboveIt) {
  auto reg = Client("belowns");
  ASSERT_TRUE(reg->Init().ok());
  ASSERT_TRUE(reg->Persist("/job", "").ok());
  auto* zk = dynamic_cast<reg::ComposedRegistry*>(reg.get());
  ASSERT_NE(zk, nullptr);
  auto requests = [&] {
    uint64_t n = 0;
    for (const auto& [kind, count] : zk->request_counts()) n += count;
    return n;
  };
  // No cache covers /job: CreateContainer would create it again (one request more).
  const uint64_t before = requests();
  ASSERT_TRUE(reg->CreateContainerBelow("/job/leader/election", "/job").ok());
  EXPECT_EQ(requests() - before, 2u);
  Result<std::string> parent = reg->GetDirectly("/job/leader");
  EXPECT_TRUE(parent.ok()) << parent.status();
  // An ancestor that is not there after all: NOT_FOUND, nothing created.
  EXPECT_EQ(reg->CreateContainerBelow("/gone/leader/election", "/gone").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(reg->GetDirectly("/gone").status().code(), StatusCode::kNotFound);
}

TEST_F(ZooKeeperRegistryTest, EphemeralNodesGoWhenTheOwningProcessIsKilled) {
  auto reg = Client("killns");
  ASSERT_TRUE(reg->Init().ok());
  Recorder rec;
  auto sub = reg->Watch("/job/instances", events_, [&](const TreeEvent& e) { rec.Add(e); });
  auto pid = testing::StartHelperProcess({server_.Url("killns", "sessionTimeoutMs=2000"),
                                          "ephemeral", "/job/instances/10.0.0.9@-@42"});
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/job/instances/10.0.0.9@-@42", "holder"));
  kill(*pid, SIGKILL);
  waitpid(*pid, nullptr, 0);
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, "/job/instances/10.0.0.9@-@42"));
  EXPECT_EQ(reg->GetDirectly("/job/instances/10.0.0.9@-@42").status().code(),
            StatusCode::kNotFound);
}

TEST_F(ZooKeeperRegistryTest, LatchPassesOnWhenTheHoldingProcessIsKilled) {
  auto reg = Client("latchns");
  ASSERT_TRUE(reg->Init().ok());
  auto pid = testing::StartHelperProcess(
      {server_.Url("latchns", "sessionTimeoutMs=2000"), "latch", "/job/leader/election/latch"});
  ASSERT_TRUE(pid.ok()) << pid.status();
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    EXPECT_TRUE(reg->ExecuteInLeader("/job/leader/election/latch", [&] { acquired = true; }).ok());
  });
  EXPECT_FALSE(acquired.load());
  kill(*pid, SIGKILL);
  waitpid(*pid, nullptr, 0);
  waiter.join();  // returns once the dead holder's session expires
  EXPECT_TRUE(acquired.load());
}

TEST_F(ZooKeeperRegistryTest, ServerRestartReconnectsAndKeepsData) {
  auto reg = Client("restartns");
  ASSERT_TRUE(reg->Init().ok());
  Recorder rec;
  auto listener = reg->AddConnectionStateListener(events_, [&](ConnectionState s) { rec.Add(s); });
  auto sub = reg->Watch("/r", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(reg->Persist("/r/config", "v1").ok());
  ASSERT_TRUE(server_.Restart().ok());
  ASSERT_TRUE(rec.WaitState(ConnectionState::kSuspended));
  ASSERT_TRUE(rec.WaitState(ConnectionState::kReconnected));
  EXPECT_EQ(*reg->GetDirectly("/r/config"), "v1");
  ASSERT_TRUE(reg->Persist("/r/config", "v2").ok());
  auto other = Client("restartns");
  ASSERT_TRUE(other->Init().ok());
  ASSERT_TRUE(other->Persist("/r/after", "x").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/r/after", "x"));
}

// Close while requests are on their way and the server does not answer: zookeeper_close
// may drop the completions it still owes (about one run in six here: LeakSanitizer then
// reports the library's dropped replies, tests/lsan.supp), and every waiter must still hear
// back (a cache load ends, an asynchronous write reports an error) instead of waiting for
// good.
TEST_F(ZooKeeperRegistryTest, CloseAnswersWhatTheServerStillOwes) {
  auto reg = Client("owedns");
  ASSERT_TRUE(reg->Init().ok());
  ASSERT_TRUE(reg->Persist("/o/a", "1").ok());
  server_.Pause();  // SIGSTOP: requests go out, no reply comes
  std::promise<void> loaded;
  std::thread watcher([&] {
    (void)reg->Watch("/o", events_, [](const TreeEvent&) {});  // loads: waits for replies
    loaded.set_value();
  });
  std::promise<Status> written;
  reg->ExecuteInTransactionAsync({TransactionOp::Create("/o/b", "2")}, events_,
                                 [&](Status st) { written.set_value(st); });
  std::this_thread::sleep_for(300ms);  // the requests are sent (fault timing, not a result)
  reg->Close();
  auto load_ended = loaded.get_future().wait_for(30s);
  auto write_result = written.get_future();
  auto write_ended = write_result.wait_for(30s);
  server_.Resume();
  EXPECT_EQ(load_ended, std::future_status::ready) << "the cache load still waits";
  ASSERT_EQ(write_ended, std::future_status::ready) << "the write was never answered";
  EXPECT_FALSE(write_result.get().ok());
  watcher.join();
}

// Ends `zk`'s session from another handle and waits until it runs on a new, connected one.
// Called from the registry's before-send seam, it forces a session replacement between the
// moment a request is owed and the moment it reaches the client.
void ReplaceSessionNow(reg::ComposedRegistry& zk, int port) {
  Recorder lost;
  ThreadPool pool(1);
  auto listener = zk.AddConnectionStateListener(pool, [&](ConnectionState s) { lost.Add(s); });
  const int64_t id = zk.session_id();
  const std::string password = zk.session_password();
  bool expired = false;
  for (int attempt = 0; attempt < 10 && !expired; ++attempt) {
    Status s = testing::KillSession(port, id, password);
    ASSERT_TRUE(s.ok()) << s;
    expired = lost.WaitState(ConnectionState::kLost, 8s);
  }
  ASSERT_TRUE(expired) << "could not expire session " << id;
  // The new handle is installed by the same task that reported LOST; its CONNECTED event may
  // need a lock the caller holds (a cache load), so wait for the session id, not an event.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (zk.session_id() == 0 || zk.session_id() == id) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no new session";
    std::this_thread::sleep_for(5ms);
  }
}

// Issue 18: a write owed before a session replacement and sent after it was answered by the
// replacement (which retried it and freed it) and then sent from freed memory ("marshalling
// error (transaction)", then heap corruption). It must be applied once and answered once.
TEST_F(ZooKeeperRegistryTest, AWriteSentAcrossASessionReplacementIsAppliedAndAnsweredOnce) {
  // Atomic: the seam runs on whichever thread sends (the worker's resynchronisation too).
  // Before the registry: its testing hook may run (on the worker) until it is destroyed.
  std::atomic<bool> replaced{false};
  auto client = Client("replacewrite");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  ASSERT_TRUE(zk.Persist("/seq", "").ok());
  // The write's own send only: the hook is the lease's and the caches' too, and a lease probe
  // (its thread) or a refresh (the worker) that took the replacement first left the write to
  // go out on the session being killed, which fails it by design (issue 24).
  const std::thread::id sender = std::this_thread::get_id();
  zk.set_before_send_for_testing([&] {
    if (std::this_thread::get_id() == sender && !replaced.exchange(true)) {
      ReplaceSessionNow(zk, server_.port());
    }
  });
  std::atomic<int> answers{0};
  std::promise<Status> written;
  zk.ExecuteInTransactionAsync(
      {TransactionOp::Create("/seq/n-", "", CreateMode::kPersistentSequential)}, events_,
      [&](Status s) {
        if (answers.fetch_add(1) == 0) written.set_value(std::move(s));
      });
  auto result = written.get_future();
  ASSERT_EQ(result.wait_for(30s), std::future_status::ready);
  const Status outcome = result.get();
  EXPECT_TRUE(outcome.ok()) << outcome;
  EXPECT_TRUE(replaced.load()) << "the write was not sent on the calling thread";
  // Whatever was sent has reached the server before this later request of the same session.
  auto children = zk.GetChildrenKeys("/seq");
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_EQ(children->size(), 1u) << "the transaction was applied more than once";
  EXPECT_EQ(answers.load(), 1);
}

// The same for a cache load: its reads must not be sent on the new session under a latch the
// replacement already abandoned (their replies then wrote into freed reads). The load holds
// the refresh lock that the worker's resynchronisation after a reconnect waits for, so the
// session is replaced on this thread rather than by an expiry, which the worker handles.
TEST_F(ZooKeeperRegistryTest, ACacheLoadAcrossASessionReplacementConverges) {
  // Atomic: the seam runs again on the worker when it resynchronises after the replacement
  // (TSan: a race with the check below). Before the registry: its testing hook may run (on
  // the worker) until it is destroyed.
  std::atomic<bool> replaced{false};
  auto client = Client("replaceload");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(zk.Persist("/w/n" + std::to_string(i) + "/leaf", std::to_string(i)).ok());
  }
  zk.set_before_send_for_testing([&] {
    if (!replaced.exchange(true)) zk.ReplaceSessionForTesting();
  });
  Recorder rec;
  auto sub = zk.Watch("/w", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(replaced.load());
  for (int i = 0; i < 20; ++i) {
    const std::string leaf = "/w/n" + std::to_string(i) + "/leaf";
    EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, leaf, std::to_string(i))) << leaf;
    EXPECT_EQ(*zk.Get(leaf), std::to_string(i));
  }
  // The cache follows changes made on the new session.
  auto other = Client("replaceload");
  ASSERT_TRUE(other->Init().ok());
  ASSERT_TRUE(other->Persist("/w/later", "v").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/w/later", "v"));
}

// Chaos kill9_mid_item: a follower saw the sharding flag gone and read its old items from
// the cache, because a refresh of `leader/sharding` (for a `processing` node created just
// before) read the state after the leader's sharding multi-op, while the events of the same
// multi-op on the items' owners came too late for that refresh. A refresh must not show one
// part of a transaction without the rest: whatever changed before its reads were answered
// is read in the same refresh. (The batch window is long here, so that the next refresh
// comes well after the events of the first are delivered.)
TEST_F(ZooKeeperRegistryTest, ARefreshNeverShowsPartOfATransaction) {
  // Before the registry: its testing hook may run (on the worker) until it is destroyed.
  std::atomic<bool> armed{true};
  auto client = Client("refreshtx", "cacheBatchMs=1500");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  auto leader = Client("refreshtx");
  ASSERT_TRUE(leader->Init().ok());
  ASSERT_TRUE(leader->Persist("/j/leader/sharding/necessary", "").ok());
  ASSERT_TRUE(leader->Persist("/j/sharding/0/instance", "old").ok());
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::string> owner_when_flag_gone;  // GUARDED_BY(mu)
  Recorder rec;
  auto sub = zk.Watch("/j", events_, [&](const TreeEvent& e) {
    rec.Add(e);
    if (e.type == TreeEvent::Type::kDeleted && e.key == "/j/leader/sharding/necessary") {
      auto owner = zk.Get("/j/sharding/0/instance");
      std::lock_guard<std::mutex> lock(mu);
      owner_when_flag_gone = owner.ok() ? *owner : owner.status().ToString();
      cv.notify_all();
    }
  });
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_EQ(*zk.Get("/j/sharding/0/instance"), "old");
  // The leader's sharding, just as the refresh for `processing` is about to read: on the
  // registry's worker, which runs the refreshes (the hook also runs for other sends, such as
  // a lease probe, on other threads: those are not the moment meant).
  Status sharded = Status::Ok();
  zk.set_before_send_for_testing([&] {
    if (infra::ThisThreadName() != "ej-registry" || !armed.exchange(false)) return;
    sharded =
        leader->ExecuteInTransaction({TransactionOp::Delete("/j/sharding/0/instance"),
                                      TransactionOp::Create("/j/sharding/0/instance", "new"),
                                      TransactionOp::Delete("/j/leader/sharding/necessary"),
                                      TransactionOp::Delete("/j/leader/sharding/processing")});
  });
  ASSERT_TRUE(leader->Persist("/j/leader/sharding/processing", "").ok());
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 20s, [&] { return owner_when_flag_gone.has_value(); }));
  EXPECT_TRUE(sharded.ok()) << sharded;
  EXPECT_EQ(*owner_when_flag_gone, "new")
      << "the flag's deletion was visible before the owner written in the same transaction";
}

// What ChangeBeforeOwnApply did: `armed` is false once it ran, `status` says how.
struct InterleavedChange {
  std::atomic<bool> armed{true};
  Status status = Status::Ok();
};

// Arms `zk` so that, between the server's answer to its own write of `node` and that
// write's application to its cache, `change` runs on `other` (another client of the same
// namespace), then a marker `other` writes after it shows that `zk`'s cache has read since.
// `rec` records `zk`'s events under /j.
std::shared_ptr<InterleavedChange> ChangeBeforeOwnApply(reg::ComposedRegistry& zk,
                                                        RegistryCenter& other, Recorder& rec,
                                                        const std::string& node,
                                                        std::function<Status()> change) {
  auto result = std::make_shared<InterleavedChange>();
  zk.set_before_local_apply_for_testing(
      [&other, &rec, node, change = std::move(change), result](const std::string& full) {
        if (!full.ends_with(node) || !result->armed.exchange(false)) return;
        Status s = change();
        if (s.ok()) s = other.Persist("/j/marker", "after");
        if (s.ok() && !rec.WaitEvent(TreeEvent::Type::kAdded, "/j/marker", "after")) {
          s = Status(StatusCode::kTimeout, "the cache did not read the marker");
        }
        result->status = s;
      });
  return result;
}

// Chaos zk_restart_past_session: the leader's sharding multi-op deleted the sharding flag; a
// joining instance raised it again at once; the leader's cache refresh (for the multi-op's
// own events) read the flag raised, and only then did the leader apply its own delete to
// the cache, over that newer read. No watch fires again for a flag already there: the
// leader never saw it, never sharded again, and the job stopped on every other instance.
// A write of ours is never applied over a read sent after it.
TEST_F(ZooKeeperRegistryTest, AnOwnWriteNeverHidesAChangeTheCacheReadAfterIt) {
  auto client = Client("ownwrite", "cacheBatchMs=0");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  auto other = Client("ownwrite");
  ASSERT_TRUE(other->Init().ok());
  const std::string flag = "/j/leader/sharding/necessary";
  ASSERT_TRUE(zk.Persist(flag, "").ok());
  Recorder rec;
  auto sub = zk.Watch("/j", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_TRUE(*zk.IsExisted(flag));
  // Between the server's answer to our delete and its application to the cache: the flag
  // is raised again.
  auto raised =
      ChangeBeforeOwnApply(zk, *other, rec, flag, [&] { return other->Persist(flag, ""); });
  ASSERT_TRUE(zk.ExecuteInTransaction({TransactionOp::Delete(flag)}).ok());
  ASSERT_FALSE(raised->armed.load());
  ASSERT_TRUE(raised->status.ok()) << raised->status;
  ASSERT_TRUE(*other->IsExisted(flag));
  EXPECT_TRUE(*zk.IsExisted(flag)) << "the cache hides the flag raised after our delete";
  // And the cache still follows the node.
  ASSERT_TRUE(other->Remove(flag).ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kDeleted, flag));
}

// The same for a create: deleted by another instance right after the server made it, it
// is not brought back by our own apply once the cache has read the parent without it.
TEST_F(ZooKeeperRegistryTest, AnOwnCreateNeverBringsBackANodeDeletedAfterIt) {
  auto client = Client("owncreate", "cacheBatchMs=0");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  auto other = Client("owncreate");
  ASSERT_TRUE(other->Init().ok());
  ASSERT_TRUE(zk.Persist("/j/instances/a", "").ok());
  Recorder rec;
  auto sub = zk.Watch("/j", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok()) << sub.status();
  const std::string node = "/j/instances/b";
  auto deleted = ChangeBeforeOwnApply(zk, *other, rec, node, [&] { return other->Remove(node); });
  ASSERT_TRUE(zk.Persist(node, "mine").ok());
  ASSERT_FALSE(deleted->armed.load());
  ASSERT_TRUE(deleted->status.ok()) << deleted->status;
  EXPECT_FALSE(*zk.IsExisted(node)) << "the cache shows a node deleted after our create";
  EXPECT_EQ(*zk.GetChildrenKeys("/j/instances"), std::vector<std::string>{"a"});
}

// A refresh's reads are on their way when we write (our write waits for no refresh): a
// read sent before our write shows the node as it was, and applying it must not undo the
// write in the cache (read-your-writes), neither a new value nor a new node.
TEST_F(ZooKeeperRegistryTest, AnOwnWriteSentWhileARefreshReadsIsNotUndoneByThatRead) {
  // Before the registry: its testing hook may run (on the worker) until it is destroyed.
  std::atomic<bool> armed{true};
  auto client = Client("midrefresh", "cacheBatchMs=0");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  auto other = Client("midrefresh");
  ASSERT_TRUE(other->Init().ok());
  ASSERT_TRUE(zk.Persist("/j/a", "old").ok());
  Recorder rec;
  auto sub = zk.Watch("/j", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok()) << sub.status();
  Status mine = Status::Ok();
  zk.set_after_send_for_testing([&] {
    if (!armed.exchange(false)) return;
    mine = zk.Update("/j/a", "mine");
    if (mine.ok()) mine = zk.Persist("/j/b", "mine");
  });
  // Fires the value watch of /j/a and the children watch of /j: the refresh reads both.
  ASSERT_TRUE(other
                  ->ExecuteInTransaction(
                      {TransactionOp::SetData("/j/a", "other"), TransactionOp::Create("/j/c", "")})
                  .ok());
  ASSERT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/j/b", "mine"));
  ASSERT_TRUE(mine.ok()) << mine;
  // The marker comes in a later refresh: the one our writes overtook has been applied.
  ASSERT_TRUE(other->Persist("/j/marker", "after").ok());
  ASSERT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/j/marker", "after"));
  EXPECT_EQ(*zk.Get("/j/a"), "mine");
  EXPECT_TRUE(*zk.IsExisted("/j/b"));
  EXPECT_TRUE(*zk.IsExisted("/j/c"));
  EXPECT_FALSE(rec.HasEvent(TreeEvent::Type::kUpdated, "/j/a", "other"))
      << "a read sent before our update was applied over it";
  EXPECT_FALSE(rec.HasEvent(TreeEvent::Type::kDeleted, "/j/b"))
      << "a read sent before our create dropped the node";
}

// Our writes made while a Watch's cache loads are in that cache when Watch returns.
TEST_F(ZooKeeperRegistryTest, OwnWritesMadeWhileAWatchLoadsAreInItsCacheWhenItReturns) {
  // Before the registry: its testing hook may run (on the worker) until it is destroyed.
  std::atomic<bool> armed{true};
  auto client = Client("watchload", "cacheBatchMs=0");
  auto& zk = static_cast<reg::ComposedRegistry&>(*client);
  ASSERT_TRUE(zk.Init().ok());
  ASSERT_TRUE(zk.Persist("/w/a", "1").ok());
  Status mine = Status::Ok();
  zk.set_after_send_for_testing([&] {
    if (!armed.exchange(false)) return;
    mine = zk.Persist("/w/x", "during");
    if (mine.ok()) mine = zk.Update("/w", "root");
  });
  Recorder rec;
  auto sub = zk.Watch("/w", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_FALSE(armed.load());
  ASSERT_TRUE(mine.ok()) << mine;
  auto x = zk.Get("/w/x");
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(*x, "during");
  auto root = zk.Get("/w");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(*root, "root");
  auto children = zk.GetChildrenKeys("/w");
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_EQ(*children, (std::vector<std::string>{"x", "a"}));
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/w/x", "during"));
}

// Watch calls made together load together; each still gets its whole subtree, replayed.
TEST_F(ZooKeeperRegistryTest, ConcurrentWatchesEachGetTheirWholeSubtree) {
  auto client = Client("manywatches");
  ASSERT_TRUE(client->Init().ok());
  constexpr int kJobs = 40;
  for (int j = 0; j < kJobs; ++j) {
    for (const char* node : {"config", "servers/s", "instances/i"}) {
      ASSERT_TRUE(client->Persist(fmt::format("/m/j{}/{}", j, node), std::to_string(j)).ok());
    }
  }
  std::vector<Recorder> recs(kJobs);
  std::vector<std::unique_ptr<Subscription>> subs(kJobs);
  std::vector<Status> statuses(kJobs, Status::Ok());
  {
    std::vector<std::jthread> threads;
    for (int j = 0; j < kJobs; ++j) {
      threads.emplace_back([&, j] {
        auto sub = client->Watch(fmt::format("/m/j{}", j), events_,
                                 [&rec = recs[j]](const TreeEvent& e) { rec.Add(e); });
        if (sub.ok()) {
          subs[j] = std::move(sub).value();
        } else {
          statuses[j] = sub.status();
        }
      });
    }
  }
  for (int j = 0; j < kJobs; ++j) {
    ASSERT_TRUE(statuses[j].ok()) << "job " << j << ": " << statuses[j];
    const std::string root = fmt::format("/m/j{}", j);
    EXPECT_EQ(*client->GetChildrenKeys(root),
              (std::vector<std::string>{"servers", "instances", "config"}));
    for (const char* node : {"/config", "/servers/s", "/instances/i"}) {
      EXPECT_TRUE(recs[j].WaitEvent(TreeEvent::Type::kAdded, root + node, std::to_string(j)))
          << root + node;
    }
  }
}

// The server stopped (SIGSTOP) past the session timeout, then resumed. Whether the session
// survives depends on whether the client's reconnect or the server's expiry check comes
// first; either way the client must suspend, come back, and converge.
TEST_F(ZooKeeperRegistryTest, SurvivesTheServerBeingStoppedPastTheSessionTimeout) {
  auto reg = Client("stopns");
  ASSERT_TRUE(reg->Init().ok());
  Recorder rec;
  auto listener = reg->AddConnectionStateListener(events_, [&](ConnectionState s) { rec.Add(s); });
  auto sub = reg->Watch("/s", events_, [&](const TreeEvent& e) { rec.Add(e); });
  ASSERT_TRUE(reg->Persist("/s/before", "1").ok());
  server_.Pause();
  std::this_thread::sleep_for(4s);  // fault duration (session timeout 2 s), not a wait for a result
  server_.Resume();
  ASSERT_TRUE(rec.WaitState(ConnectionState::kSuspended));
  ASSERT_TRUE(rec.WaitState(ConnectionState::kReconnected));
  auto other = Client("stopns");
  ASSERT_TRUE(other->Init().ok());
  ASSERT_TRUE(other->Persist("/s/after", "2").ok());
  EXPECT_TRUE(rec.WaitEvent(TreeEvent::Type::kAdded, "/s/after", "2"));
  EXPECT_EQ(*reg->Get("/s/before"), "1");
  EXPECT_EQ(*reg->Get("/s/after"), "2");
}

// The session lease (docs/runtime.md): held while the server answers, lapsed within a third
// of the session timeout once it is silent, and back with its first answer.
TEST_F(ZooKeeperRegistryTest, TheLeaseLapsesWhileTheServerIsSilentAndReturnsWithItsAnswer) {
  auto reg = Client("leasens");  // session timeout 2 s: a lease of 666 ms
  ASSERT_TRUE(reg->Init().ok());
  ASSERT_TRUE(reg->Persist("/l", "").ok());  // an answer: the lease runs from its sending
  EXPECT_TRUE(reg->LeaseHeld());
  EXPECT_EQ(reg->lease_bound(), 2000ms / 3);
  const uint64_t epoch = reg->session_epoch();
  server_.Pause();
  std::this_thread::sleep_for(900ms);  // the fault: past the lease, within the session timeout
  EXPECT_FALSE(reg->LeaseHeld());
  EXPECT_FALSE(reg->AwaitLease(std::chrono::steady_clock::now() + 200ms));  // no answer comes
  server_.Resume();
  EXPECT_TRUE(reg->AwaitLease(std::chrono::steady_clock::now() + 10s));
  EXPECT_TRUE(reg->LeaseHeld());
  EXPECT_EQ(reg->session_epoch(), epoch);  // the same session answered
}

TEST_F(ZooKeeperRegistryTest, AWaitForTheLeaseEndsFalseWhenTheSessionIsReplaced) {
  auto reg = Client("leasens2");
  ASSERT_TRUE(reg->Init().ok());
  auto& zk = static_cast<reg::ComposedRegistry&>(*reg);
  server_.Pause();
  std::this_thread::sleep_for(900ms);  // the fault: the lease lapses
  auto waiter = std::async(std::launch::async,
                           [&] { return reg->AwaitLease(std::chrono::steady_clock::now() + 20s); });
  EXPECT_EQ(waiter.wait_for(300ms), std::future_status::timeout);  // waiting for the answer
  zk.ReplaceSessionForTesting();  // what the client does on learning of an expiry
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(waiter.get());
  server_.Resume();
}

TEST_F(ZooKeeperRegistryTest, DigestAclsKeepOtherClientsOut) {
  auto owner = Client("aclns", "digest=admin:secret");
  ASSERT_TRUE(owner->Init().ok());
  ASSERT_TRUE(owner->Persist("/job/config", "cron: x").ok());
  EXPECT_EQ(*owner->GetDirectly("/job/config"), "cron: x");
  auto stranger = Client("aclns");
  ASSERT_TRUE(stranger->Init().ok());
  EXPECT_EQ(stranger->Persist("/job/config", "hacked").code(), StatusCode::kAuthFailed);
  EXPECT_EQ(stranger->Remove("/job/config").code(), StatusCode::kAuthFailed);
  EXPECT_EQ(stranger->GetDirectly("/job/config").status().code(), StatusCode::kAuthFailed);
  auto wrong = Client("aclns", "digest=admin:wrong");
  ASSERT_TRUE(wrong->Init().ok());  // a wrong digest authenticates as a different identity
  EXPECT_EQ(wrong->Persist("/job/config", "hacked").code(), StatusCode::kAuthFailed);
  auto friend_ = Client("aclns", "digest=admin:secret");
  ASSERT_TRUE(friend_->Init().ok());
  EXPECT_TRUE(friend_->Persist("/job/config", "cron: y").ok());
}

// ExecuteInLeader on a thread of its own, holding the latch until Release(). Every wait is
// bounded and the destructor always ends the thread (closing the registry if the latch never
// came), so a failure fails the test instead of hanging it.
class LatchContender {
 public:
  LatchContender(RegistryCenter& reg, const std::string& latch) : reg_(reg) {
    thread_ = std::thread([this, latch] {
      Status s = reg_.ExecuteInLeader(latch, [this] {
        std::unique_lock<std::mutex> l(mu_);
        holding_ = true;
        cv_.notify_all();
        cv_.wait(l, [this] { return release_; });
      });
      std::lock_guard<std::mutex> l(mu_);
      status_ = s;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~LatchContender() {
    if (!Release(10s).ok()) reg_.Close();  // still queued: closing cancels the wait
    thread_.join();
  }
  LatchContender(const LatchContender&) = delete;
  LatchContender& operator=(const LatchContender&) = delete;

  bool holding() {
    std::lock_guard<std::mutex> l(mu_);
    return holding_;
  }
  // Whether the latch came within `timeout` (false at once if ExecuteInLeader failed).
  bool WaitHolding(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, timeout, [this] { return holding_ || done_; });
    EXPECT_TRUE(status_.ok()) << status_;
    return holding_;
  }
  // Lets go of the latch; ExecuteInLeader's outcome, or TIMEOUT if it has not returned.
  Status Release(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    release_ = true;
    cv_.notify_all();
    if (!cv_.wait_for(l, timeout, [this] { return done_; })) {
      return Status(StatusCode::kTimeout, "ExecuteInLeader did not return");
    }
    return status_;
  }

 private:
  RegistryCenter& reg_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false, release_ = false, done_ = false;
  Status status_;
  std::thread thread_;
};

// Curator's LeaderLatch (a Java ElasticJob instance's latch) and ours exclude each other on
// the same path, in both directions.
TEST_F(ZooKeeperRegistryTest, LatchExcludesCuratorLeaderLatchBothWays) {
  const std::string cp =
      "/usr/share/java/curator-recipes.jar:/usr/share/java/curator-framework.jar:"
      "/usr/share/java/curator-client.jar:/usr/share/java/zookeeper.jar:"
      "/usr/share/java/zookeeper-jute.jar:/usr/share/java/guava.jar:"
      "/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar";
  const std::string latch = "/job/leader/election/latch";
  auto reg = Client("mixed");
  ASSERT_TRUE(reg->Init().ok());
  auto java = [&] {
    return testing::SpawnWithPipes({"java", "-cp", cp, ELASTICJOB_CURATOR_HOLDER,
                                    "127.0.0.1:" + std::to_string(server_.port()), "mixed", latch});
  };
  Recorder rec;
  auto sub = reg->Watch(latch, events_, [&](const TreeEvent& e) { rec.Add(e); });
  auto children = [&] {
    auto c = reg->GetChildrenKeys(latch);
    return c.ok() ? c->size() : 0u;
  };

  // 1. Curator holds; we wait behind it and get the latch only after it lets go.
  auto holder = java();
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->WaitForLine("leader", 30000));
  {
    LatchContender waiter(*reg, latch);
    ASSERT_TRUE(Eventually([&] { return children() == 2; }, rec));  // both contenders queued
    EXPECT_FALSE(waiter.holding());
    (*holder)->CloseStdin();
    ASSERT_TRUE((*holder)->WaitForLine("released", 30000));
    ASSERT_TRUE(waiter.WaitHolding(30s));
    EXPECT_TRUE(waiter.Release(30s).ok());
  }

  // 2. We hold; Curator waits behind us and leads only after we let go.
  LatchContender ours(*reg, latch);
  ASSERT_TRUE(ours.WaitHolding(30s));
  auto contender = java();
  ASSERT_TRUE(contender.ok());
  ASSERT_TRUE(Eventually([&] { return children() == 2; }, rec, 30s));
  EXPECT_FALSE((*contender)->HasOutput()) << "Curator became leader while we held the latch";
  EXPECT_TRUE(ours.Release(30s).ok());
  EXPECT_TRUE((*contender)->WaitForLine("leader", 30000));
  (*contender)->CloseStdin();
  EXPECT_TRUE((*contender)->WaitForLine("released", 30000));
}

}  // namespace
}  // namespace elasticjob
