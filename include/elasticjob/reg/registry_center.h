// RegistryCenter: the coordination store every elasticjob instance shares, modelled on
// ElasticJob's CoordinatorRegistryCenter. Two implementations pass one conformance suite:
//
// clang-format off
//   zookeeper://host:port[,host:port...]/namespace?digest=user:pass&sessionTimeoutMs=60000
//       &connectionTimeoutMs=15000&baseSleepMs=1000&maxSleepMs=3000&maxRetries=3
//       &cacheBatchMs=10
//   memory://namespace      (one process; instances with the same namespace share a store)
// clang-format on
//
// Keys are absolute paths below the namespace ("/orderJob/config"). Values are bytes
// (UTF-8 text in practice). Every call returns a Status the caller must decide on:
// NOT_FOUND (no node), ALREADY_EXISTS (node exists), BAD_VERSION, CONNECTION_LOSS,
// SESSION_EXPIRED, AUTH_FAILED, TIMEOUT, INVALID_ARGUMENT (a malformed key).
//
// Threading (docs/registry.md): calls block the calling thread (except
// ExecuteInTransactionAsync) and must not be made from the client library's threads. Watch events
// and connection-state changes are delivered on the Executor the caller passes, in order per
// subscription. Callbacks may call back into the registry.
//
// clang-format off
//   auto reg = elasticjob::NewRegistryCenter("zookeeper://127.0.0.1:2181/demo");
//   if (!reg.ok() || !(*reg)->Init().ok()) { ... }
//   elasticjob::ThreadPool pool(2);
//   elasticjob::SerialExecutor events(pool);
//   auto sub = (*reg)->Watch("/orderJob", events, [](const elasticjob::TreeEvent& e) { ... });
//   Status s = (*reg)->Persist("/orderJob/config", yaml);
// clang-format on
#ifndef ELASTICJOB_REG_REGISTRY_CENTER_H_
#define ELASTICJOB_REG_REGISTRY_CENTER_H_

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

#include "elasticjob/executor.h"
#include "elasticjob/status.h"

namespace elasticjob {

enum class CreateMode {
  kPersistent,
  kEphemeral,
  kPersistentSequential,
  kEphemeralSequential,
  kContainer,  // deleted by the server once its last child goes
};

// One step of an all-or-nothing transaction.
struct TransactionOp {
  enum class Type { kCheckExists, kCreate, kSetData, kDelete };
  Type type;
  std::string key;
  std::string value;
  CreateMode mode = CreateMode::kPersistent;

  static TransactionOp CheckExists(std::string key) {
    return {Type::kCheckExists, std::move(key), {}};
  }
  static TransactionOp Create(std::string key, std::string value,
                              CreateMode mode = CreateMode::kPersistent) {
    return {Type::kCreate, std::move(key), std::move(value), mode};
  }
  static TransactionOp SetData(std::string key, std::string value) {
    return {Type::kSetData, std::move(key), std::move(value)};
  }
  static TransactionOp Delete(std::string key) { return {Type::kDelete, std::move(key), {}}; }
};

// A change below a watched key. `value` is the node's value after the change (before it,
// for DELETED).
struct TreeEvent {
  enum class Type { kAdded, kUpdated, kDeleted };
  Type type;
  std::string key;
  std::string value;
};

// What a subtree cache must be told about one node. A node that is only ever created and
// deleted, never set in place, needs no value watch: its parent's children watch sees it come
// and go. A node that never has children needs no children watch. ZooKeeper's watches fire
// once, and each costs a request to set again, so fewer watches mean fewer requests.
//
// A node whose children come and go often but matter to no reader of the cache (a run's
// running mark) can name the children the cache keeps instead: with `children` false and
// `named_children` set, each named child is watched on its own (an exists watch while it is
// absent) and the others are outside the cache: no watch fires for them, and reads of them
// go to the server. The names must outlive the cache (static storage).
struct NodeWatches {
  bool value = true;
  bool children = true;
  std::span<const std::string_view> named_children = {};
};
// Maps a key of the watched subtree to the watches its node needs. The watches are a hint
// (memory:// has none to spare, and reports updates in place whatever they say), but the
// children a policy leaves out by naming the others are out of every backend's view: their
// changes are neither reported nor counted.
using WatchPolicy = std::function<NodeWatches(std::string_view key)>;

enum class ConnectionState {
  kConnected,    // first session established
  kSuspended,    // connection lost; the session may still be alive
  kReconnected,  // connected again (same session, or a new one after kLost)
  kLost,         // the session expired: its ephemeral nodes are gone; a new one follows
};
const char* ConnectionStateName(ConnectionState state);

// What the local caches hold at one key (RegistryCenter::GetCached).
struct CachedRead {
  // Whether a Watch's cache covers the key. False: reads of it go to the server (no Watch
  // covers it, the Watch's policy leaves it out, or the backend keeps no cache).
  bool covered = false;
  // The cached value; nullopt when the cache covers the key but holds no such node.
  std::optional<std::string> value;
};

// Destroying a subscription stops its deliveries (and waits for one in progress).
class Subscription {
 public:
  virtual ~Subscription() = default;
  // A Watch's count of the changes to the subtree as reads see it (the cache they are served
  // from; memory://'s store). It moves when a change becomes visible to reads, before that
  // change's event is delivered. So a reader that notes the count, reads, and later finds
  // the count unchanged knows that every read would still answer the same: what it worked
  // out from them may be kept instead of read again. nullopt: not counted (a connection
  // listener, or a backend that does not count); read every time.
  virtual std::optional<uint64_t> changes() const { return std::nullopt; }
  // The counter changes() reads, for a reader that checks it often (each fire time of a
  // job) without going through the subscription: shared, so it stays readable for whoever
  // holds it after the subscription ends (it stops moving then). Null when not counted.
  virtual std::shared_ptr<const std::atomic<uint64_t>> change_counter() const { return nullptr; }
};

class RegistryCenter {
 public:
  virtual ~RegistryCenter() = default;

