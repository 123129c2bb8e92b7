#include "reg/memory/memory_registry_center.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace elasticjob::reg {
namespace {

std::string Join(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

std::string Leaf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool Under(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

}  // namespace

std::shared_ptr<MemoryStore> MemoryStore::Shared(const std::string& name) {
  static Mutex* mu = new Mutex;
  static auto* stores = new std::map<std::string, std::weak_ptr<MemoryStore>>;
  MutexLock lock(&*mu);
  auto store = (*stores)[name].lock();
  if (!store) {
    store = std::make_shared<MemoryStore>();
    (*stores)[name] = store;
  }
  return store;
}

MemoryStore::MemoryStore(Clock& c) : clock(c) { nodes["/"] = Node{}; }

int64_t MemoryStore::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

void MemoryStore::Publish(const std::vector<Change>& changes,
                          std::vector<std::function<void()>>* fired) {
  for (const Change& c : changes) {
    // The listeners whose root is the changed path or one of its ancestors ("/" included).
    for (size_t end = c.path.size();;) {
      const std::string_view root =
          end == 0 ? std::string_view("/") : std::string_view(c.path).substr(0, end);
      auto [first, last] = tree_listeners.equal_range(std::string(root));
      for (auto it = first; it != last; ++it) {
        const TreeListener& l = it->second;
        if (!PolicyCovers(l.policy, l.root, c.path, l.prefix)) continue;
        l.state->Changed();  // under the store's lock, as the change itself
        auto state = l.state;
        auto cb = l.callback;
        TreeEvent e{c.type, c.path, c.value};
        state->PostIfActive(*l.executor, [state, cb, e] { state->Run([&] { cb(e); }); });
      }
      if (end == 0 || root == "/") break;
      end = c.path.rfind('/', end - 1);
      if (end == std::string::npos) break;
    }
    auto range = exists_watches.equal_range(c.path);
    for (auto it = range.first; it != range.second; ++it) fired->push_back(it->second.second);
    exists_watches.erase(range.first, range.second);
  }
}

void MemoryStore::DeleteNode(const std::string& path, std::vector<Change>* changes) {
  auto it = nodes.find(path);
  if (it == nodes.end()) return;
  changes->push_back({TreeEvent::Type::kDeleted, path, it->second.value});
  nodes.erase(it);
  std::string parent = path.substr(0, std::max<size_t>(1, path.rfind('/')));
  auto p = nodes.find(parent);
  if (p == nodes.end()) return;
  p->second.children.erase(Leaf(path));
  if (p->second.mode == CreateMode::kContainer && p->second.children.empty()) {
    DeleteNode(parent, changes);
  }
}

void MemoryStore::DropSession(int64_t session, std::vector<Change>* changes) {
  std::vector<std::string> owned;
  for (const auto& [path, node] : nodes) {
    if (node.owner == session) owned.push_back(path);
  }
  for (const auto& path : owned) DeleteNode(path, changes);
  // One-shot watches of the session fire with the session event, as ZooKeeper's do.
}

MemoryRegistryCenter::MemoryRegistryCenter(std::shared_ptr<MemoryStore> store,
                                           std::string name_space)
    : store_(std::move(store)), prefix_("/" + name_space) {}

MemoryRegistryCenter::~MemoryRegistryCenter() { Close(); }

std::string MemoryRegistryCenter::Full(std::string_view key) const {
  return key == "/" ? prefix_ : prefix_ + std::string(key);
}

std::string MemoryRegistryCenter::Relative(const std::string& full) const {
  return full.size() == prefix_.size() ? "/" : full.substr(prefix_.size());
}

Status MemoryRegistryCenter::CheckOpen() const {
  return open_ ? Status::Ok()
               : Status(StatusCode::kFailedPrecondition, "registry: not initialised or closed");
}

// Not analysed: it releases a lock the caller took (the analysis cannot follow a scoped lock
// handed in by reference); the callers' scopes end with it released.
void MemoryRegistryCenter::Finish(MutexLock& lock, const std::vector<MemoryStore::Change>& changes)
    ELASTICJOB_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<std::function<void()>> fired;
  store_->Publish(changes, &fired);
  lock.Unlock();
  for (auto& f : fired) f();
}

Status MemoryRegistryCenter::Init() {
  MutexLock lock(&store_->mu);
  if (open_) return Status::Ok();
  session_ = store_->next_session++;
  open_ = true;
  stats()->SetState(SessionState::kConnected);
  std::vector<MemoryStore::Change> changes;
  if (store_->nodes.count(prefix_) == 0) {
    auto r = CreateLocked(prefix_, "", CreateMode::kContainer, true, &changes);
    if (!r.ok()) return r.status();
  }
  Finish(lock, changes);
  NotifyConnectionState(ConnectionState::kConnected);
  return Status::Ok();
}

void MemoryRegistryCenter::Close() {
  MutexLock lock(&store_->mu);
  if (!open_) {
    lock.Unlock();
    MarkClosed();
    return;
  }
  open_ = false;
  std::vector<MemoryStore::Change> changes;
  store_->DropSession(session_, &changes);
  // Cancelled after the store lock is released: Cancel waits for a delivery in progress,
  // which may be calling back into the store.
  std::vector<std::shared_ptr<SubscriptionState>> ended;
  std::erase_if(store_->tree_listeners, [&](const auto& entry) {
    if (entry.second.session != session_) return false;
    ended.push_back(entry.second.state);
    return true;
  });
  for (auto& state : ended) {
    MutexLock post(&state->post_mu);
    state->active = false;  // nothing more is posted once the lock is gone
  }
  Finish(lock, changes);
  for (auto& state : ended) state->Cancel();
  WakeLeaseWaiters();
  MarkClosed();
}

void MemoryRegistryCenter::ExpireSession() {
  {
    MutexLock lock(&store_->mu);
    if (!open_) return;
  }
  // The order a ZooKeeper client reports it in: LOST, then the new session's view (the old
  // session's ephemeral nodes deleted), then RECONNECTED.
  NotifyConnectionState(ConnectionState::kLost);
  MutexLock lock(&store_->mu);
  if (!open_) return;
  std::vector<MemoryStore::Change> changes;
  store_->DropSession(session_, &changes);
  int64_t old = session_;
  session_ = store_->next_session++;
  for (auto& [root, l] : store_->tree_listeners) {
    if (l.session == old) l.session = session_;
  }
  Finish(lock, changes);
  WakeLeaseWaiters();  // their session is over
  NotifyConnectionState(ConnectionState::kReconnected);
}

bool MemoryRegistryCenter::LeaseHeld() { return !lease_lapsed_.load(std::memory_order_acquire); }

bool MemoryRegistryCenter::AwaitLease(std::chrono::steady_clock::time_point deadline) {
  const int64_t session = session_id();
  auto over = [&] {
    MutexLock lock(&store_->mu);
    return !open_ || session_ != session;
  };
  MutexLock lock(&lease_mu_);
  ++lease_waiters_;
  lease_cv_.SignalAll();
  while (lease_lapsed_.load() && !over() && lease_cv_.WaitUntil(deadline)) {
  }
  --lease_waiters_;
  return !lease_lapsed_.load() && !over();
}

void MemoryRegistryCenter::SetLeaseHeldForTesting(bool held) {
  lease_lapsed_ = !held;
  WakeLeaseWaiters();
}

bool MemoryRegistryCenter::WaitLeaseWaitersForTesting(int n, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&lease_mu_);
  while (lease_waiters_ < n && lease_cv_.WaitUntil(deadline)) {
  }
  return lease_waiters_ >= n;
}

