// FakeRegistryClient: a scriptable RegistryClient (reg/client/registry_client.h) for unit tests
// of what is built on the seam: an in-memory tree with ZooKeeper's rules (parents, versions,
// ephemeral and sequential nodes, all-or-nothing multi-ops), one-shot watches, and an event
// thread that delivers answers and watch events in order, as the C client's does. A test
// writes as another session would (Write, Remove: the watches fire), holds asynchronous
// requests back (HoldReplies: unapplied) or only their answers (HoldAnswers: applied) to put
// an event between a request and its answer, and ends the session (Expire: ephemeral nodes
// and watches go, the hooks hear kExpired).
//
// Thread safety: safe for concurrent use; its own tests call it from one thread.
#ifndef ELASTICJOB_TESTS_UNIT_REG_FAKE_REGISTRY_CLIENT_H_
#define ELASTICJOB_TESTS_UNIT_REG_FAKE_REGISTRY_CLIENT_H_

#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"

namespace elasticjob::reg {

class FakeRegistryClient final : public RegistryClient {
 public:
  FakeRegistryClient() : events_thread_([this] { RunEvents(); }) {}
  ~FakeRegistryClient() override {
    Close();
    {
      MutexLock lock(&events_mu_);
      stop_events_ = true;
    }
    events_cv_.SignalAll();
    events_thread_.join();
  }

  // ---- scripting ----
  // Writes `value` to `path` (created with its missing parents when absent) as another
  // session would: the watches fire.
  void Write(const std::string& path, const std::string& value) {
    MutexLock lock(&mu_);
    std::vector<Fired> fired;
    std::vector<std::string> missing;  // deepest first
    for (std::string p = Parent(path); p != "/" && nodes_.count(p) == 0; p = Parent(p)) {
      missing.push_back(p);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      std::string created;
      CreateLocked(*it, "", CreateMode::kPersistent, 0, &created, &fired);
    }
    if (nodes_.count(path) != 0) {
      SetLocked(path, value, -1, nullptr, &fired);
    } else {
      std::string created;
      CreateLocked(path, value, CreateMode::kPersistent, 0, &created, &fired);
    }
    PostFired(std::move(fired));
  }
  // Deletes `path` (a leaf) as another session would.
  void Remove(const std::string& path) {
    MutexLock lock(&mu_);
    std::vector<Fired> fired;
    DeleteLocked(path, -1, &fired);
    PostFired(std::move(fired));
  }
  // The value at `path`, or nullopt.
  std::optional<std::string> Read(const std::string& path) {
    MutexLock lock(&mu_);
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return std::nullopt;
    return it->second.value;
  }
  // From now on, asynchronous requests wait (unapplied, unanswered) until ReleaseReplies;
  // ReplaceSession and Close answer the waiting ones as the real client's close does.
  void HoldReplies() {
    MutexLock lock(&mu_);
    hold_ = true;
  }
  // Applies and answers the requests held so far, in order, and stops holding.
  void ReleaseReplies() {
    std::deque<std::function<void()>> held;
    {
      MutexLock lock(&mu_);
      hold_ = false;
      held.swap(held_);
      held_fail_.clear();
    }
    for (auto& apply : held) apply();
  }
  size_t held_replies() {
    MutexLock lock(&mu_);
    return held_.size();
  }
  // From now on, the answers to asynchronous requests are held back, the requests applied (as
  // a server's answer still on its way: a read shows the tree as it was when it was sent, and
  // sets its watch then) until ReleaseAnswers; watch events are delivered meanwhile. Close
  // delivers the held answers.
  void HoldAnswers() {
    MutexLock lock(&events_mu_);
    hold_answers_ = true;
  }
  // Delivers the answers held so far, in order, and stops holding them.
  void ReleaseAnswers() {
    {
      MutexLock lock(&events_mu_);
      hold_answers_ = false;
      for (auto& a : held_answers_) events_.push_back(std::move(a));
      held_answers_.clear();
    }
    events_cv_.SignalAll();
  }
  size_t held_answers() {
    MutexLock lock(&events_mu_);
    return held_answers_.size();
  }
  // The server ends the session: its ephemeral nodes go, every watch is told kExpired and
  // dropped, and the hooks hear kExpired (the owner then calls ReplaceSession).
  void Expire() {
    std::vector<Fired> fired;
    uint64_t epoch;
    {
      MutexLock lock(&mu_);
      std::vector<std::string> ephemeral;
      for (const auto& [path, node] : nodes_) {
        if (node.stat.ephemeral_owner == session_id_) ephemeral.push_back(path);
      }
      std::set<Watcher*> watchers;
      for (auto& [path, set] : data_watches_) watchers.insert(set.begin(), set.end());
      for (auto& [path, set] : child_watches_) watchers.insert(set.begin(), set.end());
      data_watches_.clear();
      child_watches_.clear();
      for (auto it = ephemeral.rbegin(); it != ephemeral.rend(); ++it) nodes_.erase(*it);
      for (Watcher* w : watchers) {
        fired.push_back({w, WatchEvent::Type::kSession, ClientState::kExpired, ""});
      }
      connected_ = false;
      epoch = epoch_;
    }
    PostFired(std::move(fired));
    PostSession({SessionEvent::Type::kExpired, epoch});
  }

