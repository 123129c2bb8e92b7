#include "reg/zookeeper/zookeeper_client.h"

#include <fmt/format.h>
#define THREADED  // the multi-threaded client: synchronous calls are available
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <random>

#include "infra/thread_name.h"

namespace elasticjob::reg {
namespace {

ClientCode CodeOf(int rc) {
  switch (rc) {
    case ZOK:
      return ClientCode::kOk;
    case ZNONODE:
      return ClientCode::kNoNode;
    case ZNODEEXISTS:
      return ClientCode::kNodeExists;
    case ZNOTEMPTY:
      return ClientCode::kNotEmpty;
    case ZBADVERSION:
      return ClientCode::kBadVersion;
    case ZNOCHILDRENFOREPHEMERALS:
      return ClientCode::kNoChildrenForEphemerals;
    case ZNOAUTH:
      return ClientCode::kNoAuth;
    case ZAUTHFAILED:
      return ClientCode::kAuthFailed;
    case ZRUNTIMEINCONSISTENCY:
      return ClientCode::kNotRun;
    case ZCONNECTIONLOSS:
      return ClientCode::kConnectionLoss;
    case ZOPERATIONTIMEOUT:
      return ClientCode::kOperationTimeout;
    case ZSESSIONEXPIRED:
      return ClientCode::kSessionExpired;
    case ZINVALIDSTATE:
      return ClientCode::kInvalidState;
    case ZCLOSING:
      return ClientCode::kClosing;
    case ZSESSIONMOVED:
      return ClientCode::kSessionMoved;
    default:
      return ClientCode::kOther;
  }
}

int FlagsOf(CreateMode mode) {
  switch (mode) {
    case CreateMode::kPersistent:
      return ZOO_PERSISTENT;
    case CreateMode::kEphemeral:
      return ZOO_EPHEMERAL;
    case CreateMode::kPersistentSequential:
      return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::kEphemeralSequential:
      return ZOO_EPHEMERAL_SEQUENTIAL;
    case CreateMode::kContainer:
      return ZOO_CONTAINER;
  }
  return ZOO_PERSISTENT;
}

NodeStat StatOf(const Stat* s) {
  NodeStat out;
  if (s == nullptr) return out;
  out.czxid = s->czxid;
  out.mzxid = s->mzxid;
  out.ctime = s->ctime;
  out.mtime = s->mtime;
  out.version = s->version;
  out.cversion = s->cversion;
  out.aversion = s->aversion;
  out.ephemeral_owner = s->ephemeralOwner;
  out.data_length = s->dataLength;
  out.num_children = s->numChildren;
  out.pzxid = s->pzxid;
  return out;
}

ClientState StateOf(int state) {
  if (state == ZOO_CONNECTED_STATE) return ClientState::kConnected;
  if (state == ZOO_EXPIRED_SESSION_STATE) return ClientState::kExpired;
  if (state == ZOO_AUTH_FAILED_STATE) return ClientState::kAuthFailed;
  return ClientState::kSuspended;
}

WatchEvent::Type WatchTypeOf(int type) {
  if (type == ZOO_CREATED_EVENT) return WatchEvent::Type::kCreated;
  if (type == ZOO_DELETED_EVENT) return WatchEvent::Type::kDeleted;
  if (type == ZOO_CHANGED_EVENT) return WatchEvent::Type::kChanged;
  if (type == ZOO_CHILD_EVENT) return WatchEvent::Type::kChildren;
  if (type == ZOO_SESSION_EVENT) return WatchEvent::Type::kSession;
  return WatchEvent::Type::kNotWatching;
}

// The C client resolves the server names again on every turn of its I/O loop unless told
// otherwise: a fifth of a busy process's CPU went to getaddrinfo. Names are resolved when
// a connection is (re)made, as the Java client does.
void ResolveOnlyOnReconnect(zhandle_t* zh) {
  if (zh != nullptr) zoo_set_servers_resolution_delay(zh, -1);
}

// Whether `zh`'s session is over for good (expired, or authentication failed). The C
// client's zoo_amulti (3.8.0) must not be given a multi-op then: every op's path init fails
// with ZINVALIDSTATE, and for each op after the first it frees a path pointer it never set
// (its `req.path` is uninitialised once an earlier op failed), here one of our own paths:
// heap corruption ("marshalling error (transaction)", then a crash in the allocator; issue
// 18). Asked under handle_mu_ right before the call; the client's own expiry can still land
// between the two, a window of microseconds instead of the whole time until the session is
// replaced.
bool Unrecoverable(zhandle_t* zh) {
  const int state = zoo_state(zh);
  return state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE;
}

// The C client logs every failed connection attempt to stderr; we report through Status
// and connection states instead. ELASTICJOB_ZK_CLIENT_LOG=1 turns its log back on (its
// warnings and errors); ELASTICJOB_ZK_CLIENT_LOG=debug logs every request with its path too.
void QuietClientLog() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string_view v = std::getenv("ELASTICJOB_ZK_CLIENT_LOG") != nullptr
                                   ? std::getenv("ELASTICJOB_ZK_CLIENT_LOG")
                                   : "";
    zoo_set_debug_level(v == "debug" ? ZOO_LOG_LEVEL_DEBUG
                        : v == "1"   ? ZOO_LOG_LEVEL_WARN
                                     : static_cast<ZooLogLevel>(0));
  });
}

