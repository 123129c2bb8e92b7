// ComposedRegistry: the library's one registry class (zookeeper:// and memory:// alike), over
// the client seam (reg/client/registry_client.h): by default a ZooKeeperClient (the official
// C client, libzookeeper-mt) made from the URL, or the client it is given (memory:// gives a
// MemoryClient). It holds the registry's side (keys, errors, reads, writes) and composes the
// backend-independent components over the seam: the subtree caches (TreeCacheSet: Watch,
// cached reads, read-your-writes), the write pipeline (WritePipeline: batched asynchronous
// transactions), the session lease (SessionLease) and the leader latch (LeaderLatch). The client
// holds the session, connect and retry, and the C client's ownership rules.
//
// Threads: the client's event thread runs watch and completion callbacks, which only post
// work to this class's own worker thread, which runs the caches' refreshes, replaces
// expired sessions and fans out connection states. User callbacks run on the executors
// users pass. Blocking calls run on the caller's thread (docs/registry.md).
//
// Caches: Watch(key) keeps the subtree at `key` in memory (TreeCacheSet, whose header says
// how). Get, IsExisted and GetChildrenKeys on a cached key cost no round trip; this
// instance's own writes are applied to the caches at once (read-your-writes). Requests are
// numbered here as the client hands them over (CountRequest), one order for the caches'
// reads, the blocking writes and the write pipeline.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_REG_COMPOSED_REGISTRY_H_
#define ELASTICJOB_REG_COMPOSED_REGISTRY_H_

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"
#include "reg/leader_latch.h"
#include "reg/registry_base.h"
#include "reg/registry_url.h"
#include "reg/session_lease.h"
#include "reg/tree_cache_set.h"
#include "reg/write_pipeline.h"

namespace elasticjob::reg {

class ComposedRegistry final : public RegistryBase {
 public:
  // Over a ZooKeeperClient made from `url`.
  explicit ComposedRegistry(RegistryUrl url);
  // Over `client` (not yet connected; Init connects it). `url` gives the namespace and the
  // cache batching window (cacheBatchMs); the client its own settings.
  ComposedRegistry(RegistryUrl url, std::unique_ptr<RegistryClient> client);
  ~ComposedRegistry() override;

