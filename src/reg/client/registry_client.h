// RegistryClient: the registry's private seam of primitive operations on a ZooKeeper-shaped
// store (ZooKeeper's C client's semantics, in terms of full paths), under the registry class
// that builds caches, the write pipeline, the lease and the latch on it (docs/registry.md,
// "The client seam"). ZooKeeperClient (reg/zookeeper/) implements it over libzookeeper-mt.
//
// What it holds: one session at a time (its state, its epoch, its id and granted timeout),
// connect and retry, and the requests: get, children and exists (each may set a one-shot
// watch), create, set, delete and multi, each blocking (one attempt, on the calling thread)
// or asynchronous (answered through a callback).
//
// Contract, for every implementation:
// - Order. Requests reach the server in the order they were handed to the client (a call
//   hands its request over before it returns), whichever thread made them and whether
//   blocking or asynchronous; the server answers one session's requests in that order too.
//   The registry's read-your-writes relies on this (a write takes its sequence number before
//   it is handed over, a read after: a read sent after a write has the larger number).
// - Callbacks. An asynchronous call's callback is called exactly once: with the server's
//   answer; or, if the request could not be handed over (no session: kInvalidState; or the
//   code the client refused it with), on the calling thread before the call returns; or, for a
//   request still unanswered when its session's handle is closed, on the thread that closed it:
//   kClosing from Close, kSessionExpired from ReplaceSession. Answers run on the client's event
//   thread (one thread: in the order the server answered). A callback must not block (it holds up
//   every other answer and watch) and must not make blocking calls on this client (their answer may
//   need the same thread); it may make asynchronous ones.
// - Buffers. The client copies what it is given (paths, values, ops) before the call returns;
//   what a callback is given (a value, children, results) is valid during the callback only.
// - Watches. A read given a non-null Watcher sets a one-shot watch of its kind (data for get,
//   children for children, exists for exists; an exists watch on a missing node fires on its
//   creation) when the server accepts the read. A fired watch calls its Watcher once, on the
//   event thread, and is gone. Setting the same Watcher twice on one path and kind before it
//   fires sets one watch (ZooKeeper's rule). Connection changes are delivered to every
//   Watcher with a watch set (kSession): the watches stay set, except at kExpired, when
//   every watch of the session is gone. Once Close or ReplaceSession has closed a handle,
//   no watch set on it is called again. The Watcher is the caller's and must outlive
//   every watch set with it (until it fires for good, or the handle it was set on is closed).
// - Sessions. A session's events reach the hooks (ClientHooks::session) in the order they
//   happened; the epoch (session_epoch) counts the sessions the client has held and moves
//   when ReplaceSession starts a new one, before the old handle closes. The client does
//   not replace an expired session on its own: its owner calls ReplaceSession (after it has
//   told its users the session is lost).
// - Counting. Every request handed to a server is reported to ClientHooks::request, on the
//   sending thread, before it is sent.
//
// Thread safety: every method may be called from any thread, except that blocking calls must
// not be made from a callback of this client.
#ifndef ELASTICJOB_REG_CLIENT_REGISTRY_CLIENT_H_
#define ELASTICJOB_REG_CLIENT_REGISTRY_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"

