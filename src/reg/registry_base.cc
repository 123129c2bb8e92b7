#include "reg/registry_base.h"

#include <fmt/format.h>

#include <algorithm>

namespace elasticjob {

const char* ConnectionStateName(ConnectionState state) {
  switch (state) {
    case ConnectionState::kConnected:
      return "CONNECTED";
    case ConnectionState::kSuspended:
      return "SUSPENDED";
    case ConnectionState::kReconnected:
      return "RECONNECTED";
    case ConnectionState::kLost:
      return "LOST";
  }
  return "UNKNOWN";
}

namespace reg {

Status ValidateStampable(const std::vector<TransactionOp>& ops) {
  const bool ok = !ops.empty() && (ops.back().type == TransactionOp::Type::kSetData ||
                                   (ops.back().type == TransactionOp::Type::kCreate &&
                                    ops.back().mode != CreateMode::kPersistentSequential &&
                                    ops.back().mode != CreateMode::kEphemeralSequential));
  if (ok) return Status::Ok();
  return Status(StatusCode::kInvalidArgument,
                "a stamped transaction ends with a set or a create of a node that is not "
                "sequential");
}

Status ValidateKey(std::string_view key) {
  if (key == "/") return Status::Ok();
  if (key.empty() || key.front() != '/' || key.back() == '/') {
    return InvalidArgument(fmt::format("key '{}': must start with '/' and not end with '/'", key));
  }
  size_t start = 1;
  while (start <= key.size()) {
    size_t slash = key.find('/', start);
    std::string_view seg =
        key.substr(start, slash == std::string_view::npos ? key.npos : slash - start);
    if (seg.empty() || seg == "." || seg == ".." || seg.find('\0') != std::string_view::npos) {
      return InvalidArgument(fmt::format("key '{}': empty, '.' or '..' segment", key));
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

std::string_view ParentView(std::string_view key) {
  const size_t slash = key.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return key.substr(0, slash);
}

std::string ParentKey(std::string_view key) { return std::string(ParentView(key)); }

std::string ChildKey(const std::string& parent, std::string_view name) {
  std::string out = parent == "/" ? std::string() : parent;
  out += '/';
  out += name;
  return out;
}

bool NamesChildren(const NodeWatches& w) {
  return !w.children && (!w.named_children.empty() || w.children_outside);
}

bool IsNamed(const NodeWatches& w, std::string_view leaf) {
  return std::find(w.named_children.begin(), w.named_children.end(), leaf) !=
         w.named_children.end();
}

bool PolicyCovers(const WatchPolicy& policy, std::string_view root, std::string_view full,
                  size_t prefix) {
  if (!policy) return true;
  auto relative = [prefix](std::string_view p) {
    return p.size() <= prefix ? std::string_view("/") : p.substr(prefix);
  };
  for (std::string_view p = full; p.size() > root.size();) {
    size_t slash = p.rfind('/');
    std::string_view parent = p.substr(0, slash == 0 ? 1 : slash);
    const NodeWatches w = policy(relative(parent));
    if (NamesChildren(w) && !IsNamed(w, p.substr(slash + 1))) return false;
    p = parent;
  }
  return true;
}

void SubscriptionState::Cancel() {
  {
    MutexLock lock(&post_mu);
    active = false;
  }
  if (running.load() == std::this_thread::get_id()) return;  // from inside its own callback
  std::lock_guard<std::recursive_mutex> wait_for_delivery(mu);
}

void SubscriptionState::PostIfActive(Executor& executor, std::function<void()> task) {
  MutexLock lock(&post_mu);
  if (active) executor.Post(std::move(task));
}

void SubscriptionState::Run(const std::function<void()>& fn) {
  std::lock_guard<std::recursive_mutex> lock(mu);
  if (!active) return;
  running = std::this_thread::get_id();
  fn();
  running = std::thread::id();
}

Result<std::vector<std::string>> RegistryBase::GetChildrenKeysDirectly(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  auto children = GetChildrenDirectly(key);
  if (!children.ok()) return children;
  std::sort(children->begin(), children->end(), std::greater<>());
  return children;
}

std::unique_ptr<Subscription> RegistryBase::AddConnectionStateListener(
    Executor& executor, std::function<void(ConnectionState)> callback) {
  auto state = std::make_shared<SubscriptionState>();
  MutexLock lock(&listeners_mu_);
  std::erase_if(listeners_, [](const Listener& l) { return !l.state->active.load(); });
  listeners_.push_back({&executor, std::move(callback), state});
  return std::make_unique<SubscriptionHandle>(state);
}

void RegistryBase::NotifyConnectionState(ConnectionState s) {
  switch (s) {
    case ConnectionState::kConnected:
      stats_->SetState(SessionState::kConnected);
      break;
    case ConnectionState::kReconnected:
      stats_->SetState(SessionState::kConnected);
      stats_->reconnects.Inc();
      break;
    case ConnectionState::kSuspended:
      stats_->SetState(SessionState::kSuspended);
      break;
    case ConnectionState::kLost:
      stats_->SetState(SessionState::kLost);
      stats_->expiries.Inc();
      break;
  }
  MutexLock lock(&listeners_mu_);
  for (const Listener& l : listeners_) {
    auto state = l.state;
    auto cb = l.callback;
    state->PostIfActive(*l.executor, [state, cb, s] { state->Run([&] { cb(s); }); });
  }
}

void RegistryBase::MarkClosed() { stats_->SetState(SessionState::kClosed); }

}  // namespace reg
}  // namespace elasticjob