void MemoryRegistryCenter::WakeLeaseWaiters() {
  { MutexLock lock(&lease_mu_); }
  lease_cv_.SignalAll();
}

int64_t MemoryRegistryCenter::session_id() { return session_.load(std::memory_order_acquire); }

Result<std::string> MemoryRegistryCenter::GetDirectly(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  auto it = store_->nodes.find(Full(key));
  if (it == store_->nodes.end()) return NotFound(fmt::format("no node {}", key));
  return it->second.value;
}

Result<std::string> MemoryRegistryCenter::Get(std::string_view key) { return GetDirectly(key); }

Result<bool> MemoryRegistryCenter::IsExisted(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  return store_->nodes.count(Full(key)) != 0;
}

Result<std::vector<std::string>> MemoryRegistryCenter::GetChildrenDirectly(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  auto it = store_->nodes.find(Full(key));
  if (it == store_->nodes.end()) return NotFound(fmt::format("no node {}", key));
  return std::vector<std::string>(it->second.children.begin(), it->second.children.end());
}

Result<std::vector<std::string>> MemoryRegistryCenter::GetChildrenKeys(std::string_view key) {
  auto children = GetChildrenDirectly(key);
  if (!children.ok()) return children;
  std::sort(children->begin(), children->end(), std::greater<>());
  return children;
}