  // ---- the seam ----
  void SetHooks(ClientHooks hooks) override { hooks_ = std::move(hooks); }
  Status Connect() override {
    uint64_t epoch;
    {
      MutexLock lock(&mu_);
      if (connected_) return Status::Ok();
      closing_ = false;
      connected_ = true;
      epoch = ++epoch_;
      session_id_ = ++last_session_id_;
    }
    PostSession({SessionEvent::Type::kConnected, epoch, true});
    return Status::Ok();
  }
  void ReplaceSession() override {
    uint64_t epoch;
    {
      MutexLock lock(&mu_);
      if (closing_) return;
      epoch = ++epoch_;
    }
    if (hooks_.session) hooks_.session({SessionEvent::Type::kNewSession, epoch});
    AbandonHeld(ClientCode::kSessionExpired);
    {
      MutexLock lock(&mu_);
      session_id_ = ++last_session_id_;
      connected_ = true;
    }
    state_cv_.SignalAll();
    PostSession({SessionEvent::Type::kConnected, epoch, false});
  }
  void Close() override {
    {
      MutexLock lock(&mu_);
      if (closing_) return;
      closing_ = true;
      connected_ = false;
      std::vector<std::string> ephemeral;
      for (const auto& [path, node] : nodes_) {
        if (node.stat.ephemeral_owner == session_id_) ephemeral.push_back(path);
      }
      for (auto it = ephemeral.rbegin(); it != ephemeral.rend(); ++it) nodes_.erase(*it);
      data_watches_.clear();
      child_watches_.clear();
    }
    state_cv_.SignalAll();
    ReleaseAnswers();
    DrainEvents();  // as zookeeper_close joins its event thread
    AbandonHeld(ClientCode::kClosing);
  }
  ClientState state() override {
    MutexLock lock(&mu_);
    return closing_     ? ClientState::kClosed
           : connected_ ? ClientState::kConnected
                        : ClientState::kSuspended;
  }
  bool closing() override {
    MutexLock lock(&mu_);
    return closing_;
  }
  uint64_t session_epoch() override {
    MutexLock lock(&mu_);
    return epoch_;
  }
  SessionInfo session() override {
    MutexLock lock(&mu_);
    return {epoch_, connected_ ? session_id_ : 0, connected_ ? "password" : ""};
  }
  std::chrono::milliseconds session_timeout() override { return std::chrono::seconds(30); }
  // Retries as the real client does (up to three more times, each after the session is
  // back or a second has passed); kClosing once Close was called.
  ClientCode WithRetry(const std::function<ClientCode()>& attempt) override {
    ClientCode rc = ClientCode::kConnectionLoss;
    for (int n = 0; n <= 3; ++n) {
      rc = attempt();
      if (!Retryable(rc) || n == 3) return rc;
      MutexLock lock(&mu_);
      const auto wake = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!connected_ && !closing_ && state_cv_.WaitUntil(wake)) {
      }
      if (closing_) return ClientCode::kClosing;
    }
    return rc;
  }

