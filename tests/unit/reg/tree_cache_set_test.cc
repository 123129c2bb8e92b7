// TreeCacheSet over a FakeRegistryClient, with a worker and a request numbering of the test's
// (as the registry gives them): a load arms the watches and fills the cache, a fired watch
// refreshes it, a write of ours is read at once and a read sent before it does not undo it,
// a new session resynchronises every cache, and a refresh that reads several levels is
// applied whole (no reader sees a level applied without the next).
#include "reg/tree_cache_set.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/executor.h"
#include "unit/reg/fake_registry_client.h"

namespace elasticjob::reg {
namespace {

constexpr auto kWait = std::chrono::seconds(10);

// The number the last request handed over on this thread got (the registry's CountRequest).
thread_local uint64_t handed = 0;

// The events a subscription received, in order.
class Recorder {
 public:
  void Add(const TreeEvent& e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
  }
  bool Has(TreeEvent::Type type, const std::string& key, std::optional<std::string> value = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& e : events_) {
      if (e.type == type && e.key == key && (!value || e.value == *value)) return true;
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::vector<TreeEvent> events_;
};

class TreeCacheSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.SetHooks({[this](const SessionEvent& e) { OnSession(e); },
                    [this](RequestKind) {
                      handed = ++seq_;
                      requests_.fetch_add(1);
                    }});
    ASSERT_TRUE(fake_.Connect().ok());
  }
  // The client answers what it owed before the caches go, as their contract asks; the
  // worker has run its last refresh before them.
  void TearDown() override {
    caches_.Close();
    fake_.Close();
    worker_.Stop();
    worker_.Join();
  }

  // As the registry: an expired session is replaced on the worker, and a new session's
  // connection resynchronises the caches.
  void OnSession(const SessionEvent& e) {
    if (e.type == SessionEvent::Type::kExpired) {
      worker_.Post([this] { fake_.ReplaceSession(); });
    } else if (e.type == SessionEvent::Type::kConnected && !e.first) {
      worker_.Post([this] { caches_.ResyncAll(); });
    }
  }

  // Waits until the client has delivered every event and the worker has read what they
  // asked, round after round until one finds nothing new.
  void Settle() {
    uint64_t events = fake_.WaitIdleForTesting();
    while (true) {
      std::promise<void> ran;
      worker_.Post([&] { ran.set_value(); });
      ran.get_future().wait();
      const uint64_t now = fake_.WaitIdleForTesting();
      if (now == events && !caches_.refresh_pending()) break;
      events = now;
    }
    Delivered();
  }
  // Waits until the subscriptions have run every event posted to them so far.
  void Delivered() {
    std::promise<void> ran;
    events_.Post([&] { ran.set_value(); });
    ran.get_future().wait();
  }

  // A blocking write of ours (`write` makes one request), applied to the caches with the
  // number it got as it was handed over, as the registry applies its writes.
  void Own(const std::string& full, const std::optional<std::string>& value,
           const std::function<ClientCode()>& write) {
    handed = 0;
    ASSERT_EQ(write(), ClientCode::kOk) << full;
    caches_.ApplyLocalWrite(full, value, handed);
  }

  std::unique_ptr<CountedSubscription> Watch(const std::string& full, Recorder& rec) {
    return caches_.Watch(
        full, events_, [&rec](const TreeEvent& e) { rec.Add(e); }, nullptr);
  }

  std::string Value(const std::string& full) {
    CachedRead r = caches_.Read(full);
    if (!r.covered) return "<not covered>";
    return r.value.value_or("<absent>");
  }