Result<int> MemoryRegistryCenter::GetNumChildren(std::string_view key) {
  auto children = GetChildrenDirectly(key);
  if (!children.ok()) return children.status();
  return static_cast<int>(children->size());
}

Result<std::string> MemoryRegistryCenter::CreateLocked(const std::string& full,
                                                       std::string_view value, CreateMode mode,
                                                       bool create_parents,
                                                       std::vector<MemoryStore::Change>* changes) {
  auto& nodes = store_->nodes;
  std::string parent = full.substr(0, std::max<size_t>(1, full.rfind('/')));
  if (nodes.count(parent) == 0) {
    if (!create_parents)
      return NotFound(fmt::format("no node {} (parent of {})", Relative(parent), Relative(full)));
    CreateMode parent_mode =
        mode == CreateMode::kContainer ? CreateMode::kContainer : CreateMode::kPersistent;
    auto r = CreateLocked(parent, "", parent_mode, true, changes);
    if (!r.ok()) return r;
  }
  MemoryStore::Node& p = nodes[parent];
  if (p.owner != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "ephemeral nodes cannot have children: " + Relative(parent));
  }
  std::string path = full;
  if (mode == CreateMode::kPersistentSequential || mode == CreateMode::kEphemeralSequential) {
    path += fmt::format("{:010d}", p.next_sequence);
  }
  if (nodes.count(path) != 0) {
    return Status(StatusCode::kAlreadyExists, fmt::format("node exists {}", Relative(path)));
  }
  ++p.next_sequence;
  MemoryStore::Node n;
  n.value = std::string(value);
  n.mode = mode;
  n.owner = (mode == CreateMode::kEphemeral || mode == CreateMode::kEphemeralSequential)
                ? session_.load()
                : 0;
  n.mtime_ms = store_->NowMs();
  nodes[path] = std::move(n);
  nodes[parent].children.insert(Leaf(path));
  changes->push_back({TreeEvent::Type::kAdded, path, std::string(value)});
  return path;
}

Status MemoryRegistryCenter::Persist(std::string_view key, std::string_view value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  std::vector<MemoryStore::Change> changes;
  auto it = store_->nodes.find(Full(key));
  if (it != store_->nodes.end()) {
    it->second.value = std::string(value);
    it->second.mtime_ms = store_->NowMs();
    changes.push_back({TreeEvent::Type::kUpdated, it->first, std::string(value)});
  } else {
    auto r = CreateLocked(Full(key), value, CreateMode::kPersistent, true, &changes);
    if (!r.ok()) return r.status();
  }
  Finish(lock, changes);
  return Status::Ok();
}

Status MemoryRegistryCenter::Update(std::string_view key, std::string_view value) {
  return ExecuteInTransaction({TransactionOp::CheckExists(std::string(key)),
                               TransactionOp::SetData(std::string(key), std::string(value))});
}

Status MemoryRegistryCenter::PersistEphemeral(std::string_view key, std::string_view value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  std::vector<MemoryStore::Change> changes;
  auto it = store_->nodes.find(Full(key));
  if (it != store_->nodes.end() && it->second.mode == CreateMode::kEphemeral &&
      it->second.owner == session_) {
    // Ours: the value changes in place, the node never goes (as the ZooKeeper registry).
    it->second.value = std::string(value);
    it->second.mtime_ms = store_->NowMs();
    changes.push_back({TreeEvent::Type::kUpdated, it->first, std::string(value)});
    Finish(lock, changes);
    return Status::Ok();
  }
  if (it != store_->nodes.end()) {
    if (!it->second.children.empty()) {
      return InvalidArgument(fmt::format("key {}: has children, cannot be made ephemeral", key));
    }
    store_->DeleteNode(Full(key), &changes);
  }
  auto r = CreateLocked(Full(key), value, CreateMode::kEphemeral, true, &changes);
  if (!r.ok()) return r.status();
  Finish(lock, changes);
  return Status::Ok();
}

Result<std::string> MemoryRegistryCenter::CreateSequential(std::string_view key,
                                                           std::string_view value,
                                                           CreateMode mode) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  std::vector<MemoryStore::Change> changes;
  auto r = CreateLocked(Full(key), value, mode, true, &changes);
  if (!r.ok()) return r.status();
  Finish(lock, changes);
  return Relative(*r);
}

Result<std::string> MemoryRegistryCenter::PersistSequential(std::string_view key,
                                                            std::string_view value) {
  return CreateSequential(key, value, CreateMode::kPersistentSequential);
}