namespace elasticjob::reg {

// A request's outcome: ZooKeeper's codes (the C client's Z* names in the comments).
enum class ClientCode {
  kOk,                       // ZOK
  kNoNode,                   // ZNONODE
  kNodeExists,               // ZNODEEXISTS
  kNotEmpty,                 // ZNOTEMPTY
  kBadVersion,               // ZBADVERSION
  kNoChildrenForEphemerals,  // ZNOCHILDRENFOREPHEMERALS
  kNoAuth,                   // ZNOAUTH: the node's ACL refuses this session
  kAuthFailed,               // ZAUTHFAILED: the session's authentication failed
  kNotRun,                   // ZRUNTIMEINCONSISTENCY: a multi's step not run (another failed)
  kConnectionLoss,           // ZCONNECTIONLOSS: no answer will come from this connection
  kOperationTimeout,         // ZOPERATIONTIMEOUT
  kSessionExpired,           // ZSESSIONEXPIRED; also an owed answer of a replaced session
  kInvalidState,             // ZINVALIDSTATE: no usable session (none yet, or it is over)
  kClosing,                  // ZCLOSING: the handle closes (Close)
  kSessionMoved,             // a request guarded by a session epoch that is no longer current
  kOther,                    // any other code (ClientCodeText names it)
};

// Whether `code` is the server's answer to a request that reached it in its session (which
// proves the session alive when the request was sent), not the client's report of a lost
// connection, an expired session or a closed handle.
bool ServerAnswered(ClientCode code);
// Whether a request that met `code` may succeed if sent again (WithRetry retries these).
bool Retryable(ClientCode code);
// Whether a multi-op's step result `code` names the step that failed it (the others are kOk
// or kNotRun).
bool StepFailed(ClientCode code);
// Now on the steady clock, in ns: the send times the registry's lease compares (a request's,
// a probe's, a write batch's), all from this one clock read.
int64_t SteadyNs();
// A short name of `code` for messages ("no node", "connection loss", ...).
std::string_view ClientCodeText(ClientCode code);

// The session as the client sees it.
enum class ClientState {
  kConnecting,  // no session yet (Connect is waiting)
  kConnected,   // a session, connected
  kSuspended,   // the connection dropped; the session may still be alive
  kExpired,     // the server ended the session: its ephemeral nodes and watches are gone
  kAuthFailed,  // the session's authentication failed
  kClosed,      // Close was called
};

// A node's stat, as the server keeps it.
struct NodeStat {
  int64_t czxid = 0;
  int64_t mzxid = 0;  // the zxid of its last change: a write's place in the order of writes
  int64_t ctime = 0;  // ms since the epoch, the server's clock
  int64_t mtime = 0;
  int32_t version = 0;
  int32_t cversion = 0;
  int32_t aversion = 0;
  int64_t ephemeral_owner = 0;  // the owning session's id; 0 for a persistent node
  int32_t data_length = 0;
  int32_t num_children = 0;
  int64_t pzxid = 0;
};

// One step of a multi-op.
struct ClientOp {
  enum class Type { kCheck, kCreate, kSet, kDelete };
  Type type = Type::kCheck;
  std::string path;                           // full path
  std::string value;                          // kCreate, kSet
  CreateMode mode = CreateMode::kPersistent;  // kCreate
  int32_t version = -1;                       // kCheck, kSet, kDelete: -1 is any
  bool want_stat = false;                     // kSet: fill ClientOpResult::stat
};

// One step's outcome.
struct ClientOpResult {
  ClientCode code = ClientCode::kNotRun;
  std::string path;  // kCreate: the created path (a sequential node's carries its suffix)
  NodeStat stat;     // kSet with want_stat
};

// What a fired watch says.
struct WatchEvent {
  enum class Type { kCreated, kDeleted, kChanged, kChildren, kSession, kNotWatching };
  Type type;
  ClientState state;      // kSession: the connection's new state
  std::string_view path;  // the node (empty for kSession); valid during the call only
};

// Receives the events of the watches set with it (see the contract above).
class Watcher {
 public:
  virtual ~Watcher() = default;
  // On the client's event thread; must not block. May destroy this Watcher when no watch
  // set with it remains (its owner's bookkeeping says so), and must not touch it after that.
  virtual void OnWatch(const WatchEvent& event) = 0;
};

// The request kinds, as counted (the registry's metrics and request_counts()).
enum class RequestKind { kGet, kChildren, kExists, kCreate, kSet, kDelete, kMulti, kCount };

// A session event (ClientHooks::session).
struct SessionEvent {
  enum class Type {
    kConnected,   // connected: `first` for the client's first session's first connection
    kSuspended,   // the connection dropped (once per drop, after a first connection)
    kExpired,     // the server ended the session; the owner should ReplaceSession
    kNewSession,  // ReplaceSession took a new epoch; the old handle closes next
  };
  Type type;
  uint64_t epoch;      // the session epoch the event belongs to
  bool first = false;  // kConnected only
};

// Set once, before Connect. Both run on the client's threads and must not block: `session`
// with the client's session lock held (only enqueue work; kNewSession runs on the thread
// calling ReplaceSession, without it), `request` on the thread handing the request over.
struct ClientHooks {
  std::function<void(const SessionEvent&)> session;
  std::function<void(RequestKind)> request;
};

// The current session, read at one instant.
struct SessionInfo {
  uint64_t epoch = 0;
  int64_t id = 0;        // 0 when there is no session
  std::string password;  // the session's password (empty when there is none)
};

class RegistryClient {
 public:
  using DataDone = std::function<void(ClientCode, std::string_view value, const NodeStat&)>;
  using ChildrenDone = std::function<void(ClientCode, std::vector<std::string> children)>;
  using StatDone = std::function<void(ClientCode, const NodeStat&)>;
  using CreateDone = std::function<void(ClientCode, std::string_view created)>;
  using Done = std::function<void(ClientCode)>;
  using MultiDone = std::function<void(ClientCode, std::vector<ClientOpResult> results)>;

