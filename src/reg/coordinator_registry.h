// CoordinatorRegistry: what the runtime needs of a registry beyond the public RegistryCenter
// (docs/registry.md "Public API and internal protocol"): reads of the local cache, watch
// policies and change counts, the session's epoch and lease, and transactions sent without
// waiting. Both library backends (memory://, zookeeper://) implement it; nothing outside
// src/ sees it.
//
// CoordinatorRef is the one way src/ gets it from a RegistryCenter&: the registry itself when
// the library made it (NewRegistryCenter), else a ForeignRegistry over the registry's public
// API, which honours the protocol without a cache, counts or sessions (below).
//
// Thread safety: every implementation is safe for concurrent use, as RegistryCenter is.
#ifndef ELASTICJOB_REG_COORDINATOR_REGISTRY_H_
#define ELASTICJOB_REG_COORDINATOR_REGISTRY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/reg/registry_center.h"

namespace elasticjob::reg {

struct RegistryStats;

// What a subtree cache must be told about one node. A node that is only ever created and
// deleted, never set in place, needs no value watch: its parent's children watch sees it come
// and go. A node that never has children needs no children watch. ZooKeeper's watches fire
// once, and each costs a request to set again, so fewer watches mean fewer requests.
//
// A node whose children come and go often but matter to no reader of the cache (a run's
// running mark) can name the children the cache keeps instead: with `children` false and
// `named_children` set, each named child is watched on its own (an exists watch while it is
// absent) and the others are outside the cache: no watch fires for them, and reads of them
// go to the server. The names must outlive the cache (static storage). The first
// `named_present` of them are usually there (an item's owner): a cache loading the node reads
// each of those at once (one read, which sets its value watch) instead of probing it first
// (an exists, then the read); one found missing is probed then. With `children` false,
// `children_outside` names none: every child is outside the cache (a node whose children no
// reader of the cache needs, as an instance's `runtime/{id}`), and they cost no request.
//
// A node whose value is empty by contract and never set (the layout's parents, such as
// `servers` or `leader/election`, and an item: zk-layout.md) can say so with `empty_value`,
// when it also has its children watched or names them: a cache then never reads its value
// (its own children read, or its parent's, tells whether it is there) and holds it as "".
// One read less for each such node a cache loads.
struct NodeWatches {
  bool value = true;
  bool children = true;
  std::span<const std::string_view> named_children = {};
  bool empty_value = false;
  size_t named_present = 0;
  bool children_outside = false;
};
// Maps a key of the watched subtree to the watches its node needs. The watches are a hint
// (memory:// has none to spare, and reports updates in place whatever they say), but the
// children a policy leaves out by naming the others are out of every backend's view: their
// changes are neither reported nor counted.
using WatchPolicy = std::function<NodeWatches(std::string_view key)>;

// What the local caches hold at one key (CoordinatorRegistry::GetCached).
struct CachedRead {
  // Whether a watch's cache covers the key. False: reads of it go to the server (no watch
  // covers it, the watch's policy leaves it out, or the registry keeps no cache).
  bool covered = false;
  // The cached value; nullopt when the cache covers the key but holds no such node.
  std::optional<std::string> value;
};

// A subscription that may count the changes it watches (CoordinatorRegistry::WatchTree).
class CountedSubscription : public Subscription {
 public:
  // The count of the changes to the subtree as reads see it (the cache they are served from;
  // memory://'s store). It moves when a change becomes visible to reads, before that change's
  // event is delivered. So a reader that notes the count, reads, and later finds the count
  // unchanged knows that every read would still answer the same: what it worked out from
  // them may be kept instead of read again. nullopt: not counted (a connection listener, or
  // a registry that does not count); read every time.
  virtual std::optional<uint64_t> changes() const { return std::nullopt; }
  // The counter changes() reads, for a reader that checks it often (each fire time of a
  // job) without going through the subscription: shared, so it stays readable for whoever
  // holds it after the subscription ends (it stops moving then). Null when not counted.
  virtual std::shared_ptr<const std::atomic<uint64_t>> change_counter() const { return nullptr; }
};

class CoordinatorRegistry : public RegistryCenter {
 public:
  // WatchTree with no policy, the public API's watch.
  Result<std::unique_ptr<Subscription>> Watch(
      std::string_view key, Executor& executor,
      std::function<void(const TreeEvent&)> callback) override;
  // As RegistryCenter::Watch, with `policy` (may be null: every node is watched for
  // everything) saying which nodes need fewer watches; an in-place update of a node it
  // exempts from a value watch may go unseen. The result may count the changes.
  virtual Result<std::unique_ptr<CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      WatchPolicy policy) = 0;