Result<std::string> MemoryRegistryCenter::PersistEphemeralSequential(std::string_view key,
                                                                     std::string_view value) {
  return CreateSequential(key, value, CreateMode::kEphemeralSequential);
}

Status MemoryRegistryCenter::CreateContainer(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  if (store_->nodes.count(Full(key)) != 0) return Status::Ok();
  std::vector<MemoryStore::Change> changes;
  auto r = CreateLocked(Full(key), "", CreateMode::kContainer, true, &changes);
  if (!r.ok()) return r.status();
  Finish(lock, changes);
  return Status::Ok();
}

Result<std::string> MemoryRegistryCenter::CreateLatchNode(const std::string& latch,
                                                          const std::string& prefix) {
  if (Status s = ValidateKey(latch); !s.ok()) return s;
  MutexLock lock(&store_->mu);  // the container cannot go in between
  if (Status s = CheckOpen(); !s.ok()) return s;
  std::vector<MemoryStore::Change> changes;
  if (store_->nodes.count(Full(latch)) == 0) {
    auto r = CreateLocked(Full(latch), "", CreateMode::kContainer, true, &changes);
    if (!r.ok()) return r.status();
  }
  auto r = CreateLocked(Full(latch) + "/" + prefix, "", CreateMode::kEphemeralSequential, false,
                        &changes);
  if (!r.ok()) return r.status();
  Finish(lock, changes);
  return r->substr(r->rfind('/') + 1);
}

Status MemoryRegistryCenter::Remove(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  std::vector<MemoryStore::Change> changes;
  std::function<void(const std::string&)> remove =
      [&](const std::string& path) ELASTICJOB_REQUIRES(store_->mu) {
        auto it = store_->nodes.find(path);
        if (it == store_->nodes.end()) return;
        std::vector<std::string> children(it->second.children.begin(), it->second.children.end());
        for (const auto& c : children) remove(Join(path, c));
        store_->DeleteNode(path, &changes);
      };
  remove(Full(key));
  if (key == "/") store_->nodes["/"];  // never delete the store root
  Finish(lock, changes);
  return Status::Ok();
}

void MemoryRegistryCenter::ExecuteInTransactionAsync(std::vector<TransactionOp> ops,
                                                     Executor& executor,
                                                     std::function<void(Status)> done) {
  Status s = ExecuteInTransaction(ops);
  executor.Post([s = std::move(s), done = std::move(done)] { done(s); });
}

void MemoryRegistryCenter::ExecuteInTransactionStampedAsync(
    std::vector<TransactionOp> ops, Executor& executor, std::function<void(Result<int64_t>)> done) {
  Status stampable = ValidateStampable(ops);
  Result<int64_t> r = stampable.ok() ? Execute(ops) : Result<int64_t>(stampable);
  executor.Post([r = std::move(r), done = std::move(done)] { done(r); });
}

Status MemoryRegistryCenter::ExecuteInTransaction(const std::vector<TransactionOp>& ops) {
  return Execute(ops).status();
}

