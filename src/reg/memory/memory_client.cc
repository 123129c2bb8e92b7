#include "reg/memory/memory_client.h"

#include <fmt/format.h>

#include <algorithm>

#include "infra/thread_name.h"

namespace elasticjob::reg {
namespace {

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool Sequential(CreateMode mode) {
  return mode == CreateMode::kPersistentSequential || mode == CreateMode::kEphemeralSequential;
}

bool Ephemeral(CreateMode mode) {
  return mode == CreateMode::kEphemeral || mode == CreateMode::kEphemeralSequential;
}

// ZooKeeper's PathUtils.validatePath: absolute, no empty, "." or ".." segment, no trailing
// slash (but a sequential node's name may end in one: the suffix follows it).
bool ValidPath(const std::string& path, bool sequential = false) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() == 1) return true;
  if (path.back() == '/' && !sequential) return false;
  if (path.find('\0') != std::string::npos) return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view segment(path.data() + start, end - start);
    const bool last = end == path.size();
    if ((segment.empty() && !(last && sequential)) || segment == "." || segment == "..") {
      return false;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

// ---- the server ------------------------------------------------------------------------

MemoryServer::MemoryServer(Clock& clock, std::chrono::milliseconds container_check)
    : clock_(clock), container_check_(container_check) {
  nodes_["/"] = Node{};
  if (container_check_.count() > 0) {
    next_reap_.store(
        (std::chrono::steady_clock::now() + container_check_).time_since_epoch().count());
  }
}

std::chrono::steady_clock::time_point MemoryServer::ReapWhenDue(
    std::chrono::steady_clock::time_point now) {
  using Steady = std::chrono::steady_clock;
  if (container_check_.count() <= 0) return Steady::time_point::max();
  Steady::rep due = next_reap_.load(std::memory_order_acquire);
  if (now.time_since_epoch().count() < due) return Steady::time_point(Steady::duration(due));
  const Steady::rep next = (now + container_check_).time_since_epoch().count();
  if (next_reap_.compare_exchange_strong(due, next, std::memory_order_acq_rel)) {
    ReapContainers();
    return Steady::time_point(Steady::duration(next));
  }
  return Steady::time_point(Steady::duration(due));  // another thread took it: `due` is its next
}

std::shared_ptr<MemoryServer> MemoryServer::Shared(const std::string& name) {
  static Mutex* mu = new Mutex;
  static auto* servers = new std::map<std::string, std::weak_ptr<MemoryServer>>;
  MutexLock lock(&*mu);
  auto server = (*servers)[name].lock();
  if (!server) {
    server = std::make_shared<MemoryServer>();
    (*servers)[name] = server;
  }
  return server;
}

MemoryServer::~MemoryServer() = default;

int MemoryServer::ReapContainers() {
  MutexLock lock(&mu_);
  std::vector<std::string> candidates;  // collected first, as ZooKeeper's pass does
  for (const std::string& path : containers_) {
    const Node& node = nodes_.at(path);
    if (node.children.empty() && node.stat.cversion > 0) candidates.push_back(path);
  }
  std::vector<Trigger> triggers;
  for (const std::string& path : candidates) {
    Txn txn;  // a write of the server's own (ZooKeeper's deleteContainer request)
    txn.zxid = ++zxid_;
    txn.now_ms = NowMs();
    if (DeleteLocked(path, -1, &txn) != ClientCode::kOk) continue;
    triggers.insert(triggers.end(), txn.triggers.begin(), txn.triggers.end());
  }
  Publish(triggers);
  return static_cast<int>(candidates.size());
}

int64_t MemoryServer::last_zxid() {
  MutexLock lock(&mu_);
  return zxid_;
}

size_t MemoryServer::open_sessions() {
  MutexLock lock(&mu_);
  return sessions_.size();
}

int64_t MemoryServer::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
      .count();
}

int64_t MemoryServer::OpenSession(MemoryClient* client) {
  const int64_t id = next_session_++;
  sessions_.emplace(id, Session{client, {}, {}});
  return id;
}

void MemoryServer::CloseSession(int64_t id, std::vector<Watcher*>* watchers) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  if (watchers != nullptr) {
    std::set<Watcher*> seen;
    for (const auto* table : {&it->second.data, &it->second.child}) {
      for (const auto& [path, set] : *table) {
        for (Watcher* w : set) {
          if (seen.insert(w).second) watchers->push_back(w);
        }
      }
    }
  }
  sessions_.erase(it);
  auto index = ephemerals_.find(id);
  if (index == ephemerals_.end()) return;
  std::vector<std::string> owned(index->second.begin(), index->second.end());
  std::sort(owned.begin(), owned.end());  // the deletes' events in path order
  // One transaction, as ZooKeeper's closeSession: its deletes share a zxid.
  Txn txn;
  txn.zxid = ++zxid_;
  txn.now_ms = NowMs();
  for (const std::string& path : owned) (void)DeleteLocked(path, -1, &txn);  // leaves
  Publish(txn.triggers);
}