  // As CreateContainer, for a caller that knows `present` exists (an ancestor of `key`, as
  // a job's root right after the transaction that created it): only the containers below
  // it are created, without a request about it or its ancestors, which CreateContainer sends
  // when no cache covers them (a new job's leader node parents: one request less a job).
  // Default: CreateContainer.
  virtual Status CreateContainerBelow(std::string_view key, std::string_view present) {
    (void)present;
    return CreateContainer(key);
  }

  // What the local caches hold at `key`, never asking the server: for diagnostics (the dump
  // port, docs/dump.md, compares it with the server's value). Default: not covered (a
  // registry without caches, as memory:// whose reads are its store).
  virtual CachedRead GetCached(std::string_view key) {
    (void)key;
    return {};
  }

  // As ExecuteInTransaction, without waiting for the server: sends `ops` and returns at once;
  // `done` runs on `executor` with the outcome, after the cache reflects it. Transactions
  // are applied in the order they were sent. A lost connection is retried as
  // ExecuteInTransaction retries it (on `executor`); once the session it was sent in has
  // expired it fails with SESSION_EXPIRED instead (it was planned in that session, whose
  // ephemeral nodes and view of the cluster are gone). `executor` must outlive the call's end.
  virtual void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                         std::function<void(Status)> done) = 0;
  // As ExecuteInTransactionAsync; on success `done` also gets the transaction's place in the
  // registry's one order of writes (ZooKeeper: its zxid; memory://: the store's count of
  // transactions), which every transaction applied after it exceeds, whichever client sends
  // it; 0 where the registry gives no such order (ForeignRegistry). A run's claim of its
  // items is stamped so: the stamp is the run's fencing token (docs/runtime.md). REQUIRES:
  // the last op is a kCreate of a non-sequential node or a kSetData (ZooKeeper reads the
  // stamp from the stat of a write of that node in the same multi-op; INVALID_ARGUMENT
  // otherwise).
  virtual void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                                std::function<void(Result<int64_t>)> done) = 0;

  // Counts the sessions this client has held: it moves when a new session replaces an
  // expired one. A write whose meaning depends on the session it was planned in (a run's
  // running marks) compares it before and after: a move means the session was lost
  // meanwhile. 0 where sessions are not counted.
  virtual uint64_t session_epoch() { return 0; }
  // The session timeout the server granted (0: unknown, or no sessions). Bounds how long a
  // process may go without the server before its session may have expired.
  virtual std::chrono::milliseconds session_timeout() { return std::chrono::milliseconds(0); }

  // The client-side lease (docs/runtime.md "The session lease"): whether this client has
  // heard from the server in its current session within lease_bound() of now, on the
  // monotonic clock, counting from the moment it sent the request the server answered (an
  // answer proves the session alive when the request left, not when the answer arrived, so
  // a reply read after a long pause renews nothing). The server expires a session only after
  // session_timeout() without a word from its client, so a lease held means the session
  // is alive and its ephemeral nodes (the running marks) are still this instance's. A check
  // that finds the lease past half its bound asks the server (one exists request, never
  // waited for), so a busy process rarely finds it lapsed. Cheap: two atomic loads and a
  // clock read. Default: always held (no sessions).
  virtual bool LeaseHeld() { return true; }
  // Waits until LeaseHeld (asking the server at once), or until the session this call began
  // in ends (it expired: its items are others' now), the registry closes, or `deadline`
  // passes: false then. Default: true at once.
  virtual bool AwaitLease(std::chrono::steady_clock::time_point deadline) {
    (void)deadline;
    return true;
  }
  // Until when a start decided while the lease held may still begin, on the steady clock:
  // the newest answer's sending plus two lease bounds (two thirds of the session timeout,
  // within which the session is surely alive); a time already past when none was heard in
  // this session; time_point::max() where there are no sessions (the default).
  virtual std::chrono::steady_clock::time_point lease_expiry() {
    return std::chrono::steady_clock::time_point::max();
  }
  // How long a lease lasts: a third of the session timeout (0: no sessions).
  std::chrono::milliseconds lease_bound() { return session_timeout() / 3; }

  // What this registry counts of its session and requests (docs/metrics.md), shared with
  // the Metrics that shows it; null where nothing is counted (ForeignRegistry).
  virtual const std::shared_ptr<RegistryStats>& stats() const;
};