  FakeRegistryClient fake_;
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> requests_{0};
  std::function<void()> after_send_;  // set before the load it is for (on the worker)
  ThreadPool events_{1};
  TreeCacheSet caches_{fake_,
                       "/ns",
                       {[this] { return ++seq_; },
                        [this](const std::function<void()>& send) {
                          handed = 0;
                          send();
                          return handed != 0 ? handed : ++seq_;
                        },
                        [this](std::function<void()> refresh) { worker_.Post(std::move(refresh)); },
                        [this](RequestKind, const std::function<ClientCode()>& attempt) {
                          return fake_.WithRetry(attempt);
                        },
                        nullptr,
                        [this] {
                          if (after_send_) after_send_();
                        }}};
  ThreadPool worker_{1};  // the registry's worker: refreshes, session replacement
};

TEST_F(TreeCacheSetTest, ALoadFillsTheCacheAndArmsTheWatchesThatKeepItFresh) {
  fake_.Write("/ns/j/a", "1");
  fake_.Write("/ns/j/b/c", "2");
  Recorder rec;
  auto sub = Watch("/ns/j", rec);
  const uint64_t before = requests_.load();
  EXPECT_EQ(Value("/ns/j/a"), "1");
  EXPECT_EQ(Value("/ns/j/b/c"), "2");
  EXPECT_EQ(Value("/ns/j/x"), "<absent>");
  EXPECT_EQ(Value("/ns/other"), "<not covered>");
  EXPECT_EQ(caches_.Knows("/ns/j/b"), TreeCacheSet::Known::kPresent);
  EXPECT_EQ(caches_.Knows("/ns/j/x"), TreeCacheSet::Known::kAbsent);
  EXPECT_EQ(caches_.Knows("/ns/other"), TreeCacheSet::Known::kUnknown);
  std::vector<std::string> children;
  EXPECT_EQ(caches_.Children("/ns/j", &children), TreeCacheSet::Known::kPresent);
  EXPECT_EQ(children, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(caches_.node_count(), 4);
  EXPECT_EQ(requests_.load(), before) << "a cached read asked the server";
  Delivered();
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kAdded, "/j/b/c", "2"));

  fake_.Write("/ns/j/b/c", "3");  // another session's: the value watch the load set fires
  Settle();
  EXPECT_EQ(Value("/ns/j/b/c"), "3");
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kUpdated, "/j/b/c", "3"));
  const auto changes = sub->changes();
  ASSERT_TRUE(changes.has_value());
  EXPECT_GT(*changes, 0u);
}

TEST_F(TreeCacheSetTest, AFiredWatchRefreshesTheCacheAndDeliversTheChange) {
  fake_.Write("/ns/j/a", "1");
  Recorder rec;
  auto sub = Watch("/ns/j", rec);
  fake_.Write("/ns/j/n/m", "new");  // a new subtree: two levels to read
  Settle();
  EXPECT_EQ(Value("/ns/j/n/m"), "new");
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kAdded, "/j/n"));
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kAdded, "/j/n/m", "new"));
  fake_.Remove("/ns/j/a");
  Settle();
  EXPECT_EQ(Value("/ns/j/a"), "<absent>");
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kDeleted, "/j/a", "1"));
}

// Our writes wait for no refresh: made while a refresh's reads are on their way, they are read
// at once, and those reads, sent before them, show the nodes as they were and do not undo
// them (neither a new value nor a new node).
TEST_F(TreeCacheSetTest, AnOwnWriteIsReadAtOnceAndAReadSentBeforeItDoesNotUndoIt) {
  fake_.Write("/ns/j/a", "old");
  Recorder rec;
  auto sub = Watch("/ns/j", rec);
  std::promise<void> written;
  std::atomic<bool> armed{true};
  after_send_ = [&] {
    if (!armed.exchange(false)) return;
    Own("/ns/j/a", "mine", [&] { return fake_.SetSync("/ns/j/a", "mine", -1, nullptr, 0); });
    Own("/ns/j/b", "mine",
        [&] { return fake_.CreateSync("/ns/j/b", "mine", CreateMode::kPersistent, nullptr); });
    written.set_value();
  };
  fake_.HoldAnswers();
  // Fires the value watch of /j/a and the children watch of /j: the refresh reads both.
  fake_.Write("/ns/j/a", "other");
  fake_.Write("/ns/j/c", "");
  ASSERT_EQ(written.get_future().wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(Value("/ns/j/a"), "mine") << "our write waited for the refresh";
  EXPECT_EQ(caches_.Knows("/ns/j/b"), TreeCacheSet::Known::kPresent);
  fake_.ReleaseAnswers();  // /j/a "other", /j's children without b
  Settle();
  EXPECT_EQ(Value("/ns/j/a"), "mine");
  EXPECT_EQ(Value("/ns/j/b"), "mine");
  EXPECT_EQ(caches_.Knows("/ns/j/c"), TreeCacheSet::Known::kPresent);
  EXPECT_FALSE(rec.Has(TreeEvent::Type::kUpdated, "/j/a", "other"))
      << "a read sent before our update was applied over it";
  EXPECT_FALSE(rec.Has(TreeEvent::Type::kDeleted, "/j/b"))
      << "a read sent before our create dropped the node";
}

// A new session's watches are new: what changed while there were none (another session's
// write, our ephemeral node gone with the old session) is read again and delivered.
TEST_F(TreeCacheSetTest, ANewSessionResynchronisesTheCaches) {
  fake_.Write("/ns/j/a", "1");
  Recorder rec;
  auto sub = Watch("/ns/j", rec);
  Own("/ns/j/e", "mine",
      [&] { return fake_.CreateSync("/ns/j/e", "mine", CreateMode::kEphemeral, nullptr); });
  Settle();
  ASSERT_EQ(Value("/ns/j/e"), "mine");
  const uint64_t epoch = fake_.session_epoch();
  fake_.Expire();  // the ephemeral node goes, no watch fires; the worker replaces the session
  fake_.Write("/ns/j/a", "2");
  Settle();
  EXPECT_GT(fake_.session_epoch(), epoch);
  EXPECT_EQ(Value("/ns/j/a"), "2");
  EXPECT_EQ(Value("/ns/j/e"), "<absent>");
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kDeleted, "/j/e", "mine"));
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kUpdated, "/j/a", "2"));
  // The resync armed the watches again.
  fake_.Write("/ns/j/a", "3");
  Settle();
  EXPECT_EQ(Value("/ns/j/a"), "3");
}

