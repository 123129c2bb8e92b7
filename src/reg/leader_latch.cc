#include "reg/leader_latch.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "reg/registry_base.h"

namespace elasticjob::reg {

namespace {

std::string RandomUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t a = rng(), b = rng();
  a = (a & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF,
                     b >> 48, b & 0xFFFFFFFFFFFFULL);
}

// Curator's StandardLockInternalsDriver.fixForSorting: the part after the lock name.
std::string_view SequenceOf(std::string_view child) {
  size_t pos = child.rfind("latch-");
  return pos == std::string_view::npos ? child : child.substr(pos + 6);
}

}  // namespace

LeaderLatch::LeaderLatch(RegistryClient& client, std::string floor, Hooks hooks)
    : client_(client), floor_(std::move(floor)), hooks_(std::move(hooks)) {}

void LeaderLatch::Wake() {
  {
    MutexLock lock(&mu_);
    ++wakes_;
  }
  cv_.SignalAll();
}

void LeaderLatch::Close() {
  {
    MutexLock lock(&mu_);
    closed_ = true;
    ++wakes_;
  }
  cv_.SignalAll();
}

void LeaderLatch::Open() {
  MutexLock lock(&mu_);
  closed_ = false;
}

ClientCode LeaderLatch::CreateOnce(const std::string& full, CreateMode mode, std::string* created) {
  if (hooks_.create) return hooks_.create(full, mode, created);
  return client_.CreateSync(full, "", mode, created);
}

ClientCode LeaderLatch::RemoveOnce(const std::string& full) {
  if (hooks_.remove) return hooks_.remove(full);
  return client_.DeleteSync(full, -1);
}

Status LeaderLatch::MakeContainers(const std::string& full, bool trust_cache) {
  if (hooks_.make_containers) return hooks_.make_containers(full, trust_cache);
  std::vector<std::string> chain;  // deepest first
  for (std::string p = full; p != floor_ && p != "/"; p = ParentKey(p)) {
    if (trust_cache && hooks_.cached_exists && hooks_.cached_exists(p) == true) break;
    chain.push_back(p);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    ClientCode rc = hooks_.with_retry(
        RequestKind::kCreate, [&] { return CreateOnce(*it, CreateMode::kContainer, nullptr); });
    if (rc != ClientCode::kOk && rc != ClientCode::kNodeExists) return hooks_.to_status(rc, *it);
  }
  return Status::Ok();
}

Result<std::string> LeaderLatch::CreateNode(const std::string& latch, const std::string& prefix) {
  const std::string node = latch + "/" + prefix;
  // Usually the latch is there and this is one create. When the server says it is not (never
  // made, or reaped as an empty container an instant ago, which a cache may not know yet),
  // the containers are made again, asking the server, and the create is tried again.
  bool make_parents = hooks_.cached_exists && hooks_.cached_exists(latch) == false;
  for (int round = 0; round < 8; ++round) {
    if (make_parents) {
      // NOT_FOUND: an emptied container above went meanwhile (`election` once `latch` is
      // gone): make the chain again.
      Status s = MakeContainers(latch, /*trust_cache=*/round == 0);
      if (s.code() == StatusCode::kNotFound) continue;
      if (!s.ok()) return s;
    }
    std::string created;
    ClientCode rc = hooks_.with_retry(RequestKind::kCreate, [&] {
      return CreateOnce(node, CreateMode::kEphemeralSequential, &created);
    });
    if (rc == ClientCode::kOk) return created.substr(created.rfind('/') + 1);
    if (rc != ClientCode::kNoNode) return hooks_.to_status(rc, node);
    make_parents = true;
  }
  return Status(StatusCode::kInternal,
                fmt::format("latch {}: its container keeps being deleted", latch));
}

Status LeaderLatch::ExecuteInLeader(const std::string& latch, std::string_view key,
                                    const std::function<void()>& callback) {
  const std::string prefix = "_c_" + RandomUuid() + "-latch-";
  std::string ours;  // our node's name, empty until created
  bool cancelled = false;
  while (true) {
    uint64_t wakes;
    {
      MutexLock lock(&mu_);
      cancelled = closed_;
      wakes = wakes_;
    }
    if (cancelled) break;
    if (ours.empty()) {
      // First round, or our node went with an expired session: (re)create it.
      auto created = CreateNode(latch, prefix);
      if (!created.ok()) return created.status();
      ours = *created;
      continue;  // look at the wake count again before listing
    }
    std::vector<std::string> names;
    ClientCode rc = hooks_.with_retry(RequestKind::kChildren,
                                      [&] { return client_.ChildrenSync(latch, nullptr, &names); });
    if (rc != ClientCode::kOk && rc != ClientCode::kNoNode) return hooks_.to_status(rc, latch);
    if (std::find(names.begin(), names.end(), ours) == names.end()) {
      ours.clear();  // gone with an expired session
      continue;
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return SequenceOf(a) < SequenceOf(b);
    });
    auto it = std::find(names.begin(), names.end(), ours);
    if (it == names.begin()) break;  // the lowest sequence: we hold the latch
    const std::string before = latch + "/" + *(it - 1);
    rc = hooks_.with_retry(RequestKind::kExists,
                           [&] { return client_.ExistsSync(before, &watch_, nullptr); });
    if (rc == ClientCode::kNoNode) continue;  // the one before us is gone already
    if (rc != ClientCode::kOk) return hooks_.to_status(rc, before);
    MutexLock lock(&mu_);
    while (wakes_ == wakes) cv_.Wait();
  }
  if (!cancelled) callback();
  // Our node goes: after the callback, or when closed while waiting (one attempt then: the
  // session is ending, which takes the node anyway).
  Status deleted = Status::Ok();
  if (!ours.empty()) {
    const std::string node = latch + "/" + ours;
    auto remove = [&] { return RemoveOnce(node); };
    ClientCode rc = cancelled ? remove() : hooks_.with_retry(RequestKind::kDelete, remove);
    if (rc != ClientCode::kOk && rc != ClientCode::kNoNode && !cancelled) {
      deleted = hooks_.to_status(rc, node);
    }
  }
  if (cancelled) {
    return Status(StatusCode::kCancelled, fmt::format("registry closed while waiting for {}", key));
  }
  return deleted;
}

}  // namespace elasticjob::reg