Result<int64_t> MemoryRegistryCenter::Execute(const std::vector<TransactionOp>& ops) {
  for (const auto& op : ops) {
    if (Status s = ValidateKey(op.key); !s.ok()) return s;
  }
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  // Undo log: the prior fields of every node a step can touch (its path and its ancestors,
  // which creates and container cascades modify), children left out: a failed step undoes
  // the children sets by reversing `changes`, so the log costs O(steps x depth), not the
  // size of the namespace root's children.
  std::map<std::string, std::optional<MemoryStore::Node>> saved;
  for (const auto& op : ops) {
    for (std::string p = Full(op.key);; p = p.substr(0, std::max<size_t>(1, p.rfind('/')))) {
      if (saved.count(p) == 0) {
        auto it = store_->nodes.find(p);
        std::optional<MemoryStore::Node> fields;
        if (it != store_->nodes.end()) {
          const MemoryStore::Node& n = it->second;
          fields = MemoryStore::Node{n.value, n.mode, n.owner, n.mtime_ms, n.next_sequence, {}};
        }
        saved.emplace(p, std::move(fields));
      }
      if (p == "/") break;
    }
  }
  std::vector<MemoryStore::Change> changes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    std::string full = Full(op.key);
    Status s;
    auto it = store_->nodes.find(full);
    switch (op.type) {
      case TransactionOp::Type::kCheckExists:
        if (it == store_->nodes.end()) s = NotFound(fmt::format("no node {}", op.key));
        break;
      case TransactionOp::Type::kCreate: {
        auto r = CreateLocked(full, op.value, op.mode, false, &changes);
        s = r.status();
        break;
      }
      case TransactionOp::Type::kSetData:
        if (it == store_->nodes.end()) {
          s = NotFound(fmt::format("no node {}", op.key));
        } else {
          it->second.value = op.value;
          it->second.mtime_ms = store_->NowMs();
          changes.push_back({TreeEvent::Type::kUpdated, full, op.value});
        }
        break;
      case TransactionOp::Type::kDelete:
        if (it == store_->nodes.end()) {
          s = NotFound(fmt::format("no node {}", op.key));
        } else if (!it->second.children.empty()) {
          s = Status(StatusCode::kFailedPrecondition, fmt::format("node {} has children", op.key));
        } else {
          store_->DeleteNode(full, &changes);
        }
        break;
    }
    if (!s.ok()) {
      // Newest first: a create is taken out of its parent, a delete (a leaf when it went,
      // its children restored before it by this order) put back; then the fields.
      for (auto c = changes.rbegin(); c != changes.rend(); ++c) {
        if (c->path == "/") continue;
        const std::string parent = c->path.substr(0, std::max<size_t>(1, c->path.rfind('/')));
        if (c->type == TreeEvent::Type::kAdded) {
          store_->nodes.erase(c->path);
          if (auto p = store_->nodes.find(parent); p != store_->nodes.end())
            p->second.children.erase(Leaf(c->path));
        } else if (c->type == TreeEvent::Type::kDeleted) {
          store_->nodes[c->path];  // its fields come back from `saved` below
          store_->nodes[parent].children.insert(Leaf(c->path));
        }
      }
      for (auto& [path, fields] : saved) {
        if (!fields.has_value()) continue;  // absent before: a create, undone above
        MemoryStore::Node& n = store_->nodes[path];
        fields->children = std::move(n.children);
        n = std::move(*fields);
      }
      return Status(s.code(), fmt::format("transaction step {}: {}", i + 1, s.message()));
    }
  }
  const int64_t stamp = ++store_->transactions;
  Finish(lock, changes);
  return stamp;
}

Result<int64_t> MemoryRegistryCenter::GetRegistryCenterTime(std::string_view key) {
  if (Status s = Persist(key, ""); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  auto it = store_->nodes.find(Full(key));
  if (it == store_->nodes.end()) return NotFound(fmt::format("no node {}", key));
  return it->second.mtime_ms;
}

Result<std::unique_ptr<CountedSubscription>> MemoryRegistryCenter::WatchTree(
    std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
    WatchPolicy policy) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  auto state = std::make_shared<SubscriptionState>();
  state->counted = true;
  std::string root = Full(key);
  // Relative keys for the callback.
  auto relative_cb = [this, callback](const TreeEvent& e) {
    callback(TreeEvent{e.type, Relative(e.key), e.value});
  };
  // The current contents arrive first, as ADDED, parents before children.
  for (auto it = store_->nodes.lower_bound(root);
       it != store_->nodes.end() && it->first.compare(0, root.size(), root) == 0; ++it) {
    if (!Under(it->first, root)) continue;  // "/a-b" sorts between "/a" and "/a/b"
    if (!PolicyCovers(policy, root, it->first, prefix_.size())) continue;
    TreeEvent e{TreeEvent::Type::kAdded, it->first, it->second.value};
    executor.Post([state, relative_cb, e] { state->Run([&] { relative_cb(e); }); });
  }
  store_->tree_listeners.emplace(
      root, MemoryStore::TreeListener{session_, root, &executor, relative_cb, state,
                                      std::move(policy), prefix_.size()});
  std::weak_ptr<MemoryStore> weak = store_;
  return std::unique_ptr<CountedSubscription>(
      std::make_unique<SubscriptionHandle>(state, [weak, state] {
        if (auto store = weak.lock()) {
          MutexLock l(&store->mu);
          std::erase_if(store->tree_listeners,
                        [&](const auto& entry) { return entry.second.state == state; });
        }
      }));
}

Result<bool> MemoryRegistryCenter::ExistsWatchOnce(std::string_view key,
                                                   std::function<void()> fired) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  MutexLock lock(&store_->mu);
  if (Status s = CheckOpen(); !s.ok()) return s;
  store_->exists_watches.emplace(Full(key), std::make_pair(session_.load(), std::move(fired)));
  return store_->nodes.count(Full(key)) != 0;
}

}  // namespace elasticjob::reg