ClientCode MemoryServer::GetLocked(int64_t id, const std::string& path, Watcher* watch,
                                   std::string* value, NodeStat* stat) {
  auto session = sessions_.find(id);
  if (session == sessions_.end()) return ClientCode::kSessionExpired;
  if (!ValidPath(path)) return ClientCode::kOther;
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return ClientCode::kNoNode;  // no watch set
  if (watch != nullptr) session->second.data[path].insert(watch);
  if (value != nullptr) *value = it->second.value;
  if (stat != nullptr) *stat = it->second.stat;
  return ClientCode::kOk;
}

ClientCode MemoryServer::ChildrenLocked(int64_t id, const std::string& path, Watcher* watch,
                                        std::vector<std::string>* children) {
  auto session = sessions_.find(id);
  if (session == sessions_.end()) return ClientCode::kSessionExpired;
  if (!ValidPath(path)) return ClientCode::kOther;
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return ClientCode::kNoNode;  // no watch set
  if (watch != nullptr) session->second.child[path].insert(watch);
  if (children != nullptr) children->assign(it->second.children.begin(), it->second.children.end());
  return ClientCode::kOk;
}

ClientCode MemoryServer::ExistsLocked(int64_t id, const std::string& path, Watcher* watch,
                                      NodeStat* stat) {
  auto session = sessions_.find(id);
  if (session == sessions_.end()) return ClientCode::kSessionExpired;
  if (!ValidPath(path)) return ClientCode::kOther;
  // Set either way: on a missing node it waits for its creation.
  if (watch != nullptr) session->second.data[path].insert(watch);
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return ClientCode::kNoNode;
  if (stat != nullptr) *stat = it->second.stat;
  return ClientCode::kOk;
}

ClientCode MemoryServer::WriteLocked(int64_t id, const std::vector<ClientOp>& ops,
                                     std::vector<ClientOpResult>* results) {
  results->assign(ops.size(), ClientOpResult{});
  if (sessions_.count(id) == 0) return ClientCode::kSessionExpired;
  if (ops.empty()) return ClientCode::kOk;
  Txn txn;
  txn.zxid = zxid_ + 1;
  txn.now_ms = NowMs();
  for (size_t i = 0; i < ops.size(); ++i) {
    ClientOpResult& result = (*results)[i];
    const ClientCode rc = ApplyLocked(id, ops[i], &txn, &result);
    if (rc != ClientCode::kOk) {
      // All or nothing, answered as ZooKeeper answers a failed multi-op: the steps before
      // the failed one kOk, the failed one its code, the steps after it kNotRun.
      Undo(&txn);
      for (size_t k = 0; k < ops.size(); ++k) {
        (*results)[k] = ClientOpResult{};
        (*results)[k].code = k < i ? ClientCode::kOk : k == i ? rc : ClientCode::kNotRun;
      }
      return rc;
    }
    result.code = ClientCode::kOk;
  }
  zxid_ = txn.zxid;
  Publish(txn.triggers);
  return ClientCode::kOk;
}