// The leader's sharding in one transaction: a new item node with its owner, and the sharding
// flag deleted. The refresh reads the flag and the item's parent, then the item, then its
// owner, one level per round trip; applied level by level, a reader between two levels saw the
// flag gone and the item without its owner (a follower then asked for one more sharding).
// Staged, the levels are applied together: before, the flag and no item; after, the item with
// its owner and no flag.
TEST_F(TreeCacheSetTest, AReaderNeverSeesARefreshThatReadsSeveralLevelsHalfApplied) {
  fake_.Write("/ns/j/leader/necessary", "");
  fake_.Write("/ns/j/sharding", "");
  Recorder rec;
  auto sub = Watch("/ns/j", rec);
  struct Seen {
    bool flag;
    std::string item;
    std::string owner;
  };
  auto whole = [](const Seen& s) {
    const bool before = s.flag && s.item == "<absent>" && s.owner == "<absent>";
    const bool after = !s.flag && s.item.empty() && s.owner == "new";
    return before || after;
  };
  auto look = [&] {
    return Seen{caches_.Knows("/ns/j/leader/necessary") == TreeCacheSet::Known::kPresent,
                Value("/ns/j/sharding/0"), Value("/ns/j/sharding/0/instance")};
  };
  std::mutex mu;
  std::vector<Seen> seen;     // what a reader saw as each level's reads were sent
  std::vector<Seen> partial;  // what a reader running throughout saw that was not whole
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      // One view: the change count did not move while it was read (it moves under the
      // lock the refresh applies under).
      const auto changes = sub->changes();
      Seen s = look();
      if (sub->changes() != changes || whole(s)) continue;
      std::lock_guard<std::mutex> lock(mu);
      partial.push_back(s);
    }
  });
  after_send_ = [&] {
    Seen s = look();
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(s);
  };
  auto op = [](ClientOp::Type type, std::string path, std::string value = "") {
    ClientOp o;
    o.type = type;
    o.path = std::move(path);
    o.value = std::move(value);
    return o;
  };
  std::vector<ClientOpResult> results;
  ASSERT_EQ(fake_.MultiSync({op(ClientOp::Type::kCreate, "/ns/j/sharding/0"),
                             op(ClientOp::Type::kCreate, "/ns/j/sharding/0/instance", "new"),
                             op(ClientOp::Type::kDelete, "/ns/j/leader/necessary")},
                            &results),
            ClientCode::kOk);
  Settle();
  stop = true;
  reader.join();
  EXPECT_FALSE(caches_.Knows("/ns/j/leader/necessary") == TreeCacheSet::Known::kPresent);
  EXPECT_EQ(Value("/ns/j/sharding/0/instance"), "new");
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_GE(seen.size(), 3u) << "the refresh did not read three levels";
  for (const Seen& s : seen) {
    EXPECT_TRUE(whole(s)) << "between two levels: flag " << s.flag << ", item " << s.item
                          << ", owner " << s.owner;
  }
  EXPECT_TRUE(partial.empty()) << partial.size() << " reads saw part of the refresh, first: flag "
                               << partial.front().flag << ", item " << partial.front().item
                               << ", owner " << partial.front().owner;
}