// A multi-op in the C client's form. Owns every buffer the client reads or writes until the
// reply (an asynchronous one lives on the heap until its completion).
struct ZooMulti {
  std::vector<ClientOp> ops;
  std::vector<std::vector<char>> bufs;  // created paths (sequential nodes get a suffix)
  std::vector<Stat> stats;
  std::vector<zoo_op_t> zops;
  std::vector<zoo_op_result_t> results;

  ZooMulti(std::vector<ClientOp> in, const ACL_vector* acl) : ops(std::move(in)) {
    const size_t n = ops.size();
    bufs.resize(n);
    stats.resize(n);
    zops.resize(n);
    results.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const ClientOp& op = ops[i];
      switch (op.type) {
        case ClientOp::Type::kCheck:
          zoo_check_op_init(&zops[i], op.path.c_str(), op.version);
          break;
        case ClientOp::Type::kCreate:
          bufs[i].assign(std::max<size_t>(512, op.path.size() + 64), '\0');
          zoo_create_op_init(&zops[i], op.path.c_str(), op.value.data(),
                             static_cast<int>(op.value.size()), acl, FlagsOf(op.mode),
                             bufs[i].data(), static_cast<int>(bufs[i].size()));
          break;
        case ClientOp::Type::kSet:
          zoo_set_op_init(&zops[i], op.path.c_str(), op.value.data(),
                          static_cast<int>(op.value.size()), op.version,
                          op.want_stat ? &stats[i] : nullptr);
          break;
        case ClientOp::Type::kDelete:
          zoo_delete_op_init(&zops[i], op.path.c_str(), op.version);
          break;
      }
    }
  }

  // What the client filled in, after its answer.
  std::vector<ClientOpResult> Results() const {
    std::vector<ClientOpResult> out(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      out[i].code = CodeOf(results[i].err);
      if (ops[i].type == ClientOp::Type::kCreate && results[i].err == ZOK) {
        out[i].path = bufs[i].data();
      }
      if (ops[i].want_stat) out[i].stat = StatOf(&stats[i]);
    }
    return out;
  }
};

}  // namespace

// ---- calls --------------------------------------------------------------------------

struct ZooKeeperClient::DataCall final : Call {
  DataDone done;
  void Fail(int rc) override { done(CodeOf(rc), {}, NodeStat{}); }
  static void Completion(int rc, const char* value, int len, const Stat* stat, const void* data) {
    auto* c = static_cast<DataCall*>(const_cast<void*>(data));
    if (!c->self->Settle(c)) return;
    std::unique_ptr<DataCall> owned(c);
    c->done(CodeOf(rc),
            rc == ZOK && value != nullptr && len > 0
                ? std::string_view(value, static_cast<size_t>(len))
                : std::string_view(),
            StatOf(rc == ZOK ? stat : nullptr));
  }
};

struct ZooKeeperClient::ChildrenCall final : Call {
  ChildrenDone done;
  void Fail(int rc) override { done(CodeOf(rc), {}); }
  static void Completion(int rc, const String_vector* sv, const void* data) {
    auto* c = static_cast<ChildrenCall*>(const_cast<void*>(data));
    if (!c->self->Settle(c)) return;
    std::unique_ptr<ChildrenCall> owned(c);
    std::vector<std::string> children;
    if (rc == ZOK && sv != nullptr) {
      children.reserve(static_cast<size_t>(sv->count));
      for (int i = 0; i < sv->count; ++i) children.emplace_back(sv->data[i]);
    }
    c->done(CodeOf(rc), std::move(children));
  }
};