ClientCode MemoryServer::ApplyLocked(int64_t id, const ClientOp& op, Txn* txn,
                                     ClientOpResult* result) {
  switch (op.type) {
    case ClientOp::Type::kCheck: {
      if (!ValidPath(op.path)) return ClientCode::kOther;
      auto it = nodes_.find(op.path);
      if (it == nodes_.end()) return ClientCode::kNoNode;
      if (op.version != -1 && op.version != it->second.stat.version) {
        return ClientCode::kBadVersion;
      }
      return ClientCode::kOk;
    }
    case ClientOp::Type::kCreate:
      return CreateLocked(id, op.path, op.value, op.mode, txn, &result->path);
    case ClientOp::Type::kSet:
      return SetLocked(op.path, op.value, op.version, txn, op.want_stat ? &result->stat : nullptr);
    case ClientOp::Type::kDelete:
      return DeleteLocked(op.path, op.version, txn);
  }
  return ClientCode::kOther;
}

ClientCode MemoryServer::CreateLocked(int64_t owner, const std::string& path,
                                      const std::string& value, CreateMode mode, Txn* txn,
                                      std::string* created) {
  if (!ValidPath(path, Sequential(mode))) return ClientCode::kOther;
  if (path == "/") return ClientCode::kNodeExists;
  const std::string parent = Parent(path);
  auto p = nodes_.find(parent);
  if (p == nodes_.end()) return ClientCode::kNoNode;
  if (p->second.stat.ephemeral_owner != 0) return ClientCode::kNoChildrenForEphemerals;
  // ZooKeeper's sequence number is the parent's cversion (children created and deleted).
  const std::string name =
      Sequential(mode) ? path + fmt::format("{:010d}", p->second.stat.cversion) : path;
  if (nodes_.count(name) != 0) return ClientCode::kNodeExists;
  txn->undo.push_back({UndoStep::Kind::kStat, parent, p->second.stat, {}, std::nullopt});
  txn->undo.push_back({UndoStep::Kind::kCreated, name, {}, {}, std::nullopt});
  Node node;
  node.value = value;
  node.container = mode == CreateMode::kContainer;
  node.stat.czxid = node.stat.mzxid = node.stat.pzxid = txn->zxid;
  node.stat.ctime = node.stat.mtime = txn->now_ms;
  node.stat.data_length = static_cast<int32_t>(value.size());
  node.stat.ephemeral_owner = Ephemeral(mode) ? owner : 0;
  Node& up = p->second;  // a reference stays valid across the insertion (a rehash)
  Index(name, node);
  nodes_.emplace(name, std::move(node));
  up.children.insert(Name(name));
  up.stat.cversion++;
  up.stat.num_children = static_cast<int32_t>(up.children.size());
  up.stat.pzxid = txn->zxid;
  txn->triggers.push_back({WatchEvent::Type::kCreated, name});
  txn->triggers.push_back({WatchEvent::Type::kChildren, parent});
  if (created != nullptr) *created = name;
  return ClientCode::kOk;
}

ClientCode MemoryServer::SetLocked(const std::string& path, const std::string& value,
                                   int32_t version, Txn* txn, NodeStat* stat) {
  if (!ValidPath(path)) return ClientCode::kOther;
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return ClientCode::kNoNode;
  if (version != -1 && version != it->second.stat.version) return ClientCode::kBadVersion;
  Node& node = it->second;
  txn->undo.push_back({UndoStep::Kind::kValue, path, node.stat, node.value, std::nullopt});
  node.value = value;
  node.stat.version++;
  node.stat.mzxid = txn->zxid;
  node.stat.mtime = txn->now_ms;
  node.stat.data_length = static_cast<int32_t>(value.size());
  if (stat != nullptr) *stat = node.stat;
  txn->triggers.push_back({WatchEvent::Type::kChanged, path});
  return ClientCode::kOk;
}