// The protocol over a RegistryCenter an application implemented itself, through its public
// API only: no cache (GetCached covers nothing; reads go to it), no change counts (WatchTree
// is its Watch, the policy unused), no sessions (session_epoch 0, the lease always held),
// the asynchronous transactions run its ExecuteInTransaction on the executor, and stamped
// ones answer 0: the public API gives no registry-wide order of writes, so runs get fencing
// token 0 ("no token": a resource that needs fencing accepts none of their writes).
//
// A decorator that forwards the protocol too derives from it for the public methods
// (tests/unit/bootstrap/forwarding_registry.h).
//
// Thread safety: as the registry it wraps.
class ForeignRegistry : public CoordinatorRegistry {
 public:
  // REQUIRES: `registry` outlives this object.
  explicit ForeignRegistry(RegistryCenter& registry) : registry_(registry) {}

  Status Init() override { return registry_.Init(); }
  void Close() override { registry_.Close(); }
  Result<std::string> Get(std::string_view key) override { return registry_.Get(key); }
  Result<std::string> GetDirectly(std::string_view key) override {
    return registry_.GetDirectly(key);
  }
  Result<bool> IsExisted(std::string_view key) override { return registry_.IsExisted(key); }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    return registry_.GetChildrenKeys(key);
  }
  Result<int> GetNumChildren(std::string_view key) override {
    return registry_.GetNumChildren(key);
  }
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override {
    return registry_.GetChildrenKeysDirectly(key);
  }
  Status Persist(std::string_view key, std::string_view value) override {
    return registry_.Persist(key, value);
  }
  Status Update(std::string_view key, std::string_view value) override {
    return registry_.Update(key, value);
  }
  Status PersistEphemeral(std::string_view key, std::string_view value) override {
    return registry_.PersistEphemeral(key, value);
  }
  Result<std::string> PersistSequential(std::string_view key, std::string_view value) override {
    return registry_.PersistSequential(key, value);
  }
  Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                 std::string_view value) override {
    return registry_.PersistEphemeralSequential(key, value);
  }
  Status CreateContainer(std::string_view key) override { return registry_.CreateContainer(key); }
  Status Remove(std::string_view key) override { return registry_.Remove(key); }
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    return registry_.ExecuteInTransaction(ops);
  }
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override {
    return registry_.GetRegistryCenterTime(key);
  }
  std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) override {
    return registry_.AddConnectionStateListener(executor, std::move(callback));
  }
  Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) override {
    return registry_.ExecuteInLeader(key, callback);
  }

  // The registry's Watch; `policy` is unused and nothing is counted.
  Result<std::unique_ptr<CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      WatchPolicy policy) override;
  // ExecuteInTransaction, run on `executor`.
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override;
  // ExecuteInTransaction, run on `executor`; the stamp is 0 (no order of writes to take it
  // from). INVALID_ARGUMENT when `ops` cannot be stamped, as the backends answer.
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override;

 private:
  RegistryCenter& registry_;
};

// The internal protocol of a RegistryCenter: the registry itself when it implements it (the
// library's backends, and decorators of them), else a ForeignRegistry over it that this
// object owns. Cheap to make: a ForeignRegistry keeps no state of its own, so any number of
// them may wrap one registry.
class CoordinatorRef {
 public:
  // REQUIRES: `registry` outlives this object.
  explicit CoordinatorRef(RegistryCenter& registry);
  CoordinatorRef(const CoordinatorRef&) = delete;
  CoordinatorRef& operator=(const CoordinatorRef&) = delete;

  CoordinatorRegistry& operator*() const { return *registry_; }
  CoordinatorRegistry* operator->() const { return registry_; }
  // Whether the registry is an application's own, reached through a ForeignRegistry.
  bool foreign() const { return adapter_ != nullptr; }

 private:
  std::unique_ptr<ForeignRegistry> adapter_;  // null: the registry implements the protocol
  CoordinatorRegistry* registry_;
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_COORDINATOR_REGISTRY_H_