// Caches at several depths: a write is applied to each cache above it, and a read is served by
// the deepest; one gone, the others still serve (only the depths some root has are looked up).
TEST_F(TreeCacheSetTest, CachesAtSeveralDepthsEachSeeTheWritesBelowThem) {
  fake_.Write("/ns/j/sub/x", "1");
  fake_.Write("/ns/k", "");
  Recorder outer_rec, inner_rec, other_rec;
  auto outer = Watch("/ns/j", outer_rec);
  auto inner = Watch("/ns/j/sub", inner_rec);
  auto other = Watch("/ns/k", other_rec);
  Own("/ns/j/sub/y", "2",
      [&] { return fake_.CreateSync("/ns/j/sub/y", "2", CreateMode::kPersistent, nullptr); });
  EXPECT_EQ(Value("/ns/j/sub/y"), "2");
  Delivered();
  EXPECT_TRUE(outer_rec.Has(TreeEvent::Type::kAdded, "/j/sub/y", "2"));
  EXPECT_TRUE(inner_rec.Has(TreeEvent::Type::kAdded, "/j/sub/y", "2"));
  EXPECT_FALSE(other_rec.Has(TreeEvent::Type::kAdded, "/j/sub/y", "2"));
  inner.reset();
  Own("/ns/j/sub/z", "3",
      [&] { return fake_.CreateSync("/ns/j/sub/z", "3", CreateMode::kPersistent, nullptr); });
  EXPECT_EQ(Value("/ns/j/sub/z"), "3");
  EXPECT_EQ(Value("/ns/k"), "");
  outer.reset();
  EXPECT_EQ(Value("/ns/j/sub/z"), "<not covered>");
  EXPECT_EQ(Value("/ns/k"), "");
}

// A distribute-once listener's phase: another session makes the phase's root, we register an
// item under it before our cache has read the root, and another session clears the phase. The
// server took our write, so the root was there: it comes in with our item (its value is "" by
// contract), and its removal is an event here. Left out, it went unseen, and the listener
// waiting for it waited for its timeout.
TEST_F(TreeCacheSetTest, AnOwnWritesParentComesInWithItSoItsRemovalIsAnEvent) {
  fake_.Write("/ns/j/g", "");
  Recorder rec;
  WatchPolicy policy = [](std::string_view key) {
    const NodeWatches children_only{false, true, {}, /*empty_value=*/true};
    if (key == "/j/g" || key == "/j/g/p") return children_only;
    if (key.starts_with("/j/g/p/")) return NodeWatches{false, false};
    return NodeWatches{};
  };
  auto sub = caches_.Watch(
      "/ns/j", events_, [&rec](const TreeEvent& e) { rec.Add(e); }, policy);
  // The worker waits: the refresh that /j/g's children event asks for is not run yet.
  std::promise<void> release;
  worker_.Post([held = release.get_future().share()] { held.wait(); });
  fake_.Write("/ns/j/g/p", "");
  Own("/ns/j/g/p/1", "",
      [&] { return fake_.CreateSync("/ns/j/g/p/1", "", CreateMode::kPersistent, nullptr); });
  EXPECT_EQ(caches_.Knows("/ns/j/g/p"), TreeCacheSet::Known::kPresent);
  EXPECT_EQ(caches_.Knows("/ns/j/g/p/1"), TreeCacheSet::Known::kPresent);
  fake_.Remove("/ns/j/g/p/1");
  fake_.Remove("/ns/j/g/p");
  release.set_value();
  Settle();
  EXPECT_EQ(caches_.Knows("/ns/j/g/p"), TreeCacheSet::Known::kAbsent);
  EXPECT_TRUE(rec.Has(TreeEvent::Type::kDeleted, "/j/g/p"));
  // A parent whose value is not "" by contract stays out: its value is not known.
  release = {};
  worker_.Post([held = release.get_future().share()] { held.wait(); });
  fake_.Write("/ns/j/n", "other");
  Own("/ns/j/n/1", "",
      [&] { return fake_.CreateSync("/ns/j/n/1", "", CreateMode::kPersistent, nullptr); });
  EXPECT_EQ(Value("/ns/j/n"), "<absent>");
  release.set_value();
  Settle();
  EXPECT_EQ(Value("/ns/j/n"), "other");
  EXPECT_EQ(caches_.Knows("/ns/j/n/1"), TreeCacheSet::Known::kPresent);
}

}  // namespace
}  // namespace elasticjob::reg