ClientCode MemoryServer::DeleteLocked(const std::string& path, int32_t version, Txn* txn) {
  if (!ValidPath(path) || path == "/") return ClientCode::kOther;
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return ClientCode::kNoNode;
  if (version != -1 && version != it->second.stat.version) return ClientCode::kBadVersion;
  if (!it->second.children.empty()) return ClientCode::kNotEmpty;
  const std::string parent = Parent(path);
  Node& up = nodes_.at(parent);
  Unindex(path, it->second);
  txn->undo.push_back({UndoStep::Kind::kDeleted, path, {}, {}, std::move(it->second)});
  txn->undo.push_back({UndoStep::Kind::kStat, parent, up.stat, {}, std::nullopt});
  nodes_.erase(it);
  up.children.erase(Name(path));
  up.stat.cversion++;
  up.stat.num_children = static_cast<int32_t>(up.children.size());
  up.stat.pzxid = txn->zxid;
  txn->triggers.push_back({WatchEvent::Type::kDeleted, path});
  txn->triggers.push_back({WatchEvent::Type::kChildren, parent});
  return ClientCode::kOk;
}

void MemoryServer::Index(const std::string& path, const Node& node) {
  if (node.stat.ephemeral_owner != 0) ephemerals_[node.stat.ephemeral_owner].insert(path);
  if (node.container) containers_.insert(path);
}

void MemoryServer::Unindex(const std::string& path, const Node& node) {
  if (node.stat.ephemeral_owner != 0) {
    auto owned = ephemerals_.find(node.stat.ephemeral_owner);
    if (owned != ephemerals_.end() && owned->second.erase(path) != 0 && owned->second.empty()) {
      ephemerals_.erase(owned);
    }
  }
  if (node.container) containers_.erase(path);
}

void MemoryServer::Undo(Txn* txn) {
  for (auto it = txn->undo.rbegin(); it != txn->undo.rend(); ++it) {
    switch (it->kind) {
      case UndoStep::Kind::kStat:
        nodes_.at(it->path).stat = it->stat;
        break;
      case UndoStep::Kind::kValue: {
        Node& node = nodes_.at(it->path);
        node.value = std::move(it->value);
        node.stat = it->stat;
        break;
      }
      case UndoStep::Kind::kCreated: {
        auto node = nodes_.find(it->path);
        Unindex(it->path, node->second);
        nodes_.erase(node);
        nodes_.at(Parent(it->path)).children.erase(Name(it->path));
        break;
      }
      case UndoStep::Kind::kDeleted:
        Index(it->path, *it->node);
        nodes_.emplace(it->path, std::move(*it->node));
        nodes_.at(Parent(it->path)).children.insert(Name(it->path));
        break;
    }
  }
  txn->undo.clear();
  txn->triggers.clear();
}

void MemoryServer::Publish(const std::vector<Trigger>& triggers) {
  for (const Trigger& t : triggers) {
    for (auto& [id, session] : sessions_) {
      std::set<Watcher*> fired;
      auto take = [&](std::unordered_map<std::string, std::set<Watcher*>>& table) {
        auto it = table.find(t.path);
        if (it == table.end()) return;
        fired.insert(it->second.begin(), it->second.end());
        table.erase(it);
      };
      switch (t.type) {
        case WatchEvent::Type::kCreated:
        case WatchEvent::Type::kChanged:
          take(session.data);
          break;
        case WatchEvent::Type::kDeleted:
          take(session.data);
          take(session.child);
          break;
        case WatchEvent::Type::kChildren:
          take(session.child);
          break;
        default:
          break;
      }
      for (Watcher* w : fired) {
        session.client->PostWatch(id, w, t.type, ClientState::kConnected, t.path);
      }
    }
  }
}

// ---- the client: the session -------------------------------------------------------------

MemoryClient::MemoryClient(std::shared_ptr<MemoryServer> server, RegistryUrl url)
    : server_(std::move(server)), url_(std::move(url)), events_thread_([this] {
        infra::NameThisThread("ej-mem-events");
        RunEvents();
      }) {}

MemoryClient::~MemoryClient() {
  Close();
  {
    MutexLock lock(&events_mu_);
    stop_events_ = true;
  }
  events_cv_.SignalAll();
  events_thread_.join();
}

Status MemoryClient::Connect() {
  uint64_t seq;
  {
    MutexLock lock(&mu_);
    if (session_id_ != 0) return Status::Ok();
    closing_ = false;
    expired_ = false;
    const uint64_t epoch = ++epoch_;
    const bool first = !ever_connected_;
    ever_connected_ = true;
    {
      MutexLock server(&server_->mu_);
      session_id_ = server_->OpenSession(this);
    }
    seq = PostSessionEvent(session_id_, {SessionEvent::Type::kConnected, epoch, first});
  }
  state_cv_.SignalAll();
  if (!OnEventThread()) AwaitDelivered(seq);  // as ZooKeeperClient, whose hook runs first
  return Status::Ok();
}