struct ZooKeeperClient::StatCall final : Call {
  StatDone done;
  void Fail(int rc) override { done(CodeOf(rc), NodeStat{}); }
  static void Completion(int rc, const Stat* stat, const void* data) {
    auto* c = static_cast<StatCall*>(const_cast<void*>(data));
    if (!c->self->Settle(c)) return;
    std::unique_ptr<StatCall> owned(c);
    c->done(CodeOf(rc), StatOf(rc == ZOK ? stat : nullptr));
  }
};

struct ZooKeeperClient::CreateCall final : Call {
  CreateDone done;
  void Fail(int rc) override { done(CodeOf(rc), {}); }
  static void Completion(int rc, const char* created, const void* data) {
    auto* c = static_cast<CreateCall*>(const_cast<void*>(data));
    if (!c->self->Settle(c)) return;
    std::unique_ptr<CreateCall> owned(c);
    c->done(CodeOf(rc), rc == ZOK && created != nullptr ? created : "");
  }
};

struct ZooKeeperClient::VoidCall final : Call {
  Done done;
  void Fail(int rc) override { done(CodeOf(rc)); }
  static void Completion(int rc, const void* data) {
    auto* c = static_cast<VoidCall*>(const_cast<void*>(data));
    if (!c->self->Settle(c)) return;
    std::unique_ptr<VoidCall> owned(c);
    c->done(CodeOf(rc));
  }
};

struct ZooKeeperClient::MultiCall final : Call {
  std::unique_ptr<ZooMulti> multi;
  MultiDone done;
  void Fail(int rc) override { done(CodeOf(rc), std::vector<ClientOpResult>(multi->ops.size())); }
  static void Completion(int rc, const void* data) {
    auto* c = static_cast<MultiCall*>(const_cast<void*>(data));
    if (!c->self->Settle(c)) return;
    std::unique_ptr<MultiCall> owned(c);
    c->done(CodeOf(rc), c->multi->Results());
  }
};

// ---- the session ---------------------------------------------------------------------

ZooKeeperClient::ZooKeeperClient(RegistryUrl url) : url_(std::move(url)) { QuietClientLog(); }

ZooKeeperClient::~ZooKeeperClient() { Close(); }

namespace {
const ACL_vector* AclFor(const RegistryUrl& url) {
  return url.digest.empty() ? &ZOO_OPEN_ACL_UNSAFE : &ZOO_CREATOR_ALL_ACL;
}
}  // namespace

zhandle_t* ZooKeeperClient::Open(SessionContext* ctx) {
  // The C client starts its two threads (its I/O and its event thread) without naming them:
  // they inherit the caller's name, so the caller takes the I/O thread's for the call (the
  // event thread names itself at its first event, GlobalWatcher).
  const std::string caller = infra::ThisThreadName();
  infra::NameThisThread("ej-zk-io");
  zhandle_t* zh = zookeeper_init(url_.servers.c_str(), &GlobalWatcher, url_.session_timeout_ms,
                                 nullptr, ctx, 0);
  const int init_errno = errno;  // Connect reports it
  infra::NameThisThread(caller);
  errno = init_errno;
  ResolveOnlyOnReconnect(zh);
  return zh;
}

