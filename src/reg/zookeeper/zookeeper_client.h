// ZooKeeperClient: the registry's client seam (reg/client/registry_client.h) over ZooKeeper's
// official C client (libzookeeper-mt). The only code that includes <zookeeper/zookeeper.h>.
//
// What it owns: the handle and its session (connect, the digest, the replacement of an
// expired session, told apart by epoch), the retries (Curator's exponential backoff, woken
// early by the connection's return), the C client's ownership rules (every completion's
// context lives until its answer, and what a closed handle still owed is answered here:
// zookeeper_close can drop the completions of requests on their way), the creator-all ACL
// when a digest is set, and the C client's log (quiet unless ELASTICJOB_ZK_CLIENT_LOG says
// otherwise). Blocking calls use the C client's synchronous API (answered on its I/O thread),
// so, beyond the seam's contract, they also work on the event thread: the registry relies on
// that where an asynchronous transaction's retry runs on an inline executor
// (ComposedRegistry::PendingMulti::Complete).
//
// Threads: the C client's I/O thread and its event (completion) thread; callbacks, watches
// and session hooks run on the event thread. Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_REG_ZOOKEEPER_ZOOKEEPER_CLIENT_H_
#define ELASTICJOB_REG_ZOOKEEPER_ZOOKEEPER_CLIENT_H_

#include <atomic>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"
#include "reg/registry_url.h"

struct _zhandle;

namespace elasticjob::reg {

class ZooKeeperClient final : public RegistryClient {
 public:
  // Uses `url`'s servers, digest, session and connection timeouts and retry settings.
  explicit ZooKeeperClient(RegistryUrl url);
  ~ZooKeeperClient() override;
  ZooKeeperClient(const ZooKeeperClient&) = delete;
  ZooKeeperClient& operator=(const ZooKeeperClient&) = delete;

  void SetHooks(ClientHooks hooks) override { hooks_ = std::move(hooks); }
  Status Connect() override;
  void ReplaceSession() override;
  void Close() override;
  ClientState state() override;
  bool closing() override;
  uint64_t session_epoch() override { return generation_.load(); }
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
  // An asynchronous request between its hand-over and its answer: owned by the client
  // (owed_) until answered, by its completion or, once its handle is closed, by AbandonOwed.
  struct Call {
    virtual ~Call() = default;
    // Answers the request with `rc` (a C client code) and no payload.
    virtual void Fail(int rc) = 0;
    ZooKeeperClient* self = nullptr;
  };
  struct DataCall;
  struct ChildrenCall;
  struct StatCall;
  struct CreateCall;
  struct VoidCall;
  struct MultiCall;

  // Each handle's global watcher context: its generation, so events of a replaced handle
  // (which keep coming while it closes) are told apart from the current one's.
  struct SessionContext {
    ZooKeeperClient* self;
    uint64_t generation;
  };
  SessionContext* NewSessionContext();
  static void GlobalWatcher(_zhandle* zh, int type, int state, const char* path, void* ctx);
  static void WatcherCall(_zhandle* zh, int type, int state, const char* path, void* ctx);
  void OnSessionEvent(int state);
  _zhandle* Open(SessionContext* ctx);

  // Hands `call` to the current handle with `send` (a C client async call) under one hold of
  // handle_mu_, owed from then on: answered by its completion (which must Settle first) or by
  // AbandonOwed. Not sent (no handle, or refused): answered here with the code.
  void SendOwed(RequestKind kind, Call* call, const std::function<int(_zhandle*)>& send);
  bool Settle(Call* call);
  // Answers everything owed with `rc`. REQUIRES: the handle it was sent on is closed.
  void AbandonOwed(int rc);
  // Runs `op` on the current handle (kInvalidState without one), counted as `kind`.
  ClientCode OnHandle(RequestKind kind, const std::function<int(_zhandle*)>& op);
  void Count(RequestKind kind) {
    if (hooks_.request) hooks_.request(kind);
  }

  const RegistryUrl url_;
  ClientHooks hooks_;  // set before Connect

  SharedMutex handle_mu_;  // shared: using zh_; exclusive: replacing it
  _zhandle* zh_ ELASTICJOB_GUARDED_BY(handle_mu_) = nullptr;

  std::atomic<uint64_t> generation_{0};  // atomic: read on the C client's event thread
  Mutex contexts_mu_;
  std::vector<std::unique_ptr<SessionContext>> contexts_ ELASTICJOB_GUARDED_BY(contexts_mu_);

  Mutex state_mu_;
  CondVar state_cv_{&state_mu_};
  bool connected_ ELASTICJOB_GUARDED_BY(state_mu_) = false;
  bool ever_connected_ ELASTICJOB_GUARDED_BY(state_mu_) = false;
  bool suspended_ ELASTICJOB_GUARDED_BY(state_mu_) = false;
  bool expired_ ELASTICJOB_GUARDED_BY(state_mu_) = false;
  bool closing_ ELASTICJOB_GUARDED_BY(state_mu_) = false;

  // Replies the C client still owes. zookeeper_close drops the completions of requests still
  // on their way (it queues them for its completion thread after telling that thread to
  // stop), so once a handle is closed the client answers them itself: a reply waited for
  // that never came would hang its waiter (a cache load, a write batch) for good.
  Mutex owed_mu_;
  std::unordered_set<Call*> owed_ ELASTICJOB_GUARDED_BY(owed_mu_);
  Mutex abandon_mu_;  // held while AbandonOwed answers the entries
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_ZOOKEEPER_ZOOKEEPER_CLIENT_H_