void MemoryClient::ReplaceSession() {
  uint64_t epoch;
  {
    MutexLock lock(&mu_);
    if (closing_) return;
    epoch = ++epoch_;  // from now on, writes guarded by the old epoch answer kSessionMoved
  }
  if (hooks_.session) hooks_.session({SessionEvent::Type::kNewSession, epoch});
  {
    MutexLock lock(&mu_);
    if (session_id_ != 0) {
      MutexLock server(&server_->mu_);
      server_->CloseSession(session_id_, nullptr);  // its ephemeral nodes go now
      session_id_ = 0;
    }
  }
  Abandon(ClientCode::kSessionExpired);
  {
    MutexLock lock(&mu_);
    if (closing_ || epoch != epoch_) return;  // closed, or replaced again, meanwhile
    expired_ = false;
    const bool first = !ever_connected_;
    ever_connected_ = true;
    {
      MutexLock server(&server_->mu_);
      session_id_ = server_->OpenSession(this);
    }
    PostSessionEvent(session_id_, {SessionEvent::Type::kConnected, epoch, first});
  }
  state_cv_.SignalAll();
}

void MemoryClient::Close() {
  {
    MutexLock lock(&mu_);
    closing_ = true;
    if (session_id_ != 0) {
      MutexLock server(&server_->mu_);
      server_->CloseSession(session_id_, nullptr);  // its ephemeral nodes go now
      session_id_ = 0;
    }
  }
  state_cv_.SignalAll();  // WithRetry's waiters
  Abandon(ClientCode::kClosing);
}

void MemoryClient::Expire() {
  MutexLock lock(&mu_);
  if (session_id_ == 0) return;
  const int64_t id = session_id_;
  {
    MutexLock server(&server_->mu_);
    std::vector<Watcher*> watchers;
    server_->CloseSession(id, &watchers);
    // Queued behind what the session heard before: every Watcher with a watch set hears
    // the expiry (its watches are gone), then the hooks.
    for (Watcher* w : watchers)
      PostWatch(id, w, WatchEvent::Type::kSession, ClientState::kExpired, "");
    PostSessionEvent(id, {SessionEvent::Type::kExpired, epoch_});
  }
  session_id_ = 0;
  expired_ = true;
}

ClientState MemoryClient::state() {
  MutexLock lock(&mu_);
  if (closing_) return ClientState::kClosed;
  if (session_id_ != 0) return ClientState::kConnected;
  if (expired_) return ClientState::kExpired;
  return ClientState::kConnecting;
}

bool MemoryClient::closing() {
  MutexLock lock(&mu_);
  return closing_;
}

uint64_t MemoryClient::session_epoch() { return epoch_.load(std::memory_order_acquire); }

SessionInfo MemoryClient::session() {
  MutexLock lock(&mu_);
  SessionInfo out;
  out.epoch = epoch_;
  out.id = session_id_;
  if (session_id_ != 0) out.password = fmt::format("{:016x}", session_id_);  // 16 bytes
  return out;
}

std::chrono::milliseconds MemoryClient::session_timeout() {
  return std::chrono::milliseconds(url_.session_timeout_ms);
}

ClientCode MemoryClient::WithRetry(const std::function<ClientCode()>& attempt) {
  ClientCode rc = ClientCode::kConnectionLoss;
  for (int n = 0; n <= url_.max_retries; ++n) {
    rc = attempt();
    if (!Retryable(rc) || n == url_.max_retries) return rc;
    // Curator's backoff without its randomness, woken early by a new session.
    const int64_t sleep_ms =
        std::min<int64_t>(url_.max_sleep_ms, int64_t{url_.base_sleep_ms} << std::min(n, 20));
    MutexLock lock(&mu_);
    if (closing_) return ClientCode::kClosing;
    const auto wake = std::chrono::steady_clock::now() + std::chrono::milliseconds(sleep_ms);
    while (session_id_ == 0 && !closing_ && state_cv_.WaitUntil(wake)) {
    }
    if (closing_) return ClientCode::kClosing;
  }
  return rc;
}

