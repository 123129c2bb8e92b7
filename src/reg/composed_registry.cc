#include "reg/composed_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "infra/log.h"
#include "infra/thread_name.h"
#include "reg/reply_latch.h"
#include "reg/zookeeper/zookeeper_client.h"

namespace elasticjob::reg {
namespace {

// The number CountRequest gave the last request this thread handed to the client (0: none
// since the last reset). The client calls its request hook as it hands a request over, in
// the order requests leave (a MemoryClient under its session lock), so these numbers follow
// the order the server sees.
thread_local uint64_t handed_seq = 0;
// Where a write pipeline's multi-op wants its number (WritePipeline::Hooks::numbered): set
// on the handing thread around the hand-over, filled by CountRequest before it leaves.
thread_local std::atomic<uint64_t>* handed_slot = nullptr;

}  // namespace

void ComposedRegistry::CountRequest(RequestKind kind) {
  handed_seq = NextSeq();
  if (handed_slot != nullptr) {  // the first request handed over in the hook's `send` only
    handed_slot->store(handed_seq, std::memory_order_release);
    handed_slot = nullptr;
  }
  requests_[static_cast<size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  stats()->requests[static_cast<size_t>(kind)].Inc();
}

ClientCode ComposedRegistry::Numbered(uint64_t* seq, const std::function<ClientCode()>& call) {
  handed_seq = 0;
  const ClientCode rc = call();
  *seq = handed_seq != 0 ? handed_seq : NextSeq();  // not handed over: failed anyway
  return rc;
}

// A transaction in the client's form, and its step results once answered.
struct ComposedRegistry::Multi {
  std::vector<TransactionOp> ops;
  std::vector<ClientOp> steps;          // full paths
  std::vector<ClientOpResult> results;  // one per step, once answered
  uint64_t seq = 0;                     // NextSeq() when last handed to the client
  // A stamped transaction's last step is a set whose stat gives the transaction's zxid.
  bool stamped = false;
  int64_t stamp() const { return results.empty() ? 0 : results.back().stat.mzxid; }
};

// A one-shot watch's context. Contexts are owned by once_watches_ until their watch fires
// for good (a node event or the session's expiry), or the registry is destroyed.

ComposedRegistry::ComposedRegistry(RegistryUrl url)
    : ComposedRegistry(url, std::make_unique<ZooKeeperClient>(url)) {}

ComposedRegistry::ComposedRegistry(RegistryUrl url, std::unique_ptr<RegistryClient> client)
    : url_(std::move(url)),
      prefix_("/" + url_.name_space),
      client_(std::move(client)),
      pipeline_(*client_,
                {[](std::atomic<uint64_t>* seq, const std::function<void()>& send) {
                   std::atomic<uint64_t>* outer = std::exchange(handed_slot, seq);
                   send();
                   handed_slot = outer;
                 },
                 [this](int64_t sent_ns, uint64_t epoch) { lease_.Heard(sent_ns, epoch); },
                 [this] {
                   if (before_send_for_testing_) before_send_for_testing_();
                 }}),
      lease_(*client_,
             {prefix_, std::chrono::nanoseconds(int64_t{url_.session_timeout_ms} * 1'000'000 / 3),
              [this] { return Closing(); },
              [this] {
                if (before_send_for_testing_) before_send_for_testing_();
              },
              nullptr}),
      latch_(*client_, prefix_, LatchHooks()),
      caches_(*client_, prefix_,
              {[this] { return NextSeq(); },
               [this](const std::function<void()>& send) {
                 handed_seq = 0;  // the number of the last request `send` hands over
                 send();
                 return handed_seq != 0 ? handed_seq : NextSeq();
               },
               [this](std::function<void()> refresh) {
                 worker_.Post([this, refresh = std::move(refresh)] {
                   if (url_.cache_batch_ms > 0) {
                     MutexLock state(&state_mu_);
                     const auto until = std::chrono::steady_clock::now() +
                                        std::chrono::milliseconds(url_.cache_batch_ms);
                     while (!closing_ && state_cv_.WaitUntil(until)) {
                     }
                   }
                   refresh();
                 });
               },
               [this](RequestKind kind, const std::function<ClientCode()>& attempt) {
                 return WithRetry(kind, attempt);
               },
               [this] {
                 if (before_send_for_testing_) before_send_for_testing_();
               },
               [this] {
                 if (after_send_for_testing_) after_send_for_testing_();
               }}) {
  worker_.set_thread_name("ej-registry");
  client_->SetHooks({[this](const SessionEvent& e) { OnSessionEvent(e); },
                     [this](RequestKind kind) { CountRequest(kind); }});
  // Counted at a scrape only (docs/metrics.md, elasticjob_registry_cache_nodes).
  stats()->SetCacheCounter([this] { return caches_.node_count(); });
}

ComposedRegistry::~ComposedRegistry() {
  stats()->SetCacheCounter(nullptr);  // the stats may outlive this registry
  Close();
  worker_.Stop();
  worker_.Join();
}

std::string ComposedRegistry::Full(std::string_view key) const {
  return key == "/" ? prefix_ : prefix_ + std::string(key);
}

std::string ComposedRegistry::Relative(const std::string& full) const {
  return full.size() == prefix_.size() ? "/" : full.substr(prefix_.size());
}

Status ComposedRegistry::ToStatus(ClientCode rc, std::string_view key) const {
  switch (rc) {
    case ClientCode::kOk:
      return Status::Ok();
    case ClientCode::kNoNode:
      return NotFound(fmt::format("no node {}", key));
    case ClientCode::kNodeExists:
      return Status(StatusCode::kAlreadyExists, fmt::format("node exists {}", key));
    case ClientCode::kBadVersion:
      return Status(StatusCode::kBadVersion, fmt::format("bad version {}", key));
    case ClientCode::kConnectionLoss:
      return Status(StatusCode::kConnectionLoss, fmt::format("connection lost ({})", key));
    case ClientCode::kSessionExpired:
    case ClientCode::kInvalidState:
      return Status(StatusCode::kSessionExpired, fmt::format("session expired ({})", key));
    case ClientCode::kNoAuth:
    case ClientCode::kAuthFailed:
      return Status(StatusCode::kAuthFailed, fmt::format("not authorised for {}", key));
    case ClientCode::kOperationTimeout:
      return Status(StatusCode::kTimeout, fmt::format("timed out ({})", key));
    case ClientCode::kNotEmpty:
      return Status(StatusCode::kFailedPrecondition, fmt::format("node {} has children", key));
    case ClientCode::kNoChildrenForEphemerals:
      return InvalidArgument(fmt::format("ephemeral nodes cannot have children ({})", key));
    case ClientCode::kClosing:
      return Status(StatusCode::kCancelled, "registry closing");
    default:
      return Internal(fmt::format("zookeeper: {} ({})", ClientCodeText(rc), key));
  }
}

// ---- session -------------------------------------------------------------------------

Status ComposedRegistry::Init() {
  if (client_->state() == ClientState::kConnected) return Status::Ok();
  {
    MutexLock lock(&state_mu_);
    closing_ = false;
  }
  latch_.Open();
  if (Status s = client_->Connect(); !s.ok()) {
    Close();
    return s;
  }
  ClientCode rc = WithRetry(RequestKind::kCreate, [&] {
    return client_->CreateSync(prefix_, "", CreateMode::kContainer, nullptr);
  });
  if (rc != ClientCode::kOk && rc != ClientCode::kNodeExists) {
    Status s = ToStatus(rc, prefix_);
    Close();
    return s;
  }
  // The client ran its first kConnected hook before Connect returned, which posted the
  // CONNECTED fan-out to the worker: Init returns once listeners and the stats have it.
  AwaitWorker();
  return Status::Ok();
}

void ComposedRegistry::Close() {
  {
    MutexLock lock(&state_mu_);
    closing_ = true;
  }
  state_cv_.SignalAll();
  MarkClosed();
  latch_.Close();    // its waiters return CANCELLED
  client_->Close();  // ends the session (ephemeral nodes go now), answers what it owed
  lease_.WakeWaiters();
  caches_.Close();
}

void ComposedRegistry::Notify(ConnectionState state) {
  NotifyConnectionState(state);
  latch_.Wake();
}

bool ComposedRegistry::Closing() {
  MutexLock lock(&state_mu_);
  return closing_;
}

int64_t ComposedRegistry::session_id() { return client_->session().id; }

std::chrono::milliseconds ComposedRegistry::session_timeout() { return client_->session_timeout(); }

std::string ComposedRegistry::session_password() { return client_->session().password; }

void ComposedRegistry::OnSessionEvent(const SessionEvent& event) {
  // On the client's event thread (kNewSession: the replacing thread): never block, hand
  // everything to the worker.
  switch (event.type) {
    case SessionEvent::Type::kConnected:
      worker_.Post([this, first = event.first] {
        // The granted timeout may differ from the one asked for.
        lease_.SetBound(std::chrono::duration_cast<std::chrono::nanoseconds>(session_timeout()) /
                        3);
        lease_.WakeWaiters();  // a waiter's probe lost with the connection goes again
        if (!first) caches_.ResyncAll();
        Notify(first ? ConnectionState::kConnected : ConnectionState::kReconnected);
      });
      break;
    case SessionEvent::Type::kSuspended:
      worker_.Post([this] { Notify(ConnectionState::kSuspended); });
      break;
    case SessionEvent::Type::kExpired:
      worker_.Post([this] {
        // Worth a line: the session's ephemeral nodes (instances, running marks, leadership)
        // are gone, and other instances may take this one's items over.
        infra::LogLine("WARN", fmt::format("{}: session expired; opening a new one",
                                           url_.scheme == RegistryUrl::Scheme::kMemory
                                               ? "memory://" + url_.name_space
                                               : "zookeeper " + url_.servers));
        Notify(ConnectionState::kLost);
        client_->ReplaceSession();  // its CONNECTED event resynchronises the caches
      });
      break;
    case SessionEvent::Type::kNewSession:
      // The new session has not heard from the server yet; the old one's answers are
      // ignored from here on (SessionLease::Heard compares the epoch). Waiters answer false.
      lease_.NewSession();
      break;
  }
}

void ComposedRegistry::AwaitWorker() {
  Mutex mu;
  CondVar cv(&mu);
  bool ran = false;
  worker_.Post([&] {
    MutexLock lock(&mu);
    ran = true;
    cv.SignalAll();
  });
  MutexLock lock(&mu);
  while (!ran) cv.Wait();
}

uint64_t ComposedRegistry::WaitIdleForTesting() {
  uint64_t events = client_->WaitIdleForTesting();
  while (true) {
    // One round of the worker: the barrier runs after what the delivered events posted
    // (drains, session events), each of which waits for its own reads' answers.
    AwaitWorker();
    const uint64_t now = client_->WaitIdleForTesting();
    const bool dirty = caches_.refresh_pending();
    if (now == events && !dirty) return events;
    events = now;
  }
}

ClientCode ComposedRegistry::WithRetry(RequestKind kind,
                                       const std::function<ClientCode()>& attempt) {
  return client_->WithRetry([&] {
    const int64_t sent = SteadyNs();
    const uint64_t generation = client_->session_epoch();
    const ClientCode rc = attempt();
    if (ServerAnswered(rc)) {
      lease_.Heard(sent, generation);
      stats()->request_duration[static_cast<size_t>(kind)].Observe(
          std::chrono::nanoseconds(SteadyNs() - sent));
    }
    return rc;
  });
}

// ---- reads -----------------------------------------------------------------------------

Result<std::string> ComposedRegistry::GetDirectly(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::string full = Full(key);
  std::string value;
  ClientCode rc = WithRetry(RequestKind::kGet,
                            [&] { return client_->GetSync(full, nullptr, &value, nullptr); });
  if (rc != ClientCode::kOk) return ToStatus(rc, key);
  return value;
}

Result<std::string> ComposedRegistry::Get(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  CachedRead cached = caches_.Read(Full(key));
  if (!cached.covered) return GetDirectly(key);
  if (!cached.value.has_value()) return NotFound(fmt::format("no node {}", key));
  return std::move(*cached.value);
}

CachedRead ComposedRegistry::GetCached(std::string_view key) {
  if (!ValidateKey(key).ok()) return {};
  return caches_.Read(Full(key));
}

Result<bool> ComposedRegistry::IsExisted(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::string full = Full(key);
  if (Known known = CacheKnows(full); known != Known::kUnknown) return known == Known::kPresent;
  ClientCode rc =
      WithRetry(RequestKind::kExists, [&] { return client_->ExistsSync(full, nullptr, nullptr); });
  if (rc == ClientCode::kOk) return true;
  if (rc == ClientCode::kNoNode) return false;
  return ToStatus(rc, key);
}

Result<std::vector<std::string>> ComposedRegistry::GetChildrenDirectly(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::string full = Full(key);
  std::vector<std::string> out;
  ClientCode rc =
      WithRetry(RequestKind::kChildren, [&] { return client_->ChildrenSync(full, nullptr, &out); });
  if (rc != ClientCode::kOk) return ToStatus(rc, key);
  return out;
}

Result<std::vector<std::string>> ComposedRegistry::GetChildrenKeys(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::string full = Full(key);
  std::vector<std::string> out;
  const Known cached = caches_.Children(full, &out);
  if (cached == Known::kAbsent) return NotFound(fmt::format("no node {}", key));
  if (cached == Known::kUnknown) {
    auto direct = GetChildrenDirectly(key);
    if (!direct.ok()) return direct;
    out = std::move(direct).value();
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

Result<int> ComposedRegistry::GetNumChildren(std::string_view key) {
  auto children = GetChildrenKeys(key);
  if (!children.ok()) return children.status();
  return static_cast<int>(children->size());
}

// ---- writes ----------------------------------------------------------------------------

Status ComposedRegistry::CreateChain(const std::string& full, CreateMode mode, bool trust_cache,
                                     std::string_view present) {
  std::vector<std::string> chain;
  for (std::string p = full; p != prefix_ && p != "/" && p != present; p = ParentKey(p)) {
    if (trust_cache && CacheKnows(p) == Known::kPresent) break;  // and so are its ancestors
    chain.push_back(p);
  }
  if (chain.size() > 1) {
    // Every level handed over before the first answer is awaited, the top first: the server
    // processes a session's requests in order, so each create finds its parent made by the
    // one before it, and the chain costs one round trip, not one per level (a job's leader
    // containers at start-up: two). A level answered with an error stops the chain there,
    // as one by one; an answer a retry could change (the connection lost on the way) sends
    // that level and those below it one by one, as before (a level made meanwhile answers
    // "exists").
    struct Sent {
      ClientCode rc = ClientCode::kConnectionLoss;
      uint64_t seq = 0;
      int64_t answered_ns = 0;
    };
    std::vector<Sent> sent(chain.size());
    ReplyLatch latch;
    const int64_t sent_ns = SteadyNs();
    const uint64_t epoch = client_->session_epoch();
    for (size_t k = 0; k < chain.size(); ++k) {
      latch.Add();
      handed_seq = 0;
      client_->Create(chain[chain.size() - 1 - k], "", mode,
                      [&sent, &latch, k](ClientCode rc, std::string_view) {
                        sent[k].rc = rc;
                        sent[k].answered_ns = SteadyNs();
                        latch.Done();
                      });
      sent[k].seq = handed_seq != 0 ? handed_seq : NextSeq();
    }
    latch.Wait();
    size_t answered = 0;
    for (; answered < chain.size(); ++answered) {
      const ClientCode rc = sent[answered].rc;
      const std::string& level = chain[chain.size() - 1 - answered];
      if (ServerAnswered(rc)) {
        lease_.Heard(sent_ns, epoch);
        stats()->request_duration[static_cast<size_t>(RequestKind::kCreate)].Observe(
            std::chrono::nanoseconds(sent[answered].answered_ns - sent_ns));
      }
      if (Retryable(rc)) break;
      if (rc != ClientCode::kOk && rc != ClientCode::kNodeExists)
        return ToStatus(rc, Relative(level));
      if (rc == ClientCode::kOk) ApplyLocalWrite(level, std::string(), sent[answered].seq);
    }
    chain.resize(chain.size() - answered);  // what is left: the levels below the last answered
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    uint64_t seq = 0;
    ClientCode rc = WithRetry(RequestKind::kCreate, [&] {
      return Numbered(&seq, [&] { return client_->CreateSync(*it, "", mode, nullptr); });
    });
    if (rc != ClientCode::kOk && rc != ClientCode::kNodeExists) {
      return ToStatus(rc, Relative(*it));
    }
    if (rc == ClientCode::kOk) ApplyLocalWrite(*it, std::string(), seq);
  }
  return Status::Ok();
}

Result<std::string> ComposedRegistry::CreateWithAncestors(const std::string& full,
                                                          std::string_view value, CreateMode mode) {
  // The missing ancestors (persistent, empty) and the node in one multi-op: one round trip
  // instead of one per level. An ancestor that exists after all fails the multi at its step;
  // it and those above it are then dropped and the rest is tried again.
  std::vector<std::string> ancestors;
  bool trust_cache = true;
  auto missing = [&] {
    ancestors.clear();
    for (std::string p = ParentKey(full); p != prefix_ && p != "/"; p = ParentKey(p)) {
      if (trust_cache && CacheKnows(p) == Known::kPresent) break;
      ancestors.insert(ancestors.begin(), p);
    }
  };
  missing();
  while (true) {
    std::vector<TransactionOp> ops;
    for (const auto& a : ancestors) ops.push_back(TransactionOp::Create(Relative(a), ""));
    ops.push_back(TransactionOp::Create(Relative(full), std::string(value), mode));
    auto m = PrepareMulti(std::move(ops));
    ClientCode rc = WithRetry(RequestKind::kMulti, [&] {
      return Numbered(&m->seq, [&] { return client_->MultiSync(m->steps, &m->results); });
    });
    size_t failed = m->results.size();
    if (rc != ClientCode::kOk) {
      for (size_t k = 0; k < m->results.size(); ++k) {
        if (StepFailed(m->results[k].code)) {
          failed = k;
          break;
        }
      }
    }
    if (rc == ClientCode::kNodeExists && failed < ancestors.size()) {
      ancestors.erase(ancestors.begin(), ancestors.begin() + static_cast<long>(failed) + 1);
      continue;
    }
    if (rc == ClientCode::kNoNode && trust_cache) {
      // A cache said an ancestor was there, but the server had deleted it (its event not
      // yet applied): ask the server about every level this time.
      trust_cache = false;
      missing();
      continue;
    }
    if (Status st = FinishMulti(*m, rc); !st.ok()) {
      // The node's own step names the node, as a single create would.
      if (failed == ancestors.size()) return ToStatus(m->results[failed].code, Relative(full));
      return st;
    }
    return m->results.back().path;
  }
}

Status ComposedRegistry::CreateParents(const std::string& full) {
  return CreateChain(ParentKey(full), CreateMode::kPersistent);
}

Result<std::string> ComposedRegistry::Create(const std::string& full, std::string_view value,
                                             CreateMode mode, bool parents) {
  if (parents && CacheKnows(ParentKey(full)) == Known::kAbsent) {
    return CreateWithAncestors(full, value, mode);  // no doomed attempt first
  }
  std::string created;
  uint64_t seq = 0;
  ClientCode rc = WithRetry(RequestKind::kCreate, [&] {
    return Numbered(&seq, [&] { return client_->CreateSync(full, value, mode, &created); });
  });
  if (rc == ClientCode::kNoNode && parents) return CreateWithAncestors(full, value, mode);
  if (rc != ClientCode::kOk) return ToStatus(rc, Relative(full));
  ApplyLocalWrite(created, std::string(value), seq);
  return created;
}

Status ComposedRegistry::Persist(std::string_view key, std::string_view value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::string full = Full(key);
  // The cache says which to try first; a stale answer costs one more round trip.
  bool exists = CacheKnows(full) == Known::kPresent;
  for (int round = 0; round < 4; ++round) {
    if (!exists) {
      auto created = Create(full, value, CreateMode::kPersistent, true);
      if (created.ok()) return Status::Ok();
      if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
    }
    uint64_t seq = 0;
    ClientCode rc = WithRetry(RequestKind::kSet, [&] {
      return Numbered(&seq, [&] { return client_->SetSync(full, value, -1, nullptr); });
    });
    if (rc == ClientCode::kOk) {
      ApplyLocalWrite(full, std::string(value), seq);
      return Status::Ok();
    }
    if (rc != ClientCode::kNoNode) return ToStatus(rc, key);  // deleted in between: create again
    exists = false;
  }
  return Status(StatusCode::kInternal, fmt::format("persist {}: node keeps changing", key));
}

Status ComposedRegistry::Update(std::string_view key, std::string_view value) {
  return ExecuteInTransaction({TransactionOp::CheckExists(std::string(key)),
                               TransactionOp::SetData(std::string(key), std::string(value))});
}

Status ComposedRegistry::PersistEphemeral(std::string_view key, std::string_view value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::string full = Full(key);
  if (CacheKnows(full) == Known::kAbsent) {
    auto created = Create(full, value, CreateMode::kEphemeral, true);
    if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
  }
  // There (or not known). A node this session owns takes the value in place: deleted and
  // created again, it would be missing for a round trip, and another instance that saw it go
  // would take this one for crashed and take its running items over (an instance re-registers
  // after every reconnect: chaos ensemble_leader_killed). Another session's node (or a
  // persistent one) is replaced. A few rounds, in case it changes hands meanwhile.
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    NodeStat stat;
    SessionInfo session;  // the session the exists was asked in
    ClientCode rc = WithRetry(RequestKind::kExists, [&] {
      session = client_->session();
      return client_->ExistsSync(full, nullptr, &stat);
    });
    if (rc == ClientCode::kNoNode) {
      auto created = Create(full, value, CreateMode::kEphemeral, true);
      if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
      continue;
    }
    if (rc != ClientCode::kOk) return ToStatus(rc, key);
    if (session.id != 0 && stat.ephemeral_owner == session.id) {
      uint64_t seq = 0;
      rc = WithRetry(RequestKind::kSet, [&] {
        // Sent only in that session: after a new one the node is not ours any more (it goes
        // with the old session); ask again.
        return Numbered(&seq, [&] {
          return client_->SetSync(full, value, stat.version, nullptr, session.epoch);
        });
      });
      if (rc == ClientCode::kOk) {
        ApplyLocalWrite(full, std::string(value), seq);
        return Status::Ok();
      }
      if (rc != ClientCode::kNoNode && rc != ClientCode::kBadVersion &&
          rc != ClientCode::kSessionMoved) {
        return ToStatus(rc, key);
      }
      continue;
    }
    uint64_t seq = 0;
    rc = WithRetry(RequestKind::kDelete, [&] {
      return Numbered(&seq, [&] { return client_->DeleteSync(full, stat.version); });
    });
    if (rc != ClientCode::kOk && rc != ClientCode::kNoNode && rc != ClientCode::kBadVersion) {
      return ToStatus(rc, key);
    }
    if (rc == ClientCode::kBadVersion) continue;
    ApplyLocalWrite(full, std::nullopt, seq);
    auto created = Create(full, value, CreateMode::kEphemeral, true);
    if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
  }
  return Status(StatusCode::kBadVersion,
                fmt::format("{}: changed hands {} times while being made ephemeral", key, kRounds));
}

Result<std::string> ComposedRegistry::PersistSequential(std::string_view key,
                                                        std::string_view value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  auto created = Create(Full(key), value, CreateMode::kPersistentSequential, true);
  if (!created.ok()) return created.status();
  return Relative(*created);
}

Result<std::string> ComposedRegistry::PersistEphemeralSequential(std::string_view key,
                                                                 std::string_view value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  auto created = Create(Full(key), value, CreateMode::kEphemeralSequential, true);
  if (!created.ok()) return created.status();
  return Relative(*created);
}

LeaderLatch::Hooks ComposedRegistry::LatchHooks() {
  LeaderLatch::Hooks hooks;
  hooks.with_retry = [this](RequestKind kind, const std::function<ClientCode()>& attempt) {
    return WithRetry(kind, attempt);
  };
  hooks.to_status = [this](ClientCode rc, const std::string& full) {
    return ToStatus(rc, Relative(full));
  };
  hooks.cached_exists = [this](const std::string& full) -> std::optional<bool> {
    switch (CacheKnows(full)) {
      case Known::kPresent:
        return true;
      case Known::kAbsent:
        return false;
      case Known::kUnknown:
        break;
    }
    return std::nullopt;
  };
  // The latch's writes as ours: numbered, then applied to the caches (a container just made is
  // there for the leader node written below it next).
  hooks.create = [this](const std::string& full, CreateMode mode, std::string* created) {
    uint64_t seq = 0;
    ClientCode rc = Numbered(&seq, [&] { return client_->CreateSync(full, "", mode, created); });
    if (rc == ClientCode::kOk) {
      ApplyLocalWrite(created != nullptr ? *created : full, std::string(), seq);
    }
    return rc;
  };
  hooks.make_containers = [this](const std::string& full, bool trust_cache) {
    return CreateChain(full, CreateMode::kContainer, trust_cache);
  };
  hooks.remove = [this](const std::string& full) {
    uint64_t seq = 0;
    ClientCode rc = Numbered(&seq, [&] { return client_->DeleteSync(full, -1); });
    if (rc == ClientCode::kOk) ApplyLocalWrite(full, std::nullopt, seq);
    return rc;
  };
  return hooks;
}

Status ComposedRegistry::ExecuteInLeader(std::string_view key,
                                         const std::function<void()>& callback) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  return latch_.ExecuteInLeader(Full(key), key, callback);
}

Status ComposedRegistry::CreateContainer(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  return CreateChain(Full(key), CreateMode::kContainer);
}

Status ComposedRegistry::CreateContainerBelow(std::string_view key, std::string_view present) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  if (Status s = ValidateKey(present); !s.ok()) return s;
  return CreateChain(Full(key), CreateMode::kContainer, /*trust_cache=*/true, Full(present));
}

Status ComposedRegistry::Remove(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::function<Status(const std::string&)> remove = [&](const std::string& full) -> Status {
    for (int round = 0; round < 5; ++round) {
      // A leaf (the common case) goes in one round trip; children are listed only when the
      // server says there are some.
      uint64_t seq = 0;
      ClientCode rc = WithRetry(RequestKind::kDelete, [&] {
        return Numbered(&seq, [&] { return client_->DeleteSync(full, -1); });
      });
      if (rc == ClientCode::kOk || rc == ClientCode::kNoNode) {
        ApplyLocalWrite(full, std::nullopt, seq);
        return Status::Ok();
      }
      if (rc != ClientCode::kNotEmpty) return ToStatus(rc, Relative(full));
      auto children = GetChildrenDirectly(Relative(full));
      if (!children.ok()) {
        return children.status().code() == StatusCode::kNotFound ? Status::Ok() : children.status();
      }
      for (const auto& c : *children) {
        if (Status s = remove(ChildKey(full, c)); !s.ok()) return s;
      }
    }
    return Status(StatusCode::kFailedPrecondition,
                  fmt::format("remove {}: children keep being added", Relative(full)));
  };
  return remove(Full(key));
}

std::unique_ptr<ComposedRegistry::Multi> ComposedRegistry::PrepareMulti(
    std::vector<TransactionOp> ops, bool stamped) const {
  auto m = std::make_unique<Multi>();
  m->ops = std::move(ops);
  m->stamped = stamped;
  if (stamped && m->ops.back().type == TransactionOp::Type::kCreate) {
    // A multi-op's creates answer with their paths only; a set answers with the node's stat,
    // whose mzxid is the multi-op's zxid. The set writes the value just created (the
    // node's version moves to 1; readers of a running mark look at its value or existence).
    const TransactionOp& created = m->ops.back();
    m->ops.push_back(TransactionOp::SetData(created.key, created.value));
  }
  const size_t n = m->ops.size();
  m->steps.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& op = m->ops[i];
    ClientOp& step = m->steps[i];
    step.path = Full(op.key);
    switch (op.type) {
      case TransactionOp::Type::kCheckExists:
        step.type = ClientOp::Type::kCheck;
        break;
      case TransactionOp::Type::kCreate:
        step.type = ClientOp::Type::kCreate;
        step.value = op.value;
        step.mode = op.mode;
        break;
      case TransactionOp::Type::kSetData:
        step.type = ClientOp::Type::kSet;
        step.value = op.value;
        step.want_stat = stamped && i + 1 == n;
        break;
      case TransactionOp::Type::kDelete:
        step.type = ClientOp::Type::kDelete;
        break;
    }
  }
  return m;
}

