// MemoryClient: the registry's client seam (reg/client/registry_client.h) over MemoryServer,
// an in-process store that answers as one ZooKeeper server does, so that the registry built
// on the seam (ComposedRegistry) runs unchanged without a server (docs/registry.md,
// "The client seam"). Several clients (sessions) share one MemoryServer: each sees the
// others' writes, and one's write fires the others' watches.
//
// What the server keeps, as ZooKeeper's does: nodes with their stat (czxid, mzxid and pzxid
// from one store-wide zxid counter, one per successful write request, a multi-op's steps
// sharing theirs; version, cversion, num_children, ephemeral_owner; ctime and mtime from the
// server's Clock); persistent, ephemeral, sequential (the suffix is the parent's cversion,
// 10 digits) and container nodes; version checks; all-or-nothing multi-ops whose failed
// steps answer as ZooKeeper's do (kOk before the failed one, its code, kNotRun after); and
// one-shot watches with ZooKeeper's firing rules: a data watch (get, or exists on a present
// node) fires on change and delete, an exists watch on a missing node on its creation, a
// children watch when a child comes or goes or the node is deleted; one Watcher set on one
// path by several reads gets one call per event. Empty containers go as ZooKeeper's
// ContainerManager reaps them: on a timer (its checkIntervalMs; a pass deletes every container
// that has had children and has none, each as a write of its own, so a chain of them goes one
// level a pass), run by one of the clients' event threads when due, or when a test calls
// ReapContainers.
//
// What the client holds, as ZooKeeperClient does over the C client: one session at a time
// (Connect, ReplaceSession on a new epoch, Close: the session's ephemeral nodes go at once),
// its events to ClientHooks (kConnected, kExpired, kNewSession; there is no network, so no
// kSuspended), request counting, and one event thread that runs every asynchronous answer,
// watch event and session hook in the order the server produced them. A request is applied
// when it is handed over (under the server's lock, on the calling thread): a blocking call
// answers there; an asynchronous one's answer is queued for the event thread behind the
// watch events it fired. What is still queued when Close or ReplaceSession closes the
// session is answered on the closing thread (kClosing, kSessionExpired), as an answer lost
// with a closed connection is; its queued watch events are dropped. Blocking calls also work
// on the event thread (they never wait for it).
//
// Test seam: Expire() ends the session as the server does when a session times out: its
// ephemeral nodes and watches go, every Watcher with a watch set hears kSession/kExpired,
// the hooks hear kExpired, and requests answer kInvalidState until ReplaceSession.
//
// Threads: each client's event thread, which also runs the server's reaper passes when they
// are due (one client's thread a pass; none while the server has no client).
// Thread safety: both classes are safe for concurrent use. Locks, in the order they are
// taken: a client's mu_, the server's mu_, any client's events_mu_. No callback or Watcher
// runs with a lock held, but for the session hook, which runs with its client's mu_ held
// (the seam's contract: it only enqueues).
#ifndef ELASTICJOB_REG_MEMORY_MEMORY_CLIENT_H_
#define ELASTICJOB_REG_MEMORY_MEMORY_CLIENT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"
#include "reg/registry_url.h"

namespace elasticjob::reg {

class MemoryClient;

// The store the clients share: one ZooKeeper server's data tree, sessions and watches.
class MemoryServer {
 public:
  // `clock` (borrowed; must outlive the server) stamps ctime and mtime. A positive
  // `container_check`: ReapContainers runs that often (ZooKeeper's default, 60 s; its test
  // script's, 200 ms) on a client's event thread; zero: only when called.
  explicit MemoryServer(Clock& clock = Clock::System(),
                        std::chrono::milliseconds container_check = std::chrono::seconds(60));
  // The server named `name` (memory://name), shared by every memory:// registry of this
  // process that names it, made on first use (system clock, ZooKeeper's 60 s container
  // check) and gone with its last user.
  static std::shared_ptr<MemoryServer> Shared(const std::string& name);
  ~MemoryServer();
  MemoryServer(const MemoryServer&) = delete;
  MemoryServer& operator=(const MemoryServer&) = delete;

  // One pass of the container reaper: deletes every container node that has had children
  // (cversion > 0) and has none now, each as a write of its own whose watch events reach
  // the sessions. Returns how many went. Costs O(containers), not O(nodes).
  int ReapContainers();