// ---- the client: requests ----------------------------------------------------------------

bool MemoryClient::Counted(RequestKind kind) {
  if (session_id_ == 0) return false;
  if (hooks_.request) hooks_.request(kind);
  return true;
}

ClientCode MemoryClient::OnServer(RequestKind kind, const std::function<ClientCode(int64_t)>& apply,
                                  uint64_t only_in_epoch) {
  MutexLock lock(&mu_);
  if (session_id_ == 0) return ClientCode::kInvalidState;
  if (only_in_epoch != 0 && only_in_epoch != epoch_) return ClientCode::kSessionMoved;
  if (!Counted(kind)) return ClientCode::kInvalidState;
  MutexLock server(&server_->mu_);
  return apply(session_id_);
}

void MemoryClient::OnServerAsync(RequestKind kind,
                                 const std::function<std::function<void()>(int64_t)>& apply,
                                 std::function<void(ClientCode)> fail) {
  MutexLock lock(&mu_);
  if (!Counted(kind)) {
    lock.Unlock();
    fail(ClientCode::kInvalidState);  // not handed over: answered before the call returns
    return;
  }
  // The server's lock is still held when the answer is queued: behind the watch events the
  // request fired, ahead of any later write's.
  MutexLock server(&server_->mu_);
  Post(session_id_, apply(session_id_), std::move(fail));
}

namespace {

ClientOp CreateOp(const std::string& path, std::string_view value, CreateMode mode) {
  ClientOp op;
  op.type = ClientOp::Type::kCreate;
  op.path = path;
  op.value = std::string(value);
  op.mode = mode;
  return op;
}

ClientOp SetOp(const std::string& path, std::string_view value, int32_t version) {
  ClientOp op;
  op.type = ClientOp::Type::kSet;
  op.path = path;
  op.value = std::string(value);
  op.version = version;
  op.want_stat = true;
  return op;
}

ClientOp DeleteOp(const std::string& path, int32_t version) {
  ClientOp op;
  op.type = ClientOp::Type::kDelete;
  op.path = path;
  op.version = version;
  return op;
}

}  // namespace

// In the lambdas below the server's lock is held (OnServer, OnServerAsync): AssertHeld
// tells the analysis, which does not follow a lock into a lambda.

ClientCode MemoryClient::GetSync(const std::string& path, Watcher* watch, std::string* value,
                                 NodeStat* stat) {
  return OnServer(RequestKind::kGet, [&](int64_t id) {
    server_->mu_.AssertHeld();
    return server_->GetLocked(id, path, watch, value, stat);
  });
}

ClientCode MemoryClient::ChildrenSync(const std::string& path, Watcher* watch,
                                      std::vector<std::string>* children) {
  return OnServer(RequestKind::kChildren, [&](int64_t id) {
    server_->mu_.AssertHeld();
    return server_->ChildrenLocked(id, path, watch, children);
  });
}

ClientCode MemoryClient::ExistsSync(const std::string& path, Watcher* watch, NodeStat* stat) {
  return OnServer(RequestKind::kExists, [&](int64_t id) {
    server_->mu_.AssertHeld();
    return server_->ExistsLocked(id, path, watch, stat);
  });
}

ClientCode MemoryClient::CreateSync(const std::string& path, std::string_view value,
                                    CreateMode mode, std::string* created) {
  return OnServer(RequestKind::kCreate, [&](int64_t id) {
    server_->mu_.AssertHeld();
    std::vector<ClientOpResult> results;
    const ClientCode rc = server_->WriteLocked(id, {CreateOp(path, value, mode)}, &results);
    if (rc == ClientCode::kOk && created != nullptr) *created = results[0].path;
    return rc;
  });
}