Status ZooKeeperClient::Connect() {
  {
    MutexLock lock(&state_mu_);
    if (connected_) return Status::Ok();
    closing_ = false;
  }
  zhandle_t* zh = Open(NewSessionContext());
  if (zh == nullptr) {
    return Status(StatusCode::kUnavailable, fmt::format("zookeeper {}: cannot create a client: {}",
                                                        url_.servers, strerror(errno)));
  }
  {
    WriterMutexLock lock(&handle_mu_);
    zh_ = zh;
  }
  std::future<int> auth;
  if (!url_.digest.empty()) {
    auto done = std::make_shared<std::promise<int>>();
    auth = done->get_future();
    auto* ctx = new std::shared_ptr<std::promise<int>>(done);
    int rc = zoo_add_auth(
        zh, "digest", url_.digest.c_str(), static_cast<int>(url_.digest.size()),
        [](int result, const void* data) {
          auto* p = static_cast<std::shared_ptr<std::promise<int>>*>(const_cast<void*>(data));
          (*p)->set_value(result);
          delete p;
        },
        ctx);
    if (rc != ZOK) delete ctx;
  }
  MutexLock lock(&state_mu_);
  const auto connect_deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(url_.connection_timeout_ms);
  while (!connected_ && !closing_ && state_cv_.WaitUntil(connect_deadline)) {
  }
  if (!connected_) {
    lock.Unlock();
    Close();
    return Status(StatusCode::kUnavailable,
                  fmt::format("zookeeper {}: no server answered within {} ms", url_.servers,
                              url_.connection_timeout_ms));
  }
  lock.Unlock();
  if (auth.valid()) {
    int rc = auth.wait_for(std::chrono::milliseconds(url_.connection_timeout_ms)) ==
                     std::future_status::ready
                 ? auth.get()
                 : ZOPERATIONTIMEOUT;
    if (rc != ZOK) {
      Close();
      return Status(
          StatusCode::kAuthFailed,
          fmt::format("zookeeper {}: digest authentication failed: {}", url_.servers, zerror(rc)));
    }
  }
  return Status::Ok();
}

void ZooKeeperClient::Close() {
  {
    MutexLock lock(&state_mu_);
    closing_ = true;
    connected_ = false;
  }
  state_cv_.SignalAll();
  zhandle_t* zh = nullptr;
  {
    WriterMutexLock lock(&handle_mu_);
    std::swap(zh, zh_);
  }
  if (zh != nullptr) zookeeper_close(zh);  // ends the session: ephemeral nodes go now
  AbandonOwed(ZCLOSING);
}

ClientState ZooKeeperClient::state() {
  MutexLock lock(&state_mu_);
  if (closing_) return ClientState::kClosed;
  if (connected_) return ClientState::kConnected;
  if (expired_) return ClientState::kExpired;
  if (suspended_) return ClientState::kSuspended;
  return ClientState::kConnecting;
}

bool ZooKeeperClient::closing() {
  MutexLock lock(&state_mu_);
  return closing_;
}

SessionInfo ZooKeeperClient::session() {
  ReaderMutexLock lock(&handle_mu_);
  SessionInfo out;
  out.epoch = generation_.load();
  if (zh_ == nullptr) return out;
  const clientid_t* id = zoo_client_id(zh_);
  if (id == nullptr) return out;
  out.id = id->client_id;
  out.password.assign(id->passwd, sizeof(id->passwd));
  return out;
}

std::chrono::milliseconds ZooKeeperClient::session_timeout() {
  ReaderMutexLock lock(&handle_mu_);
  const int granted = zh_ == nullptr ? 0 : zoo_recv_timeout(zh_);
  return std::chrono::milliseconds(granted > 0 ? granted : url_.session_timeout_ms);
}

ZooKeeperClient::SessionContext* ZooKeeperClient::NewSessionContext() {
  // A new generation first: from now on the previous handle's events are ignored.
  auto ctx = std::make_unique<SessionContext>(SessionContext{this, ++generation_});
  MutexLock lock(&contexts_mu_);
  contexts_.push_back(std::move(ctx));
  return contexts_.back().get();
}

void ZooKeeperClient::GlobalWatcher(zhandle_t*, int type, int state, const char*, void* ctx) {
  thread_local bool named = false;  // the C client's event thread (see Open)
  if (!named) {
    infra::NameThisThread("ej-zk-events");
    named = true;
  }
  if (type != ZOO_SESSION_EVENT) return;
  auto* session = static_cast<SessionContext*>(ctx);
  if (session->generation != session->self->generation_.load()) return;  // a replaced handle
  session->self->OnSessionEvent(state);
}

void ZooKeeperClient::OnSessionEvent(int state) {
  // On the C client's event thread: never block; the hooks only enqueue.
  MutexLock lock(&state_mu_);
  if (closing_) return;
  const uint64_t epoch = generation_.load();
  if (state == ZOO_CONNECTED_STATE) {
    connected_ = true;
    const bool first = !ever_connected_;
    ever_connected_ = true;
    suspended_ = false;
    expired_ = false;
    if (hooks_.session) hooks_.session({SessionEvent::Type::kConnected, epoch, first});
    lock.Unlock();
    state_cv_.SignalAll();
  } else if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE) {
    connected_ = false;
    if (ever_connected_ && !suspended_) {
      suspended_ = true;
      if (hooks_.session) hooks_.session({SessionEvent::Type::kSuspended, epoch});
    }
  } else if (state == ZOO_EXPIRED_SESSION_STATE) {
    connected_ = false;
    suspended_ = true;
    expired_ = true;
    if (hooks_.session) hooks_.session({SessionEvent::Type::kExpired, epoch});
  }
}