  // The zxid of the last applied write (0 before the first).
  int64_t last_zxid();
  // The number of sessions open now.
  size_t open_sessions();

 private:
  friend class MemoryClient;

  struct Node {
    std::string value;
    NodeStat stat;
    bool container = false;
    std::set<std::string> children;  // names
  };
  struct Session {
    MemoryClient* client;  // the owner of the session's event queue
    // One-shot watches by path. `data` holds get's and exists' watches (an exists watch on a
    // missing node fires on its creation), `child` children's.
    // Hashed, as ZooKeeper's WatchManager: every write looks its paths up in every session's
    // tables, and paths of one job share long prefixes (an ordered map compares them over).
    std::unordered_map<std::string, std::set<Watcher*>> data;
    std::unordered_map<std::string, std::set<Watcher*>> child;
  };
  // A change a watch may be waiting for, in the order the server applied it.
  struct Trigger {
    WatchEvent::Type type;  // kCreated, kDeleted, kChanged (the node), kChildren (its parent)
    std::string path;
  };
  // What a step changed, to take it back (Undo, in reverse order). Nothing copies a parent's
  // children: a create under a namespace of a thousand jobs copied a thousand names.
  struct UndoStep {
    enum class Kind {
      kStat,     // `path`'s stat was `stat` (a parent whose children changed)
      kValue,    // `path`'s value and stat were `value` and `stat` (a set)
      kCreated,  // `path` was created (it goes, and its name from its parent's children)
      kDeleted,  // `path` was deleted: it was `node` (a leaf: no children)
    };
    Kind kind;
    std::string path;
    NodeStat stat;
    std::string value;
    std::optional<Node> node;
  };
  // A write request in progress: its zxid, what it changed (to undo a failed multi-op) and
  // the triggers it will publish once it stands.
  struct Txn {
    int64_t zxid = 0;
    int64_t now_ms = 0;
    std::vector<UndoStep> undo;
    std::vector<Trigger> triggers;
  };

  int64_t NowMs() const;
  // A client's event thread at `now`: runs a reaper pass when one is due and no other
  // client's thread has taken it; returns when the next is due (max(): never). Without the
  // client's events_mu_ held (the pass publishes to every client's queue).
  std::chrono::steady_clock::time_point ReapWhenDue(std::chrono::steady_clock::time_point now);
  // Opens a session owned by `client`; returns its id.
  int64_t OpenSession(MemoryClient* client) ELASTICJOB_REQUIRES(mu_);
  // Ends session `id` (if open): its watches go, then its ephemeral nodes (one write, whose
  // events reach the other sessions). `watchers` (may be null) gets each Watcher that had a
  // watch set, once.
  void CloseSession(int64_t id, std::vector<Watcher*>* watchers) ELASTICJOB_REQUIRES(mu_);

  // Reads, in session `id`; a non-null `watch` is set when ZooKeeper's server would set it.
  ClientCode GetLocked(int64_t id, const std::string& path, Watcher* watch, std::string* value,
                       NodeStat* stat) ELASTICJOB_REQUIRES(mu_);
  ClientCode ChildrenLocked(int64_t id, const std::string& path, Watcher* watch,
                            std::vector<std::string>* children) ELASTICJOB_REQUIRES(mu_);
  ClientCode ExistsLocked(int64_t id, const std::string& path, Watcher* watch, NodeStat* stat)
      ELASTICJOB_REQUIRES(mu_);
  // Applies `ops` in session `id` all or nothing (a single write is a one-step request) and
  // publishes the watch events it fired to the sessions that set them. `results` gets one
  // entry per op (ZooKeeper's codes for a failed request).
  ClientCode WriteLocked(int64_t id, const std::vector<ClientOp>& ops,
                         std::vector<ClientOpResult>* results) ELASTICJOB_REQUIRES(mu_);