  // Connects. ZooKeeper: waits up to connectionTimeoutMs for a session, then fails with
  // UNAVAILABLE naming the servers. Creates the namespace root (a container) if absent.
  virtual Status Init() = 0;
  // Ends the session (its ephemeral nodes go) and stops all deliveries. Idempotent.
  virtual void Close() = 0;

  // The value at `key`: from the local cache when a Watch covers it, else from the server.
  virtual Result<std::string> Get(std::string_view key) = 0;
  // The value at `key`, from the server.
  virtual Result<std::string> GetDirectly(std::string_view key) = 0;
  // What the local caches hold at `key`, never asking the server: for diagnostics (the dump
  // port, docs/dump.md, compares it with the server's value). Default: not covered (a
  // backend without caches, as memory:// whose reads are its store).
  virtual CachedRead GetCached(std::string_view key) {
    (void)key;
    return {};
  }
  // Whether `key` exists (cache first, as Get).
  virtual Result<bool> IsExisted(std::string_view key) = 0;
  // The names of `key`'s children sorted descending, as ElasticJob sorts them (cache first).
  // NOT_FOUND when `key` does not exist.
  virtual Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) = 0;
  virtual Result<int> GetNumChildren(std::string_view key) = 0;
  // As GetChildrenKeys, from the server (sees every write committed before the call).
  virtual Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) = 0;

  // Creates `key` (with persistent parents) or sets its value if it exists.
  virtual Status Persist(std::string_view key, std::string_view value) = 0;
  // Sets the value of an existing `key`; NOT_FOUND if it does not exist.
  virtual Status Update(std::string_view key, std::string_view value) = 0;
  // Makes `key` an ephemeral node of this session holding `value`. A node this session owns
  // already takes the value in place (watchers see an update, never a moment without it:
  // others would take this instance for gone); any other node there (another session's, a
  // persistent one) is deleted first, then created.
  virtual Status PersistEphemeral(std::string_view key, std::string_view value) = 0;
  // Creates `key` + a 10-digit sequence; returns the created key.
  virtual Result<std::string> PersistSequential(std::string_view key, std::string_view value) = 0;
  virtual Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                         std::string_view value) = 0;
  // Creates a container node at `key` (and container parents) unless it exists.
  virtual Status CreateContainer(std::string_view key) = 0;
  // Deletes `key` and everything below it. OK if it does not exist.
  virtual Status Remove(std::string_view key) = 0;
  // Applies `ops` atomically: all succeed or none does; the error names the failing step.
  virtual Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) = 0;
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
  // it. A run's claim of its items is stamped so: the stamp is the run's fencing token
  // (docs/runtime.md). REQUIRES: the last op is a kCreate of a non-sequential node or a
  // kSetData (ZooKeeper reads the stamp from the stat of a write of that node in the same
  // multi-op; INVALID_ARGUMENT otherwise).
  virtual void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                                std::function<void(Result<int64_t>)> done) = 0;

  // The registry's clock: writes `key` and returns its modification time (epoch ms).
  virtual Result<int64_t> GetRegistryCenterTime(std::string_view key) = 0;

  // Caches the subtree at `key` and delivers ADDED / UPDATED / DELETED events for it (the
  // initial contents arrive as ADDED) on `executor`. `executor` must outlive the result.
  // `policy` (may be null: every node is watched for everything) says which nodes need
  // fewer watches; an in-place update of a node it exempts from a value watch may go unseen.
  virtual Result<std::unique_ptr<Subscription>> Watch(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      WatchPolicy policy) = 0;
  Result<std::unique_ptr<Subscription>> Watch(std::string_view key, Executor& executor,
                                              std::function<void(const TreeEvent&)> callback) {
    return Watch(key, executor, std::move(callback), nullptr);
  }

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
  // How long a lease lasts: a third of the session timeout (0: no sessions).
  std::chrono::milliseconds lease_bound() { return session_timeout() / 3; }

  // Delivers connection-state changes on `executor` until the result is destroyed.
  virtual std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) = 0;

  // Waits until this session holds the leader latch at `key` (Curator's LeaderLatch recipe),
  // runs `callback` on the calling thread, then releases the latch. Returns CANCELLED if the
  // registry is closed while waiting.
  virtual Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) = 0;
};

// Creates an unconnected registry center from its URL (see the top of this file). Fails
// with INVALID_ARGUMENT naming the part of the URL that is wrong.
Result<std::unique_ptr<RegistryCenter>> NewRegistryCenter(std::string_view url);

}  // namespace elasticjob

#endif  // ELASTICJOB_REG_REGISTRY_CENTER_H_