void ZooKeeperClient::ReplaceSession() {
  {
    MutexLock lock(&state_mu_);
    if (closing_) return;
  }
  SessionContext* ctx = NewSessionContext();  // the old handle's events stop counting now
  if (hooks_.session) hooks_.session({SessionEvent::Type::kNewSession, ctx->generation});
  zhandle_t* old = nullptr;
  {
    WriterMutexLock lock(&handle_mu_);
    old = zh_;
    zh_ = nullptr;
  }
  if (old != nullptr) zookeeper_close(old);
  AbandonOwed(ZSESSIONEXPIRED);  // what the old session owed fails
  zhandle_t* zh = Open(ctx);
  if (zh != nullptr && !url_.digest.empty()) {
    zoo_add_auth(zh, "digest", url_.digest.c_str(), static_cast<int>(url_.digest.size()), nullptr,
                 nullptr);
  }
  WriterMutexLock lock(&handle_mu_);
  zh_ = zh;  // its CONNECTED event reports the new session
}

ClientCode ZooKeeperClient::WithRetry(const std::function<ClientCode()>& attempt) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  ClientCode rc = ClientCode::kConnectionLoss;
  for (int n = 0; n <= url_.max_retries; ++n) {
    rc = attempt();
    if (!Retryable(rc) || n == url_.max_retries) return rc;
    // Curator's ExponentialBackoffRetry, but woken early when the connection returns.
    int bound = 1 << std::min(n + 1, 20);
    int sleep_ms = std::min(url_.max_sleep_ms,
                            url_.base_sleep_ms * std::max(1, static_cast<int>(rng() % bound)));
    MutexLock lock(&state_mu_);
    if (closing_) return ClientCode::kClosing;
    const auto wake = std::chrono::steady_clock::now() + std::chrono::milliseconds(sleep_ms);
    while (!connected_ && !closing_ && state_cv_.WaitUntil(wake)) {
    }
    if (closing_) return ClientCode::kClosing;
  }
  return rc;
}

// ---- blocking requests -------------------------------------------------------------------

ClientCode ZooKeeperClient::OnHandle(RequestKind kind, const std::function<int(zhandle_t*)>& op) {
  ReaderMutexLock lock(&handle_mu_);
  if (zh_ == nullptr) return ClientCode::kInvalidState;
  Count(kind);
  return CodeOf(op(zh_));
}

ClientCode ZooKeeperClient::GetSync(const std::string& path, Watcher* watch, std::string* value,
                                    NodeStat* stat) {
  return OnHandle(RequestKind::kGet, [&](zhandle_t* zh) {
    std::vector<char> buf(64 * 1024);
    while (true) {
      int len = static_cast<int>(buf.size());
      Stat s;
      int r = watch != nullptr
                  ? zoo_wget(zh, path.c_str(), &WatcherCall, watch, buf.data(), &len, &s)
                  : zoo_get(zh, path.c_str(), 0, buf.data(), &len, &s);
      if (r != ZOK) return r;
      if (s.dataLength > static_cast<int>(buf.size())) {
        buf.resize(static_cast<size_t>(s.dataLength));
        continue;
      }
      if (value != nullptr) value->assign(buf.data(), len < 0 ? 0 : static_cast<size_t>(len));
      if (stat != nullptr) *stat = StatOf(&s);
      return r;
    }
  });
}

ClientCode ZooKeeperClient::ChildrenSync(const std::string& path, Watcher* watch,
                                         std::vector<std::string>* children) {
  return OnHandle(RequestKind::kChildren, [&](zhandle_t* zh) {
    String_vector sv{0, nullptr};
    int r = watch != nullptr ? zoo_wget_children(zh, path.c_str(), &WatcherCall, watch, &sv)
                             : zoo_get_children(zh, path.c_str(), 0, &sv);
    if (r == ZOK) {
      if (children != nullptr) {
        children->clear();
        for (int i = 0; i < sv.count; ++i) children->emplace_back(sv.data[i]);
      }
      deallocate_String_vector(&sv);
    }
    return r;
  });
}