  // One step of a write; nothing changed unless it answers kOk.
  ClientCode ApplyLocked(int64_t id, const ClientOp& op, Txn* txn, ClientOpResult* result)
      ELASTICJOB_REQUIRES(mu_);
  ClientCode CreateLocked(int64_t owner, const std::string& path, const std::string& value,
                          CreateMode mode, Txn* txn, std::string* created) ELASTICJOB_REQUIRES(mu_);
  ClientCode SetLocked(const std::string& path, const std::string& value, int32_t version, Txn* txn,
                       NodeStat* stat) ELASTICJOB_REQUIRES(mu_);
  ClientCode DeleteLocked(const std::string& path, int32_t version, Txn* txn)
      ELASTICJOB_REQUIRES(mu_);
  // Keeps the indexes (ephemerals_, containers_) in step with nodes_: called for every node
  // put in (Index) or taken out (Unindex).
  void Index(const std::string& path, const Node& node) ELASTICJOB_REQUIRES(mu_);
  void Unindex(const std::string& path, const Node& node) ELASTICJOB_REQUIRES(mu_);
  // Takes back what `txn` changed, the last change first.
  void Undo(Txn* txn) ELASTICJOB_REQUIRES(mu_);
  // Fires the watches `triggers` meet, in order: each session's Watchers get one event per
  // trigger, queued on its client's event thread.
  void Publish(const std::vector<Trigger>& triggers) ELASTICJOB_REQUIRES(mu_);

  Clock& clock_;
  Mutex mu_;
  // Full paths; "/" always. Hashed (looked up by path only: a node's children are its own).
  std::unordered_map<std::string, Node> nodes_ ELASTICJOB_GUARDED_BY(mu_);
  // Indexes of nodes_, so that a session's close and a reaper pass cost what they find, not
  // a scan of every node: each session's ephemeral nodes, and the container nodes.
  // (Hashed: a run's ephemeral running marks come and go on every fire.)
  std::map<int64_t, std::unordered_set<std::string>> ephemerals_ ELASTICJOB_GUARDED_BY(mu_);
  std::set<std::string> containers_ ELASTICJOB_GUARDED_BY(mu_);
  std::map<int64_t, Session> sessions_ ELASTICJOB_GUARDED_BY(mu_);
  int64_t zxid_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t next_session_ ELASTICJOB_GUARDED_BY(mu_) = 1;

  const std::chrono::milliseconds container_check_;
  // When the next reaper pass is due, steady clock ticks (taken by one event thread, which
  // moves it on by container_check_).
  std::atomic<std::chrono::steady_clock::rep> next_reap_{0};
};

class MemoryClient final : public RegistryClient {
 public:
  // A client of `server`, with `url`'s session timeout (what session_timeout() reports: the
  // registry sizes its lease by it) and retry settings (WithRetry). Starts its event thread.
  explicit MemoryClient(std::shared_ptr<MemoryServer> server, RegistryUrl url = {});
  // Closes the session and stops the event thread. REQUIRES: not on the event thread.
  ~MemoryClient() override;
  MemoryClient(const MemoryClient&) = delete;
  MemoryClient& operator=(const MemoryClient&) = delete;

  // Test seam: the server ends the current session (see the header comment). No-op without
  // a session.
  void Expire();
  const std::shared_ptr<MemoryServer>& server() const { return server_; }
  bool ExpireForTesting() override {
    Expire();
    return true;
  }
  // Waits until the event queue is empty and no event is being delivered (REQUIRES: not
  // on the event thread); returns the number of events queued so far.
  uint64_t WaitIdleForTesting() override;

  void SetHooks(ClientHooks hooks) override { hooks_ = std::move(hooks); }
  // Opens a session at once (there is no network): OK, and the kConnected hook has run
  // (unless called on the event thread, where it runs next).
  Status Connect() override;
  void ReplaceSession() override;
  void Close() override;
  ClientState state() override;
  bool closing() override;
  uint64_t session_epoch() override;
  SessionInfo session() override;
  std::chrono::milliseconds session_timeout() override;
  ClientCode WithRetry(const std::function<ClientCode()>& attempt) override;

  ClientCode GetSync(const std::string& path, Watcher* watch, std::string* value,
                     NodeStat* stat) override;
  ClientCode ChildrenSync(const std::string& path, Watcher* watch,
                          std::vector<std::string>* children) override;
  ClientCode ExistsSync(const std::string& path, Watcher* watch, NodeStat* stat) override;
  ClientCode CreateSync(const std::string& path, std::string_view value, CreateMode mode,
                        std::string* created) override;
  ClientCode SetSync(const std::string& path, std::string_view value, int32_t version,
                     NodeStat* stat, uint64_t only_in_epoch) override;
  ClientCode DeleteSync(const std::string& path, int32_t version) override;
  ClientCode MultiSync(const std::vector<ClientOp>& ops,
                       std::vector<ClientOpResult>* results) override;