Status ComposedRegistry::FinishMulti(Multi& m, ClientCode rc) {
  if (rc != ClientCode::kOk) {
    for (size_t i = 0; i < m.results.size(); ++i) {
      if (StepFailed(m.results[i].code)) {
        Status s = ToStatus(m.results[i].code, m.ops[i].key);
        return Status(s.code(), fmt::format("transaction step {}: {}", i + 1, s.message()));
      }
    }
    return ToStatus(rc, "transaction");
  }
  for (size_t i = 0; i < m.ops.size(); ++i) {
    switch (m.ops[i].type) {
      case TransactionOp::Type::kCreate:
        ApplyLocalWrite(m.results[i].path, m.ops[i].value, m.seq);
        break;
      case TransactionOp::Type::kSetData:
        ApplyLocalWrite(m.steps[i].path, m.ops[i].value, m.seq);
        break;
      case TransactionOp::Type::kDelete:
        ApplyLocalWrite(m.steps[i].path, std::nullopt, m.seq);
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

Status ComposedRegistry::ExecuteInTransaction(const std::vector<TransactionOp>& ops) {
  return ExecuteMulti(ops, /*stamped=*/false).status();
}

Result<int64_t> ComposedRegistry::ExecuteMulti(const std::vector<TransactionOp>& ops,
                                               bool stamped) {
  for (const auto& op : ops) {
    if (Status s = ValidateKey(op.key); !s.ok()) return s;
  }
  if (stamped) {
    if (Status s = ValidateStampable(ops); !s.ok()) return s;
  }
  if (ops.empty()) return int64_t{0};
  auto m = PrepareMulti(ops, stamped);
  ClientCode rc = WithRetry(RequestKind::kMulti, [&] {
    return Numbered(&m->seq, [&] { return client_->MultiSync(m->steps, &m->results); });
  });
  if (Status s = FinishMulti(*m, rc); !s.ok()) return s;
  return stamped ? m->stamp() : int64_t{0};
}

// An asynchronous transaction between its sending and its completion. The answer arrives on
// the client's event thread, which must not block (a cache refresh in progress waits for
// that thread while it holds its locks): Complete runs the rest on `executor`.
struct ComposedRegistry::PendingMulti {
  ComposedRegistry* self;
  std::unique_ptr<Multi> multi;
  Executor* executor;
  std::function<void(Result<int64_t>)> done;  // the zxid when stamped, else 0
  ClientCode rc = ClientCode::kOk;

  static void Complete(PendingMulti* pending) {
    // Owned by the task: an executor already stopped (its owner tearing down while a
    // transaction was still out) drops the task, and `pending` with it, unanswered.
    std::shared_ptr<PendingMulti> owned(pending);
    Executor* executor = owned->executor;
    executor->Post([owned = std::move(owned)] {
      PendingMulti* p = owned.get();
      // The session it was sent in is over (expired, or replaced while it was on its way):
      // it fails. It was planned in that session, whose ephemeral nodes and whose view of
      // who owns what are gone: sent again in the next one, a run's clearing of its running
      // marks deleted the marks of the instance that had taken its items over (issue 24).
      // Other connection trouble (the same session, reconnecting): again on the current
      // session (ExecuteInTransaction waits for it, and answers kClosing at once when the
      // registry itself is closing).
      const bool session_over = p->rc == ClientCode::kSessionExpired ||
                                p->rc == ClientCode::kInvalidState ||
                                (p->rc == ClientCode::kClosing && !p->self->Closing());
      Multi& m = *p->multi;
      Result<int64_t> r = int64_t{0};
      if (p->rc != ClientCode::kOk && p->self->Closing()) {
        // Closed by its owner, not ended by the server: CANCELLED, as a blocking call's.
        r = p->self->FinishMulti(m, ClientCode::kClosing);
      } else if (session_over) {
        r = p->self->FinishMulti(m, ClientCode::kSessionExpired);
      } else if (Retryable(p->rc)) {
        r = p->self->ExecuteMulti(m.ops, m.stamped);  // a stamped one ends with its set now
      } else if (Status s = p->self->FinishMulti(m, p->rc); !s.ok()) {
        r = std::move(s);
      } else if (m.stamped) {
        r = m.stamp();
      }
      p->done(std::move(r));
    });
  }
};

void ComposedRegistry::ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                                 std::function<void(Status)> done) {
  SendTransaction(std::move(ops), /*stamped=*/false, executor,
                  [done = std::move(done)](Result<int64_t> r) { done(r.status()); });
}

void ComposedRegistry::ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops,
                                                        Executor& executor,
                                                        std::function<void(Result<int64_t>)> done) {
  if (Status s = ValidateStampable(ops); !s.ok()) {
    executor.Post([s, done = std::move(done)] { done(s); });
    return;
  }
  SendTransaction(std::move(ops), /*stamped=*/true, executor, std::move(done));
}

void ComposedRegistry::SendTransaction(std::vector<TransactionOp> ops, bool stamped,
                                       Executor& executor,
                                       std::function<void(Result<int64_t>)> done) {
  for (const auto& op : ops) {
    if (Status s = ValidateKey(op.key); !s.ok()) {
      executor.Post([s, done = std::move(done)] { done(s); });
      return;
    }
  }
  auto* p =
      new PendingMulti{this, PrepareMulti(std::move(ops), stamped), &executor, std::move(done)};
  if (p->multi->ops.empty()) return PendingMulti::Complete(p);
  // Batched with the transactions sent while a multi-op is on its way (WritePipeline). `p`
  // and its steps live until the answer, which the pipeline gives exactly once.
  pipeline_.Send(p->multi->steps,
                 [p](ClientCode rc, std::vector<ClientOpResult> results, uint64_t seq) {
                   p->multi->results = std::move(results);
                   p->multi->seq = seq;
                   p->rc = rc;
                   PendingMulti::Complete(p);
                 });
}

// ---- the lease ----------------------------------------------------------------------

bool ComposedRegistry::LeaseHeld() { return lease_.Held(); }

std::chrono::steady_clock::time_point ComposedRegistry::lease_expiry() { return lease_.expiry(); }

bool ComposedRegistry::AwaitLease(std::chrono::steady_clock::time_point deadline) {
  return lease_.Await(deadline);
}

Result<int64_t> ComposedRegistry::GetRegistryCenterTime(std::string_view key) {
  if (Status s = Persist(key, ""); !s.ok()) return s;
  std::string full = Full(key);
  NodeStat stat;
  ClientCode rc =
      WithRetry(RequestKind::kExists, [&] { return client_->ExistsSync(full, nullptr, &stat); });
  if (rc != ClientCode::kOk) return ToStatus(rc, key);
  return stat.mtime;
}

std::map<std::string, uint64_t> ComposedRegistry::request_counts() const {
  static constexpr const char* kNames[] = {"get", "children", "exists", "create",
                                           "set", "delete",   "multi"};
  std::map<std::string, uint64_t> out;
  for (size_t i = 0; i < requests_.size(); ++i) out[kNames[i]] = requests_[i].load();
  return out;
}

// ---- subtree caches ----------------------------------------------------------------------

void ComposedRegistry::ApplyLocalWrite(const std::string& full,
                                       const std::optional<std::string>& value, uint64_t seq) {
  if (before_local_apply_for_testing_) before_local_apply_for_testing_(full);
  caches_.ApplyLocalWrite(full, value, seq);
}

Result<std::unique_ptr<CountedSubscription>> ComposedRegistry::WatchTree(
    std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
    WatchPolicy policy) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  return caches_.Watch(Full(key), executor, std::move(callback), std::move(policy));
}

}  // namespace elasticjob::reg