ClientCode ZooKeeperClient::ExistsSync(const std::string& path, Watcher* watch, NodeStat* stat) {
  return OnHandle(RequestKind::kExists, [&](zhandle_t* zh) {
    Stat s;
    int r = watch != nullptr ? zoo_wexists(zh, path.c_str(), &WatcherCall, watch, &s)
                             : zoo_exists(zh, path.c_str(), 0, &s);
    if (r == ZOK && stat != nullptr) *stat = StatOf(&s);
    return r;
  });
}

ClientCode ZooKeeperClient::CreateSync(const std::string& path, std::string_view value,
                                       CreateMode mode, std::string* created) {
  return OnHandle(RequestKind::kCreate, [&](zhandle_t* zh) {
    std::vector<char> buf(path.size() + 64);
    int r = zoo_create(zh, path.c_str(), value.data(), static_cast<int>(value.size()), AclFor(url_),
                       FlagsOf(mode), buf.data(), static_cast<int>(buf.size()));
    if (r == ZOK && created != nullptr) created->assign(buf.data());
    return r;
  });
}

ClientCode ZooKeeperClient::SetSync(const std::string& path, std::string_view value,
                                    int32_t version, NodeStat* stat, uint64_t only_in_epoch) {
  ReaderMutexLock lock(&handle_mu_);
  if (zh_ == nullptr) return ClientCode::kInvalidState;
  // Checked under the same hold as the send: the handle cannot be replaced in between.
  if (only_in_epoch != 0 && only_in_epoch != generation_.load()) return ClientCode::kSessionMoved;
  Count(RequestKind::kSet);
  Stat s;
  const int r =
      zoo_set2(zh_, path.c_str(), value.data(), static_cast<int>(value.size()), version, &s);
  if (r == ZOK && stat != nullptr) *stat = StatOf(&s);
  return CodeOf(r);
}

ClientCode ZooKeeperClient::DeleteSync(const std::string& path, int32_t version) {
  return OnHandle(RequestKind::kDelete,
                  [&](zhandle_t* zh) { return zoo_delete(zh, path.c_str(), version); });
}

ClientCode ZooKeeperClient::MultiSync(const std::vector<ClientOp>& ops,
                                      std::vector<ClientOpResult>* results) {
  ZooMulti m(ops, AclFor(url_));
  ClientCode rc = OnHandle(RequestKind::kMulti, [&](zhandle_t* zh) {
    // Never on a handle whose session is over (Unrecoverable): ZINVALIDSTATE then, which
    // callers retry on the next session.
    return Unrecoverable(zh)
               ? ZINVALIDSTATE
               : zoo_multi(zh, static_cast<int>(m.zops.size()), m.zops.data(), m.results.data());
  });
  if (results != nullptr) {
    *results = m.Results();
    if (rc == ClientCode::kInvalidState) {
      for (auto& r : *results) r.code = ClientCode::kNotRun;
    }
  }
  return rc;
}

// ---- asynchronous requests ----------------------------------------------------------------

void ZooKeeperClient::SendOwed(RequestKind kind, Call* call,
                               const std::function<int(zhandle_t*)>& send) {
  call->self = this;
  int rc;
  bool owed_it = false;
  {
    // Owed and sent under one hold: the handle cannot be replaced in between, so only the
    // close of the handle this request goes out on can abandon it (issue 18: owed before a
    // replacement and sent after it, a request was answered by the replacement, freed, then
    // sent from freed memory on the new session, and its reply written into it).
    ReaderMutexLock lock(&handle_mu_);
    if (zh_ == nullptr) {
      rc = ZINVALIDSTATE;
    } else {
      {
        MutexLock owed(&owed_mu_);
        owed_.insert(call);
      }
      owed_it = true;
      Count(kind);
      rc = send(zh_);
      if (rc == ZOK) return;  // the completion (or AbandonOwed) answers it; it may be gone
    }
  }
  // Not sent: no completion will come. Settle, in case a replacement abandoned (answered)
  // it meanwhile; a request never owed is answered here.
  if (owed_it && !Settle(call)) return;
  std::unique_ptr<Call> owned(call);
  call->Fail(rc);
}