ClientCode MemoryClient::SetSync(const std::string& path, std::string_view value, int32_t version,
                                 NodeStat* stat, uint64_t only_in_epoch) {
  return OnServer(
      RequestKind::kSet,
      [&](int64_t id) {
        server_->mu_.AssertHeld();
        std::vector<ClientOpResult> results;
        const ClientCode rc = server_->WriteLocked(id, {SetOp(path, value, version)}, &results);
        if (rc == ClientCode::kOk && stat != nullptr) *stat = results[0].stat;
        return rc;
      },
      only_in_epoch);
}

ClientCode MemoryClient::DeleteSync(const std::string& path, int32_t version) {
  return OnServer(RequestKind::kDelete, [&](int64_t id) {
    server_->mu_.AssertHeld();
    std::vector<ClientOpResult> results;
    return server_->WriteLocked(id, {DeleteOp(path, version)}, &results);
  });
}

ClientCode MemoryClient::MultiSync(const std::vector<ClientOp>& ops,
                                   std::vector<ClientOpResult>* results) {
  std::vector<ClientOpResult> out(ops.size());  // kNotRun, unless the server answers
  const ClientCode rc = OnServer(RequestKind::kMulti, [&](int64_t id) {
    server_->mu_.AssertHeld();
    return server_->WriteLocked(id, ops, &out);
  });
  if (results != nullptr) *results = std::move(out);
  return rc;
}

void MemoryClient::Get(const std::string& path, Watcher* watch, DataDone done) {
  auto d = std::make_shared<DataDone>(std::move(done));
  OnServerAsync(
      RequestKind::kGet,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        std::string value;
        NodeStat stat;
        const ClientCode rc = server_->GetLocked(id, path, watch, &value, &stat);
        return [d, rc, value = std::move(value), stat] { (*d)(rc, value, stat); };
      },
      [d](ClientCode rc) { (*d)(rc, {}, NodeStat{}); });
}

void MemoryClient::Children(const std::string& path, Watcher* watch, ChildrenDone done) {
  auto d = std::make_shared<ChildrenDone>(std::move(done));
  OnServerAsync(
      RequestKind::kChildren,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        std::vector<std::string> children;
        const ClientCode rc = server_->ChildrenLocked(id, path, watch, &children);
        return [d, rc, children = std::move(children)]() mutable { (*d)(rc, std::move(children)); };
      },
      [d](ClientCode rc) { (*d)(rc, {}); });
}

void MemoryClient::Exists(const std::string& path, Watcher* watch, StatDone done) {
  auto d = std::make_shared<StatDone>(std::move(done));
  OnServerAsync(
      RequestKind::kExists,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        NodeStat stat;
        const ClientCode rc = server_->ExistsLocked(id, path, watch, &stat);
        return [d, rc, stat] { (*d)(rc, stat); };
      },
      [d](ClientCode rc) { (*d)(rc, NodeStat{}); });
}

void MemoryClient::Create(const std::string& path, std::string_view value, CreateMode mode,
                          CreateDone done) {
  auto d = std::make_shared<CreateDone>(std::move(done));
  OnServerAsync(
      RequestKind::kCreate,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        std::vector<ClientOpResult> results;
        const ClientCode rc = server_->WriteLocked(id, {CreateOp(path, value, mode)}, &results);
        return [d, rc, created = std::move(results[0].path)] { (*d)(rc, created); };
      },
      [d](ClientCode rc) { (*d)(rc, {}); });
}

void MemoryClient::Set(const std::string& path, std::string_view value, int32_t version,
                       StatDone done) {
  auto d = std::make_shared<StatDone>(std::move(done));
  OnServerAsync(
      RequestKind::kSet,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        std::vector<ClientOpResult> results;
        const ClientCode rc = server_->WriteLocked(id, {SetOp(path, value, version)}, &results);
        return [d, rc, stat = results[0].stat] { (*d)(rc, stat); };
      },
      [d](ClientCode rc) { (*d)(rc, NodeStat{}); });
}

void MemoryClient::Delete(const std::string& path, int32_t version, Done done) {
  auto d = std::make_shared<Done>(std::move(done));
  OnServerAsync(
      RequestKind::kDelete,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        std::vector<ClientOpResult> results;
        const ClientCode rc = server_->WriteLocked(id, {DeleteOp(path, version)}, &results);
        return [d, rc] { (*d)(rc); };
      },
      [d](ClientCode rc) { (*d)(rc); });
}