  // Waits until every event queued so far has been delivered; returns how many were queued.
  // The count is read in the same hold as the queue found empty: read after, it could take in
  // an event queued meanwhile and not delivered (a waiter then took it for done).
  uint64_t WaitIdleForTesting() override {
    MutexLock lock(&events_mu_);
    while (!events_.empty() || delivering_) events_cv_.Wait();
    return posted_;
  }

  ClientCode GetSync(const std::string& path, Watcher* watch, std::string* value,
                     NodeStat* stat) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kGet)) return ClientCode::kInvalidState;
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return ClientCode::kNoNode;
    if (watch != nullptr) data_watches_[path].insert(watch);
    if (value != nullptr) *value = it->second.value;
    if (stat != nullptr) *stat = it->second.stat;
    return ClientCode::kOk;
  }
  ClientCode ChildrenSync(const std::string& path, Watcher* watch,
                          std::vector<std::string>* children) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kChildren)) return ClientCode::kInvalidState;
    if (path != "/" && nodes_.count(path) == 0) return ClientCode::kNoNode;
    if (watch != nullptr) child_watches_[path].insert(watch);
    if (children != nullptr) *children = ChildrenLocked(path);
    return ClientCode::kOk;
  }
  ClientCode ExistsSync(const std::string& path, Watcher* watch, NodeStat* stat) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kExists)) return ClientCode::kInvalidState;
    if (watch != nullptr) data_watches_[path].insert(watch);
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return ClientCode::kNoNode;
    if (stat != nullptr) *stat = it->second.stat;
    return ClientCode::kOk;
  }
  ClientCode CreateSync(const std::string& path, std::string_view value, CreateMode mode,
                        std::string* created) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kCreate)) return ClientCode::kInvalidState;
    std::vector<Fired> fired;
    std::string out;
    ClientCode rc = CreateLocked(path, std::string(value), mode, session_id_, &out, &fired);
    if (created != nullptr) *created = out;
    PostFired(std::move(fired));
    return rc;
  }
  ClientCode SetSync(const std::string& path, std::string_view value, int32_t version,
                     NodeStat* stat, uint64_t only_in_epoch) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kSet)) return ClientCode::kInvalidState;
    if (only_in_epoch != 0 && only_in_epoch != epoch_) return ClientCode::kSessionMoved;
    std::vector<Fired> fired;
    ClientCode rc = SetLocked(path, std::string(value), version, stat, &fired);
    PostFired(std::move(fired));
    return rc;
  }
  ClientCode DeleteSync(const std::string& path, int32_t version) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kDelete)) return ClientCode::kInvalidState;
    std::vector<Fired> fired;
    ClientCode rc = DeleteLocked(path, version, &fired);
    PostFired(std::move(fired));
    return rc;
  }
  ClientCode MultiSync(const std::vector<ClientOp>& ops,
                       std::vector<ClientOpResult>* results) override {
    MutexLock lock(&mu_);
    if (!Counted(RequestKind::kMulti)) {
      if (results != nullptr) results->assign(ops.size(), ClientOpResult{});
      return ClientCode::kInvalidState;
    }
    std::vector<ClientOpResult> out;
    ClientCode rc = MultiLocked(ops, &out);
    if (results != nullptr) *results = std::move(out);
    return rc;
  }

  void Get(const std::string& path, Watcher* watch, DataDone done) override {
    Async(
        RequestKind::kGet,
        [this, path, watch, done] {
          std::string value;
          NodeStat stat;
          ClientCode rc = GetSync(path, watch, &value, &stat);
          Answer([done, rc, value, stat] { done(rc, value, stat); });
        },
        [done](ClientCode rc) { done(rc, {}, NodeStat{}); });
  }
  void Children(const std::string& path, Watcher* watch, ChildrenDone done) override {
    Async(
        RequestKind::kChildren,
        [this, path, watch, done] {
          std::vector<std::string> children;
          ClientCode rc = ChildrenSync(path, watch, &children);
          Answer([done, rc, children] { done(rc, children); });
        },
        [done](ClientCode rc) { done(rc, {}); });
  }
  void Exists(const std::string& path, Watcher* watch, StatDone done) override {
    Async(
        RequestKind::kExists,
        [this, path, watch, done] {
          NodeStat stat;
          ClientCode rc = ExistsSync(path, watch, &stat);
          Answer([done, rc, stat] { done(rc, stat); });
        },
        [done](ClientCode rc) { done(rc, NodeStat{}); });
  }
  void Create(const std::string& path, std::string_view value, CreateMode mode,
              CreateDone done) override {
    Async(
        RequestKind::kCreate,
        [this, path, v = std::string(value), mode, done] {
          std::string created;
          ClientCode rc = CreateSync(path, v, mode, &created);
          Answer([done, rc, created] { done(rc, created); });
        },
        [done](ClientCode rc) { done(rc, {}); });
  }
  void Set(const std::string& path, std::string_view value, int32_t version,
           StatDone done) override {
    Async(
        RequestKind::kSet,
        [this, path, v = std::string(value), version, done] {
          NodeStat stat;
          ClientCode rc = SetSync(path, v, version, &stat, 0);
          Answer([done, rc, stat] { done(rc, stat); });
        },
        [done](ClientCode rc) { done(rc, NodeStat{}); });
  }
  void Delete(const std::string& path, int32_t version, Done done) override {
    Async(
        RequestKind::kDelete,
        [this, path, version, done] {
          ClientCode rc = DeleteSync(path, version);
          Answer([done, rc] { done(rc); });
        },
        [done](ClientCode rc) { done(rc); });
  }
  void Multi(std::vector<ClientOp> ops, MultiDone done) override {
    const size_t n = ops.size();
    Async(
        RequestKind::kMulti,
        [this, ops = std::move(ops), done] {
          std::vector<ClientOpResult> results;
          ClientCode rc = MultiSync(ops, &results);
          Answer([done, rc, results] { done(rc, results); });
        },
        [done, n](ClientCode rc) { done(rc, std::vector<ClientOpResult>(n)); });
  }

 private:
  struct Node {
    std::string value;
    NodeStat stat;
    int32_t next_sequence = 0;
  };
  struct Fired {
    Watcher* watcher;
    WatchEvent::Type type;
    ClientState state;
    std::string path;
  };

  static std::string Parent(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
  }

  // A request reaches the server when there is a session; counted then. REQUIRES: mu_.
  bool Counted(RequestKind kind) ELASTICJOB_REQUIRES(mu_) {
    if (!connected_ || closing_) return false;
    if (hooks_.request) hooks_.request(kind);
    return true;
  }

  // An asynchronous request: applied now and answered on the event thread, or held.
  // The sync call inside `apply` counts it.
  void Async(RequestKind, std::function<void()> apply, std::function<void(ClientCode)> fail) {
    {
      MutexLock lock(&mu_);
      if (connected_ && !closing_ && hold_) {
        held_.push_back(std::move(apply));
        held_fail_.push_back(std::move(fail));
        return;
      }
      if (!connected_ || closing_) {
        lock.Unlock();
        fail(ClientCode::kInvalidState);  // not sent: answered before the call returns
        return;
      }
    }
    apply();
  }
  // Answers what is held with `rc` on this thread, unapplied.
  void AbandonHeld(ClientCode rc) {
    std::deque<std::function<void(ClientCode)>> fail;
    {
      MutexLock lock(&mu_);
      held_.clear();
      fail.swap(held_fail_);
    }
    for (auto& f : fail) f(rc);
  }

  std::vector<std::string> ChildrenLocked(const std::string& path) ELASTICJOB_REQUIRES(mu_) {
    std::vector<std::string> out;
    const std::string prefix = path == "/" ? "/" : path + "/";
    for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix);
         ++it) {
      if (it->first.find('/', prefix.size()) == std::string::npos) {
        out.push_back(it->first.substr(prefix.size()));
      }
    }
    return out;
  }

  void FireData(const std::string& path, WatchEvent::Type type, std::vector<Fired>* fired)
      ELASTICJOB_REQUIRES(mu_) {
    auto it = data_watches_.find(path);
    if (it == data_watches_.end()) return;
    for (Watcher* w : it->second) fired->push_back({w, type, ClientState::kConnected, path});
    data_watches_.erase(it);
  }
  void FireChildren(const std::string& path, WatchEvent::Type type, std::vector<Fired>* fired)
      ELASTICJOB_REQUIRES(mu_) {
    auto it = child_watches_.find(path);
    if (it == child_watches_.end()) return;
    for (Watcher* w : it->second) fired->push_back({w, type, ClientState::kConnected, path});
    child_watches_.erase(it);
  }

  ClientCode CreateLocked(const std::string& path, const std::string& value, CreateMode mode,
                          int64_t owner, std::string* created, std::vector<Fired>* fired)
      ELASTICJOB_REQUIRES(mu_) {
    const std::string parent = Parent(path);
    auto p = nodes_.find(parent);
    if (parent != "/" && p == nodes_.end()) return ClientCode::kNoNode;
    if (p != nodes_.end() && p->second.stat.ephemeral_owner != 0) {
      return ClientCode::kNoChildrenForEphemerals;
    }
    std::string name = path;
    if (mode == CreateMode::kPersistentSequential || mode == CreateMode::kEphemeralSequential) {
      int32_t& seq = parent == "/" ? root_sequence_ : p->second.next_sequence;
      char suffix[16];
      std::snprintf(suffix, sizeof(suffix), "%010d", seq++);
      name += suffix;
    }
    if (nodes_.count(name) != 0) return ClientCode::kNodeExists;
    Node node;
    node.value = value;
    node.stat.czxid = node.stat.mzxid = ++zxid_;
    node.stat.data_length = static_cast<int32_t>(value.size());
    const bool ephemeral =
        mode == CreateMode::kEphemeral || mode == CreateMode::kEphemeralSequential;
    node.stat.ephemeral_owner = ephemeral ? (owner != 0 ? owner : session_id_) : 0;
    nodes_.emplace(name, node);
    *created = name;
    FireData(name, WatchEvent::Type::kCreated, fired);
    FireChildren(parent, WatchEvent::Type::kChildren, fired);
    return ClientCode::kOk;
  }
  ClientCode SetLocked(const std::string& path, const std::string& value, int32_t version,
                       NodeStat* stat, std::vector<Fired>* fired) ELASTICJOB_REQUIRES(mu_) {
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return ClientCode::kNoNode;
    if (version != -1 && version != it->second.stat.version) return ClientCode::kBadVersion;
    it->second.value = value;
    it->second.stat.version++;
    it->second.stat.mzxid = ++zxid_;
    it->second.stat.data_length = static_cast<int32_t>(value.size());
    if (stat != nullptr) *stat = it->second.stat;
    FireData(path, WatchEvent::Type::kChanged, fired);
    return ClientCode::kOk;
  }
  ClientCode DeleteLocked(const std::string& path, int32_t version, std::vector<Fired>* fired)
      ELASTICJOB_REQUIRES(mu_) {
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return ClientCode::kNoNode;
    if (version != -1 && version != it->second.stat.version) return ClientCode::kBadVersion;
    if (!ChildrenLocked(path).empty()) return ClientCode::kNotEmpty;
    nodes_.erase(it);
    ++zxid_;
    FireData(path, WatchEvent::Type::kDeleted, fired);
    FireChildren(path, WatchEvent::Type::kDeleted, fired);
    FireChildren(Parent(path), WatchEvent::Type::kChildren, fired);
    return ClientCode::kOk;
  }
  ClientCode MultiLocked(const std::vector<ClientOp>& ops, std::vector<ClientOpResult>* out)
      ELASTICJOB_REQUIRES(mu_) {
    auto saved_nodes = nodes_;
    auto saved_data = data_watches_;
    auto saved_children = child_watches_;
    const int64_t saved_zxid = zxid_;
    std::vector<Fired> fired;
    out->assign(ops.size(), ClientOpResult{});
    for (size_t i = 0; i < ops.size(); ++i) {
      const ClientOp& op = ops[i];
      ClientOpResult& r = (*out)[i];
      switch (op.type) {
        case ClientOp::Type::kCheck: {
          auto it = nodes_.find(op.path);
          r.code = it == nodes_.end() ? ClientCode::kNoNode
                   : op.version != -1 && op.version != it->second.stat.version
                       ? ClientCode::kBadVersion
                       : ClientCode::kOk;
          break;
        }
        case ClientOp::Type::kCreate:
          r.code = CreateLocked(op.path, op.value, op.mode, session_id_, &r.path, &fired);
          break;
        case ClientOp::Type::kSet:
          r.code = SetLocked(op.path, op.value, op.version, &r.stat, &fired);
          break;
        case ClientOp::Type::kDelete:
          r.code = DeleteLocked(op.path, op.version, &fired);
          break;
      }
      if (r.code != ClientCode::kOk) {
        // All or nothing: undone, the steps before it answer kOk, those after kNotRun.
        const ClientCode failed = r.code;
        nodes_ = std::move(saved_nodes);
        data_watches_ = std::move(saved_data);
        child_watches_ = std::move(saved_children);
        zxid_ = saved_zxid;
        for (size_t k = 0; k < ops.size(); ++k) {
          (*out)[k] = ClientOpResult();
          (*out)[k].code = k < i ? ClientCode::kOk : k == i ? failed : ClientCode::kNotRun;
        }
        return failed;
      }
    }
    PostFired(std::move(fired));
    return ClientCode::kOk;
  }

  // ---- the event thread ----
  void PostFired(std::vector<Fired> fired) {
    if (fired.empty()) return;
    Post([fired = std::move(fired)] {
      for (const Fired& f : fired) f.watcher->OnWatch({f.type, f.state, f.path});
    });
  }
  void PostSession(SessionEvent event) {
    Post([this, event] {
      if (hooks_.session) hooks_.session(event);
    });
  }
  void Answer(std::function<void()> answer) {
    {
      MutexLock lock(&events_mu_);
      if (hold_answers_) {
        held_answers_.push_back(std::move(answer));
        return;
      }
    }
    Post(std::move(answer));
  }
  void Post(std::function<void()> task) {
    {
      MutexLock lock(&events_mu_);
      events_.push_back(std::move(task));
      ++posted_;
    }
    events_cv_.SignalAll();
  }
  // Waits until every event posted so far has been delivered.
  void DrainEvents() {
    MutexLock lock(&events_mu_);
    while (!events_.empty() || delivering_) events_cv_.Wait();
  }
  void RunEvents() {
    MutexLock lock(&events_mu_);
    while (true) {
      while (events_.empty() && !stop_events_) events_cv_.Wait();
      if (events_.empty()) return;
      std::function<void()> task = std::move(events_.front());
      events_.pop_front();
      delivering_ = true;
      lock.Unlock();
      task();
      lock.Lock();
      delivering_ = false;
      events_cv_.SignalAll();
    }
  }

  ClientHooks hooks_;  // set before Connect

  Mutex mu_;
  CondVar state_cv_{&mu_};  // the session connected, or Close called
  std::map<std::string, Node> nodes_ ELASTICJOB_GUARDED_BY(mu_);
  std::map<std::string, std::set<Watcher*>> data_watches_ ELASTICJOB_GUARDED_BY(mu_);
  std::map<std::string, std::set<Watcher*>> child_watches_ ELASTICJOB_GUARDED_BY(mu_);
  int32_t root_sequence_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t zxid_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  uint64_t epoch_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t session_id_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int64_t last_session_id_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  bool connected_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool closing_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool hold_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> held_ ELASTICJOB_GUARDED_BY(mu_);
  std::deque<std::function<void(ClientCode)>> held_fail_ ELASTICJOB_GUARDED_BY(mu_);

  Mutex events_mu_;
  CondVar events_cv_{&events_mu_};
  std::deque<std::function<void()>> events_ ELASTICJOB_GUARDED_BY(events_mu_);
  bool delivering_ ELASTICJOB_GUARDED_BY(events_mu_) = false;
  bool hold_answers_ ELASTICJOB_GUARDED_BY(events_mu_) = false;
  std::deque<std::function<void()>> held_answers_ ELASTICJOB_GUARDED_BY(events_mu_);
  uint64_t posted_ ELASTICJOB_GUARDED_BY(events_mu_) = 0;  // events queued so far
  bool stop_events_ ELASTICJOB_GUARDED_BY(events_mu_) = false;
  std::thread events_thread_;  // last: starts once the rest is made
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_TESTS_UNIT_REG_FAKE_REGISTRY_CLIENT_H_