  virtual ~RegistryClient() = default;

  // ---- the session ----
  // REQUIRES: called once, before Connect.
  virtual void SetHooks(ClientHooks hooks) = 0;
  // Opens a session and waits (up to the connection timeout) for its first connection and
  // its authentication. OK at once when connected. UNAVAILABLE: no server answered in time;
  // AUTH_FAILED: the credentials were refused. On failure the client is closed.
  virtual Status Connect() = 0;
  // Ends the current handle (answering what it owed with kSessionExpired) and opens a new
  // session on a new epoch; returns without waiting for its connection (a kConnected event
  // tells). Nothing after Close.
  virtual void ReplaceSession() = 0;
  // Closes the session (its ephemeral nodes go now), answers what it owed with kClosing and
  // wakes WithRetry's waiters. Connect may open a new session afterwards.
  virtual void Close() = 0;
  virtual ClientState state() = 0;
  // Whether Close has been called since the last Connect.
  virtual bool closing() = 0;
  // The sessions held so far, counting the current one: moves on ReplaceSession.
  virtual uint64_t session_epoch() = 0;
  virtual SessionInfo session() = 0;
  // The timeout the server granted the session (the one asked for before it answered).
  virtual std::chrono::milliseconds session_timeout() = 0;

  // Runs `attempt` (which makes one request), again while it answers a Retryable code, up
  // to the client's retry count, waiting between attempts with exponential backoff (or until
  // the connection returns, whichever is first). Returns the last attempt's code; kClosing
  // once Close was called. REQUIRES: not on a callback of this client.
  virtual ClientCode WithRetry(const std::function<ClientCode()>& attempt) = 0;

  // ---- blocking requests: one attempt each, answered on the calling thread ----
  // Out-parameters may be null. REQUIRES: not on a callback of this client.
  virtual ClientCode GetSync(const std::string& path, Watcher* watch, std::string* value,
                             NodeStat* stat) = 0;
  virtual ClientCode ChildrenSync(const std::string& path, Watcher* watch,
                                  std::vector<std::string>* children) = 0;
  virtual ClientCode ExistsSync(const std::string& path, Watcher* watch, NodeStat* stat) = 0;
  virtual ClientCode CreateSync(const std::string& path, std::string_view value, CreateMode mode,
                                std::string* created) = 0;
  // `only_in_epoch` (0: any): sent only while that session is current, else kSessionMoved
  // (a write whose meaning depends on the session it was planned in).
  virtual ClientCode SetSync(const std::string& path, std::string_view value, int32_t version,
                             NodeStat* stat, uint64_t only_in_epoch = 0) = 0;
  virtual ClientCode DeleteSync(const std::string& path, int32_t version) = 0;
  // `results` gets one entry per op (kNotRun for steps after a failed one).
  virtual ClientCode MultiSync(const std::vector<ClientOp>& ops,
                               std::vector<ClientOpResult>* results) = 0;

  // ---- asynchronous requests (see the contract on callbacks above) ----
  virtual void Get(const std::string& path, Watcher* watch, DataDone done) = 0;
  virtual void Children(const std::string& path, Watcher* watch, ChildrenDone done) = 0;
  virtual void Exists(const std::string& path, Watcher* watch, StatDone done) = 0;
  virtual void Create(const std::string& path, std::string_view value, CreateMode mode,
                      CreateDone done) = 0;
  virtual void Set(const std::string& path, std::string_view value, int32_t version,
                   StatDone done) = 0;
  virtual void Delete(const std::string& path, int32_t version, Done done) = 0;
  // All or nothing. `done` gets one result per op.
  virtual void Multi(std::vector<ClientOp> ops, MultiDone done) = 0;

  // ---- test seams (an in-process client has them; a networked one answers "cannot") ----
  // Ends the current session as the server does when it times out (MemoryClient::Expire).
  // Returns false when this client cannot (no such seam; the ZooKeeper client's sessions
  // are ended from a second handle instead).
  virtual bool ExpireForTesting() { return false; }
  // Waits until nothing is queued for or running on the event thread; returns how many
  // events (answers, watch events, session hooks) the client has queued so far, which a
  // caller compares to tell whether anything happened meanwhile. 0 at once when the client
  // cannot tell.
  virtual uint64_t WaitIdleForTesting() { return 0; }
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_CLIENT_REGISTRY_CLIENT_H_