  void Get(const std::string& path, Watcher* watch, DataDone done) override;
  void Children(const std::string& path, Watcher* watch, ChildrenDone done) override;
  void Exists(const std::string& path, Watcher* watch, StatDone done) override;
  void Create(const std::string& path, std::string_view value, CreateMode mode,
              CreateDone done) override;
  void Set(const std::string& path, std::string_view value, int32_t version,
           StatDone done) override;
  void Delete(const std::string& path, int32_t version, Done done) override;
  void Multi(std::vector<ClientOp> ops, MultiDone done) override;

 private:
  friend class MemoryServer;

  // One item of the event queue, of the session it belongs to.
  struct Event {
    int64_t session = 0;
    uint64_t seq = 0;                      // its place in the queue (Delivered)
    std::function<void()> deliver;         // on the event thread
    std::function<void(ClientCode)> fail;  // an answer's: called instead when abandoned
  };

  // Whether there is a session; if so, counts a request of `kind` (which the caller then
  // applies in it).
  bool Counted(RequestKind kind) ELASTICJOB_REQUIRES(mu_);
  // A blocking request: `apply` runs it in the current session (its id given) with the
  // server's lock held, counted as `kind`. kInvalidState (not counted) without a session;
  // kSessionMoved when `only_in_epoch` (0: any) is not the current epoch.
  ClientCode OnServer(RequestKind kind, const std::function<ClientCode(int64_t)>& apply,
                      uint64_t only_in_epoch = 0);
  // An asynchronous request: `apply` runs it as OnServer's does and returns its answer,
  // queued for the event thread; `fail` answers it with a code instead (kInvalidState here
  // without a session; kClosing or kSessionExpired when Close or ReplaceSession abandons it).
  void OnServerAsync(RequestKind kind, const std::function<std::function<void()>(int64_t)>& apply,
                     std::function<void(ClientCode)> fail);
  // Queues an answer (or a watch event, or a session hook) of `session`; returns its seq.
  uint64_t Post(int64_t session, std::function<void()> deliver,
                std::function<void(ClientCode)> fail = nullptr);
  void PostWatch(int64_t session, Watcher* watcher, WatchEvent::Type type, ClientState state,
                 const std::string& path);
  uint64_t PostSessionEvent(int64_t session, SessionEvent event);
  // Takes every queued event out: answers get `rc` on this thread, the rest are dropped;
  // then waits for a delivery in progress to end (unless on the event thread).
  void Abandon(ClientCode rc);
  // Waits until the event `seq` has been delivered or dropped (not on the event thread).
  void AwaitDelivered(uint64_t seq);
  bool OnEventThread() const { return std::this_thread::get_id() == events_thread_.get_id(); }
  void RunEvents();

  const std::shared_ptr<MemoryServer> server_;
  const RegistryUrl url_;
  ClientHooks hooks_;  // set before Connect

  Mutex mu_;                // the session; held while a request is applied (requests go in order)
  CondVar state_cv_{&mu_};  // a session opened, or Close called
  int64_t session_id_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // 0: no session
  // Changed under mu_ (in order with the session's changes); read without it by
  // session_epoch, which every run's claim asks (it would wait behind the requests applied).
  std::atomic<uint64_t> epoch_{0};
  bool ever_connected_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool expired_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool closing_ ELASTICJOB_GUARDED_BY(mu_) = false;

  Mutex events_mu_;
  CondVar events_cv_{&events_mu_};
  std::deque<Event> events_ ELASTICJOB_GUARDED_BY(events_mu_);
  uint64_t posted_ ELASTICJOB_GUARDED_BY(events_mu_) = 0;      // the last seq given
  uint64_t delivering_ ELASTICJOB_GUARDED_BY(events_mu_) = 0;  // its seq; 0: none
  bool stop_events_ ELASTICJOB_GUARDED_BY(events_mu_) = false;
  std::thread events_thread_;  // last: starts once the rest is made
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_MEMORY_MEMORY_CLIENT_H_