bool ZooKeeperClient::Settle(Call* call) {
  {
    MutexLock lock(&owed_mu_);
    if (owed_.erase(call) != 0) return true;
  }
  MutexLock paid(&abandon_mu_);  // AbandonOwed has it: let it finish
  return false;
}

void ZooKeeperClient::AbandonOwed(int rc) {
  MutexLock paying(&abandon_mu_);
  decltype(owed_) owed;
  {
    MutexLock lock(&owed_mu_);
    owed.swap(owed_);
  }
  // Outside owed_mu_: an abandoned write batch sends the next one, which owes again.
  for (Call* call : owed) {
    std::unique_ptr<Call> owned(call);
    call->Fail(rc);
  }
}

void ZooKeeperClient::WatcherCall(zhandle_t*, int type, int state, const char* path, void* ctx) {
  static_cast<Watcher*>(ctx)->OnWatch(
      {WatchTypeOf(type), StateOf(state), path != nullptr ? std::string_view(path) : ""});
}

void ZooKeeperClient::Get(const std::string& path, Watcher* watch, DataDone done) {
  auto* call = new DataCall;
  call->done = std::move(done);
  SendOwed(RequestKind::kGet, call, [&](zhandle_t* zh) {
    return watch != nullptr
               ? zoo_awget(zh, path.c_str(), &WatcherCall, watch, &DataCall::Completion, call)
               : zoo_aget(zh, path.c_str(), 0, &DataCall::Completion, call);
  });
}

void ZooKeeperClient::Children(const std::string& path, Watcher* watch, ChildrenDone done) {
  auto* call = new ChildrenCall;
  call->done = std::move(done);
  SendOwed(RequestKind::kChildren, call, [&](zhandle_t* zh) {
    return watch != nullptr
               ? zoo_awget_children(zh, path.c_str(), &WatcherCall, watch,
                                    &ChildrenCall::Completion, call)
               : zoo_aget_children(zh, path.c_str(), 0, &ChildrenCall::Completion, call);
  });
}

void ZooKeeperClient::Exists(const std::string& path, Watcher* watch, StatDone done) {
  auto* call = new StatCall;
  call->done = std::move(done);
  SendOwed(RequestKind::kExists, call, [&](zhandle_t* zh) {
    return watch != nullptr
               ? zoo_awexists(zh, path.c_str(), &WatcherCall, watch, &StatCall::Completion, call)
               : zoo_aexists(zh, path.c_str(), 0, &StatCall::Completion, call);
  });
}

void ZooKeeperClient::Create(const std::string& path, std::string_view value, CreateMode mode,
                             CreateDone done) {
  auto* call = new CreateCall;
  call->done = std::move(done);
  SendOwed(RequestKind::kCreate, call, [&](zhandle_t* zh) {
    return zoo_acreate(zh, path.c_str(), value.data(), static_cast<int>(value.size()), AclFor(url_),
                       FlagsOf(mode), &CreateCall::Completion, call);
  });
}

void ZooKeeperClient::Set(const std::string& path, std::string_view value, int32_t version,
                          StatDone done) {
  auto* call = new StatCall;
  call->done = std::move(done);
  SendOwed(RequestKind::kSet, call, [&](zhandle_t* zh) {
    return zoo_aset(zh, path.c_str(), value.data(), static_cast<int>(value.size()), version,
                    &StatCall::Completion, call);
  });
}

void ZooKeeperClient::Delete(const std::string& path, int32_t version, Done done) {
  auto* call = new VoidCall;
  call->done = std::move(done);
  SendOwed(RequestKind::kDelete, call, [&](zhandle_t* zh) {
    return zoo_adelete(zh, path.c_str(), version, &VoidCall::Completion, call);
  });
}

void ZooKeeperClient::Multi(std::vector<ClientOp> ops, MultiDone done) {
  auto* call = new MultiCall;
  call->multi = std::make_unique<ZooMulti>(std::move(ops), AclFor(url_));
  call->done = std::move(done);
  ZooMulti* m = call->multi.get();
  SendOwed(RequestKind::kMulti, call, [&](zhandle_t* zh) {
    // Never on a handle whose session is over (Unrecoverable, above).
    return Unrecoverable(zh) ? ZINVALIDSTATE
                             : zoo_amulti(zh, static_cast<int>(m->zops.size()), m->zops.data(),
                                          m->results.data(), &MultiCall::Completion, call);
  });
}

}  // namespace elasticjob::reg
