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
// Threading (docs/registry.md): every method is safe to call from any thread, concurrently.
// Calls block the calling thread and must not be made from the client library's threads.
// Watch events and connection-state changes are delivered on the Executor the caller passes,
// in order per subscription. Callbacks may call back into the registry.
//
// An application may implement RegistryCenter itself (as ElasticJob users may implement
// CoordinatorRegistryCenter) and hand it to the bootstraps and APIs: jobs then run on its
// public methods alone, with no local cache, no session lease and fencing token 0 (no
// registry-wide order of writes to take one from). docs/registry.md says what that costs.
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

#include <cstdint>
#include <functional>
#include <memory>
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

enum class ConnectionState {
  kConnected,    // first session established
  kSuspended,    // connection lost; the session may still be alive
  kReconnected,  // connected again (same session, or a new one after kLost)
  kLost,         // the session expired: its ephemeral nodes are gone; a new one follows
};
const char* ConnectionStateName(ConnectionState state);

// A watch or listener's handle: destroying it stops its deliveries (and waits for one in
// progress, unless called from inside it).
class Subscription {
 public:
  virtual ~Subscription() = default;
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
  // Whether `key` exists (cache first, as Get).
  virtual Result<bool> IsExisted(std::string_view key) = 0;
  // The names of `key`'s children sorted descending, as ElasticJob sorts them (cache first).
  // NOT_FOUND when `key` does not exist.
  virtual Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) = 0;
  // How many children `key` has (cache first). NOT_FOUND when `key` does not exist.
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
  // As PersistSequential, an ephemeral node of this session.
  virtual Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                         std::string_view value) = 0;
  // Creates a container node at `key` (and container parents) unless it exists.
  virtual Status CreateContainer(std::string_view key) = 0;
  // Deletes `key` and everything below it. OK if it does not exist.
  virtual Status Remove(std::string_view key) = 0;
  // Applies `ops` atomically: all succeed or none does; the error names the failing step.
  virtual Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) = 0;
  // The registry's clock: writes `key` and returns its modification time (epoch ms).
  virtual Result<int64_t> GetRegistryCenterTime(std::string_view key) = 0;

  // Caches the subtree at `key` and delivers ADDED / UPDATED / DELETED events for it (the
  // initial contents arrive as ADDED) on `executor`, in order, until the result is
  // destroyed. `executor` must outlive the result.
  virtual Result<std::unique_ptr<Subscription>> Watch(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback) = 0;

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