void MemoryClient::Multi(std::vector<ClientOp> ops, MultiDone done) {
  auto d = std::make_shared<MultiDone>(std::move(done));
  const size_t n = ops.size();
  OnServerAsync(
      RequestKind::kMulti,
      [&](int64_t id) -> std::function<void()> {
        server_->mu_.AssertHeld();
        std::vector<ClientOpResult> results;
        const ClientCode rc = server_->WriteLocked(id, ops, &results);
        return [d, rc, results = std::move(results)]() mutable { (*d)(rc, std::move(results)); };
      },
      [d, n](ClientCode rc) { (*d)(rc, std::vector<ClientOpResult>(n)); });
}

// ---- the client: the event thread ---------------------------------------------------------

uint64_t MemoryClient::Post(int64_t session, std::function<void()> deliver,
                            std::function<void(ClientCode)> fail) {
  MutexLock lock(&events_mu_);
  const uint64_t seq = ++posted_;
  events_.push_back({session, seq, std::move(deliver), std::move(fail)});
  events_cv_.SignalAll();
  return seq;
}

void MemoryClient::PostWatch(int64_t session, Watcher* watcher, WatchEvent::Type type,
                             ClientState state, const std::string& path) {
  Post(session, [watcher, type, state, path] { watcher->OnWatch({type, state, path}); });
}

uint64_t MemoryClient::PostSessionEvent(int64_t session, SessionEvent event) {
  return Post(session, [this, event] {
    // With the session lock held, as ZooKeeperClient calls it; not for a session closed or
    // replaced meanwhile.
    MutexLock lock(&mu_);
    if (closing_ || event.epoch != epoch_) return;
    if (hooks_.session) hooks_.session(event);
  });
}

void MemoryClient::Abandon(ClientCode rc) {
  std::deque<Event> taken;
  uint64_t in_flight;
  {
    MutexLock lock(&events_mu_);
    taken.swap(events_);
    in_flight = delivering_;
    events_cv_.SignalAll();
  }
  // The delivery in progress ends first: no answer or watch of the closed session runs
  // after this returns, and none runs beside the answers given here.
  if (in_flight != 0 && !OnEventThread()) AwaitDelivered(in_flight);
  for (Event& e : taken) {
    if (e.fail) e.fail(rc);
  }
}

uint64_t MemoryClient::WaitIdleForTesting() {
  MutexLock lock(&events_mu_);
  while (delivering_ != 0 || !events_.empty()) events_cv_.Wait();
  return posted_;
}

void MemoryClient::AwaitDelivered(uint64_t seq) {
  MutexLock lock(&events_mu_);
  while ((delivering_ != 0 && delivering_ <= seq) ||
         (!events_.empty() && events_.front().seq <= seq)) {
    events_cv_.Wait();
  }
}

void MemoryClient::RunEvents() {
  using Steady = std::chrono::steady_clock;
  constexpr Steady::time_point kNever = Steady::time_point::max();
  Steady::time_point reap_at = server_->ReapWhenDue(Steady::now());
  MutexLock lock(&events_mu_);
  while (true) {
    if (events_.empty()) {
      if (stop_events_) return;
      if (reap_at == kNever) {
        events_cv_.Wait();
      } else if (!events_cv_.WaitUntil(reap_at)) {  // the server's reaper pass is due
        lock.Unlock();
        reap_at = server_->ReapWhenDue(Steady::now());
        lock.Lock();
      }
      continue;
    }
    {
      Event e = std::move(events_.front());
      events_.pop_front();
      delivering_ = e.seq;
      lock.Unlock();
      e.deliver();
    }  // what it captured goes here, outside the lock
    // A queue that never empties still lets the reaper's pass run in its time.
    if (reap_at != kNever) {
      const Steady::time_point now = Steady::now();
      if (now >= reap_at) reap_at = server_->ReapWhenDue(now);
    }
    lock.Lock();
    delivering_ = 0;
    events_cv_.SignalAll();
  }
}

}  // namespace elasticjob::reg
