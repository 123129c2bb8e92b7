// The in-memory registry center (`memory://namespace`): ZooKeeper's semantics inside one
// process, for the single-process default and for fast unit tests of coordination code.
//
// A MemoryStore plays the server; each MemoryRegistryCenter is one client session on it.
// Sessions own ephemeral nodes, which go when the session is closed or expired
// (ExpireSession simulates what a partition longer than the session timeout does).
// Sequential nodes take the parent's 10-digit counter; a container node goes with its last
// child. Watch events and connection states are posted to the caller's executors in the
// order the changes happened.
//
// Thread safety: both classes are safe for concurrent use.
#ifndef ELASTICJOB_REG_MEMORY_MEMORY_REGISTRY_CENTER_H_
#define ELASTICJOB_REG_MEMORY_MEMORY_REGISTRY_CENTER_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "reg/registry_base.h"

namespace elasticjob::reg {

class MemoryStore {
 public:
  // The store for `name`, shared by every memory:// registry of this process that names it.
  static std::shared_ptr<MemoryStore> Shared(const std::string& name);

  struct Node {
    std::string value;
    CreateMode mode = CreateMode::kPersistent;
    int64_t owner = 0;  // session of an ephemeral node
    int64_t mtime_ms = 0;
    int next_sequence = 0;
    std::set<std::string> children;
  };
  struct Change {
    TreeEvent::Type type;
    std::string path;
    std::string value;
  };
  struct TreeListener {
    int64_t session;
    std::string root;
    Executor* executor;
    std::function<void(const TreeEvent&)> callback;
    std::shared_ptr<SubscriptionState> state;
    // What the watcher keeps (as a ZooKeeper cache would): children its parent's policy
    // leaves out by naming the others are not reported, nor counted as changes.
    WatchPolicy policy;
    size_t prefix = 0;  // the namespace's length in `root`
  };

  Clock& clock;
  Mutex mu;
  std::map<std::string, Node> nodes ELASTICJOB_GUARDED_BY(mu);  // full paths, "/" always present
  int64_t next_session ELASTICJOB_GUARDED_BY(mu) = 1;
  // Transactions applied so far: the stamp of a stamped one (a zxid's stand-in).
  int64_t transactions ELASTICJOB_GUARDED_BY(mu) = 0;
  std::multimap<std::string, std::pair<int64_t, std::function<void()>>> exists_watches
      ELASTICJOB_GUARDED_BY(mu);
  // Keyed by the watched root: a change looks up the listeners of its own path and its
  // ancestors (O(depth log n)), not every listener of the process.
  std::multimap<std::string, TreeListener> tree_listeners ELASTICJOB_GUARDED_BY(mu);

  // `clock` (borrowed; must outlive the store) stamps modification times, which is what
  // GetRegistryCenterTime reports: a SimulatedClock lets tests skew the "server" clock.
  explicit MemoryStore(Clock& clock = Clock::System());
  int64_t NowMs() const;
  // REQUIRES: mu held. Posts tree events and collects fired one-shot watches into `fired`.
  void Publish(const std::vector<Change>& changes, std::vector<std::function<void()>>* fired)
      ELASTICJOB_REQUIRES(mu);
  // REQUIRES: mu held. Deletes `session`'s ephemeral nodes.
  void DropSession(int64_t session, std::vector<Change>* changes) ELASTICJOB_REQUIRES(mu);
  // REQUIRES: mu held. Deletes `path` (no children) and cascades empty containers.
  void DeleteNode(const std::string& path, std::vector<Change>* changes) ELASTICJOB_REQUIRES(mu);
};

class MemoryRegistryCenter final : public RegistryBase {
 public:
  MemoryRegistryCenter(std::shared_ptr<MemoryStore> store, std::string name_space);
  ~MemoryRegistryCenter() override;