  Status Init() override;
  void Close() override;
  Result<std::string> Get(std::string_view key) override;
  Result<std::string> GetDirectly(std::string_view key) override;
  CachedRead GetCached(std::string_view key) override;
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
  Status CreateContainerBelow(std::string_view key, std::string_view present) override;
  Status Remove(std::string_view key) override;
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override;
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override;
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override;
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override;
  Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) override;
  Result<std::unique_ptr<CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      WatchPolicy policy) override;

  uint64_t session_epoch() override { return client_->session_epoch(); }
  std::chrono::milliseconds session_timeout() override;
  bool LeaseHeld() override;
  std::chrono::steady_clock::time_point lease_expiry() override;
  bool AwaitLease(std::chrono::steady_clock::time_point deadline) override;

  // The current session id (0 when not connected). For tests and diagnostics.
  int64_t session_id();
  // The current session's 16-byte password (empty when not connected). Lets tests end the
  // session from another handle, the deterministic way to cause an expiry.
  std::string session_password();

  // Requests sent to the server since construction, by kind: "get", "children", "exists",
  // "create", "set", "delete", "multi". The packets benchmark attributes its figure by them.
  std::map<std::string, uint64_t> request_counts() const;

  // Test seam: runs on the sending thread each time asynchronous requests (a write batch, a
  // level of a cache load) are about to be handed to the client. A test ends the session
  // from it to force a session replacement into that moment. Set before any such request.
  void set_before_send_for_testing(std::function<void()> hook) {
    before_send_for_testing_ = std::move(hook);
  }
  // Test seam: runs on the loading thread each time a cache load (a Watch's, a refresh's)
  // has handed a level's reads to the client, before it waits for their replies. A test
  // writes from it to put its own write between a read's send and the read's apply.
  void set_after_send_for_testing(std::function<void()> hook) {
    after_send_for_testing_ = std::move(hook);
  }
  // Test seam: replaces the session on the calling thread, as an expiry does on the worker
  // (the old handle closed, what it owed answered, a new handle opened).
  void ReplaceSessionForTesting() { client_->ReplaceSession(); }
  // Test seam: the server ends the session as on a timeout (RegistryClient::ExpireForTesting;
  // a MemoryClient's Expire): its ephemeral nodes go at once; the worker then reports LOST,
  // opens a new session, resynchronises the caches and reports RECONNECTED. Returns once
  // it has (WaitIdleForTesting; the listeners' calls are posted, maybe not yet run), or
  // false at once when the client has no such seam.
  bool ExpireSession() {
    if (!client_->ExpireForTesting()) return false;
    WaitIdleForTesting();
    return true;
  }
  // Test seam: waits until the client has delivered every event it queued (watch events,
  // answers) and the worker has done what they asked (refreshes applied to the caches,
  // their events posted to the subscriptions' executors, connection states fanned out),
  // over and over until a round finds nothing new. Another session's write made before the
  // call is then in this registry's caches. Returns at once (after one worker round) when
  // the client cannot tell (RegistryClient::WaitIdleForTesting). Not on the worker or the
  // client's event thread. Returns a count of what has happened so far, which a caller
  // waiting for several registries compares to tell whether anything moved meanwhile.
  uint64_t WaitIdleForTesting();
  // Test seam: the session lease (SessionLease::SetLapsedForTesting): not held while
  // `held` is false, as for a process that has not heard from the server lately, until
  // set again or the session is replaced (its waiters then answer false).
  void SetLeaseHeldForTesting(bool held) { lease_.SetLapsedForTesting(!held); }
  // Test seam: waits (bounded) until at least `n` AwaitLease calls wait: an item start has
  // reached the lapsed lease. Returns whether they did.
  bool WaitLeaseWaitersForTesting(int n, std::chrono::milliseconds timeout) {
    return lease_.WaitWaitersForTesting(n, timeout);
  }
  // Test seam: runs on the writing thread after the server answered a write of `full`, just
  // before the write is applied to the caches (a refresh may read newer state meanwhile).
  void set_before_local_apply_for_testing(std::function<void(const std::string& full)> hook) {
    before_local_apply_for_testing_ = std::move(hook);
  }

 protected:
  Result<std::vector<std::string>> GetChildrenDirectly(std::string_view key) override;

 private:
  struct Multi;
  struct PendingMulti;

  // The client's session events (ClientHooks::session): on its event thread, so they only
  // post to the worker; kNewSession (on the replacing thread) resets the lease.
  void OnSessionEvent(const SessionEvent& event);
  // What the latch asks of the registry: its retries, its errors, its caches, and its writes
  // numbered and applied to the caches as the registry's own are.
  LeaderLatch::Hooks LatchHooks();
  // NotifyConnectionState, and the latch's waiters look again (a watch may be gone).
  void Notify(ConnectionState state);
  // Whether Close has begun.
  bool Closing();
  // Waits until the worker has run every task posted to it before the call.
  // REQUIRES: not on the worker.
  void AwaitWorker();
  // Runs `attempt` (one request) through the client's retries (exponential backoff,
  // baseSleepMs .. maxSleepMs, maxRetries, woken when the connection returns); an answer
  // from the server renews the lease and is timed as `kind` in the stats.
  ClientCode WithRetry(RequestKind kind, const std::function<ClientCode()>& attempt);
  // Counts a request the client hands to the server (ClientHooks::request), and numbers it
  // (NextSeq) as it leaves, on the handing thread (Numbered).
  void CountRequest(RequestKind kind);
  // Runs `call` (one blocking request) and sets `seq` to the number its request got as the
  // client handed it over: a read numbered higher left after it and shows it. (Numbered
  // before the hand-over, a write could be overtaken by a read numbered after it, whose
  // older view then hid the write from the caches until the watch it fired was read.)
  ClientCode Numbered(uint64_t* seq, const std::function<ClientCode()>& call);
  Status ToStatus(ClientCode rc, std::string_view key) const;
  std::string Full(std::string_view key) const;
  std::string Relative(const std::string& full) const;
  // What the caches say of `full`: there, not there, or no cache covers it.
  using Known = TreeCacheSet::Known;
  Known CacheKnows(const std::string& full) { return caches_.Knows(full); }
  // Creates `full` and every missing ancestor below the namespace with `mode`, one level at
  // a time (containers cannot be made in a multi-op with the 3.8 client's API). With
  // `trust_cache`, it stops at the first ancestor a cache has; without, it asks the server
  // (a cache lags the server, and the server deletes empty containers on its own). It also
  // stops at `present`, a full path the caller knows exists (empty: none).
  Status CreateChain(const std::string& full, CreateMode mode, bool trust_cache = true,
                     std::string_view present = {});
  // Creates `full` with its missing persistent ancestors in one multi-op.
  Result<std::string> CreateWithAncestors(const std::string& full, std::string_view value,
                                          CreateMode mode);
  Status CreateParents(const std::string& full);
  // A transaction in the client's form, and its outcome (applied to the caches when OK).
  // `stamped`: the last step is a set whose stat the client fills (a create gets one added).
  std::unique_ptr<Multi> PrepareMulti(std::vector<TransactionOp> ops, bool stamped = false) const;
  Status FinishMulti(Multi& multi, ClientCode rc);
  // The transaction `ops` on the calling thread, retried as WithRetry retries; `stamped`: its
  // zxid is returned (ExecuteInTransactionStampedAsync), else 0.
  Result<int64_t> ExecuteMulti(const std::vector<TransactionOp>& ops, bool stamped);
  // The async path shared by the plain and the stamped transaction.
  void SendTransaction(std::vector<TransactionOp> ops, bool stamped, Executor& executor,
                       std::function<void(Result<int64_t>)> done);

  Result<std::string> Create(const std::string& full, std::string_view value, CreateMode mode,
                             bool parents);

  // Applies a write of ours the server accepted to the caches (TreeCacheSet::ApplyLocalWrite),
  // after the test seam set_before_local_apply_for_testing.
  void ApplyLocalWrite(const std::string& full, const std::optional<std::string>& value,
                       uint64_t seq);
  // Request order, for read-your-writes: every request, blocking or asynchronous (a write
  // pipeline's multi-op too: WritePipeline::Hooks::numbered), takes the number it got as the
  // client handed it over (CountRequest, Numbered), so a read numbered after a write left
  // after it and shows it.
  uint64_t NextSeq() { return send_seq_.fetch_add(1, std::memory_order_relaxed) + 1; }

  const RegistryUrl url_;
  const std::string prefix_;  // "/namespace"
  const std::unique_ptr<RegistryClient> client_;
  // The asynchronous transactions, batched (after client_: it refers to the client; Close
  // has the client answer what it owed before either goes).
  WritePipeline pipeline_;
  // The session lease (RegistryCenter::LeaseHeld), fed with every answer's send time.
  SessionLease lease_;
  // The leader latch (ExecuteInLeader), over the client; the client is closed before it goes.
  LeaderLatch latch_;
  // The subtree caches (Watch), their refreshes and read-your-writes (after client_, as the
  // pipeline; the worker runs their refreshes and is joined before they go).
  TreeCacheSet caches_;
  ThreadPool worker_{1};  // serial: one thread

  Mutex state_mu_;
  CondVar state_cv_{&state_mu_};  // signalled when Close begins
  bool closing_ ELASTICJOB_GUARDED_BY(state_mu_) = false;

  std::array<std::atomic<uint64_t>, static_cast<size_t>(RequestKind::kCount)> requests_{};

  std::atomic<uint64_t> send_seq_{0};

  std::function<void()> before_send_for_testing_;  // set before use (tests only)
  std::function<void()> after_send_for_testing_;   // the same
  std::function<void(const std::string&)> before_local_apply_for_testing_;  // the same
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_COMPOSED_REGISTRY_H_