  Status Init() override;
  void Close() override;
  Result<std::string> Get(std::string_view key) override;
  Result<std::string> GetDirectly(std::string_view key) override;
  Result<bool> IsExisted(std::string_view key) override;
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override;
  Result<int> GetNumChildren(std::string_view key) override;
  Status Persist(std::string_view key, std::string_view value) override;
  Status Update(std::string_view key, std::string_view value) override;
  Status PersistEphemeral(std::string_view key, std::string_view value) override;
  Result<std::string> PersistSequential(std::string_view key, std::string_view value) override;
  Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                 std::string_view value) override;
  Status CreateContainer(std::string_view key) override;
  Status Remove(std::string_view key) override;
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override;
  // Applied at once (there is no network); `done` is posted to `executor`.
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override;
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override;
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override;
  Result<std::unique_ptr<CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      WatchPolicy policy) override;

  // Ends the session as an expiry would: ephemeral nodes go, listeners see LOST, then a new
  // session starts and they see RECONNECTED.
  void ExpireSession();
  int64_t session_id();
  // The session lease (RegistryCenter::LeaseHeld): held unless a test lets it lapse here
  // (SetLeaseHeldForTesting(false)), which stands for a process that has not heard from
  // the server lately. While lapsed, AwaitLease waits until it is held again (true), the
  // session expires (ExpireSession) or the registry closes (false), or the deadline passes.
  bool LeaseHeld() override;
  std::chrono::steady_clock::time_point lease_expiry() override {
    return LeaseHeld() ? std::chrono::steady_clock::time_point::max()
                       : std::chrono::steady_clock::time_point::min();
  }
  bool AwaitLease(std::chrono::steady_clock::time_point deadline) override;
  void SetLeaseHeldForTesting(bool held);
  // Waits (bounded) until at least `n` AwaitLease calls wait: an item start has reached
  // the lapsed lease. Returns whether they did.
  bool WaitLeaseWaitersForTesting(int n, std::chrono::milliseconds timeout);
  // Lock-free: the fire path asks for it on every claim.
  uint64_t session_epoch() override {
    return static_cast<uint64_t>(session_.load(std::memory_order_acquire));
  }

 protected:
  Result<std::vector<std::string>> GetChildrenDirectly(std::string_view key) override;
  Result<bool> ExistsWatchOnce(std::string_view key, std::function<void()> fired) override;
  Result<std::string> CreateLatchNode(const std::string& latch, const std::string& prefix) override;

 private:
  std::string Full(std::string_view key) const;
  std::string Relative(const std::string& full) const;
  // REQUIRES: store_->mu held.
  Result<std::string> CreateLocked(const std::string& full, std::string_view value, CreateMode mode,
                                   bool create_parents, std::vector<MemoryStore::Change>* changes)
      ELASTICJOB_REQUIRES(store_->mu);
  // Publishes `changes`, releases `lock` (on store_->mu), then runs the fired one-shot watches.
  void Finish(MutexLock& lock, const std::vector<MemoryStore::Change>& changes)
      ELASTICJOB_REQUIRES(store_->mu);
  Result<std::string> CreateSequential(std::string_view key, std::string_view value,
                                       CreateMode mode);
  Status CheckOpen() const ELASTICJOB_REQUIRES(store_->mu);
  // Applies `ops` all or nothing; returns the transaction's stamp (MemoryStore::transactions).
  Result<int64_t> Execute(const std::vector<TransactionOp>& ops);

  const std::shared_ptr<MemoryStore> store_;
  const std::string prefix_;         // "/namespace"
  std::atomic<int64_t> session_{0};  // written with store_->mu held; read anywhere
  bool open_ ELASTICJOB_GUARDED_BY(store_->mu) = false;
  // The lease seam (SetLeaseHeldForTesting): taken after store_->mu, never before it.
  Mutex lease_mu_;
  CondVar lease_cv_{&lease_mu_};
  std::atomic<bool> lease_lapsed_{false};  // atomic: LeaseHeld reads it without a lock
  int lease_waiters_ ELASTICJOB_GUARDED_BY(lease_mu_) = 0;
  void WakeLeaseWaiters();
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_MEMORY_MEMORY_REGISTRY_CENTER_H_
