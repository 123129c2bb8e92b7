// RegistryBase: key validation, subscription plumbing and the connection-state fan-out, under
// the registry class (reg/composed_registry.h). The leader latch is a
// component of its own (reg/leader_latch.h).
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_REG_REGISTRY_BASE_H_
#define ELASTICJOB_REG_REGISTRY_BASE_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/mutex.h"
#include "infra/change_epoch.h"
#include "reg/coordinator_registry.h"
#include "reg/registry_stats.h"

namespace elasticjob::reg {

// Checks `key` is "/" or "/a/b" (no empty, "." or ".." segments, no NUL).
Status ValidateKey(std::string_view key);
// OK when `ops` can be stamped (CoordinatorRegistry::ExecuteInTransactionStampedAsync: the last
// step writes a node whose name is known), else INVALID_ARGUMENT saying so.
Status ValidateStampable(const std::vector<TransactionOp>& ops);

// The parent of "/a/b" is "/a"; of "/a" is "/".
std::string ParentKey(std::string_view key);
// The same as a view into `key` (no string made; "/" for a top-level key).
std::string_view ParentView(std::string_view key);
// `name` below `parent`: "/a" and "b" make "/a/b"; "/" and "b" make "/b".
std::string ChildKey(const std::string& parent, std::string_view name);

// Whether `w` names the children a cache keeps (NodeWatches::named_children, with the
// children watch off; none with `children_outside`), and whether `leaf` is one of them.
bool NamesChildren(const NodeWatches& w);
bool IsNamed(const NodeWatches& w, std::string_view leaf);

// Whether `full` (at or below `root`; both full paths, whose first `prefix` characters are
// the namespace) is inside the view of `root` that `policy` keeps: neither it nor an
// ancestor below `root` is a child that its parent's policy leaves out by naming the others
// (NodeWatches::named_children). A null policy keeps everything.
bool PolicyCovers(const WatchPolicy& policy, std::string_view root, std::string_view full,
                  size_t prefix);

// Shared state of one subscription. Posting and running use separate locks, so a delivery
// that calls back into the registry never blocks the thread posting the next event (which
// may hold the registry's own locks).
struct SubscriptionState {
  Mutex post_mu;            // orders PostIfActive against Cancel
  std::recursive_mutex mu;  // held while a delivery runs
  std::atomic<bool> active{true};
  std::atomic<std::thread::id> running{};
  // A watch's change count (CountedSubscription::changes); `counted` is set before the handle is
  // made. Backends call Changed() in the same critical section as the change, so a reader
  // holding the backend's lock never sees the change without the count having moved.
  bool counted = false;
  std::atomic<uint64_t> changes{0};
  void Changed() {
    changes.fetch_add(1);
    infra::BumpChangeEpoch();  // after the count: see infra/change_epoch.h
  }
  // Stops deliveries; waits for one in progress unless called from inside it.
  void Cancel();
  // Runs `fn` unless cancelled.
  void Run(const std::function<void()>& fn);
  // Posts `task` to `executor` unless cancelled. Checked under the lock Cancel takes, so
  // once Cancel returns nothing more reaches the executor (which the owner may destroy).
  void PostIfActive(Executor& executor, std::function<void()> task);
};

class SubscriptionHandle final : public CountedSubscription {
 public:
  explicit SubscriptionHandle(std::shared_ptr<SubscriptionState> s,
                              std::function<void()> on_end = {})
      : state_(std::move(s)), on_end_(std::move(on_end)) {}
  ~SubscriptionHandle() override {
    state_->Cancel();
    if (on_end_) on_end_();
  }
  std::optional<uint64_t> changes() const override {
    if (!state_->counted) return std::nullopt;
    return state_->changes.load(std::memory_order_acquire);
  }
  std::shared_ptr<const std::atomic<uint64_t>> change_counter() const override {
    if (!state_->counted) return nullptr;
    return std::shared_ptr<const std::atomic<uint64_t>>(state_, &state_->changes);
  }

 private:
  std::shared_ptr<SubscriptionState> state_;
  std::function<void()> on_end_;
};

class RegistryBase : public CoordinatorRegistry {
 public:
  std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) override;
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override;

  const std::shared_ptr<RegistryStats>& stats() const override { return stats_; }

 protected:
  // Children names of `key` read from the server, unsorted.
  virtual Result<std::vector<std::string>> GetChildrenDirectly(std::string_view key) = 0;

  // Fans `state` out to the listeners, each on its executor.
  void NotifyConnectionState(ConnectionState state);
  // Marks the registry closed (the stats say so).
  void MarkClosed();

 private:
  struct Listener {
    Executor* executor;
    std::function<void(ConnectionState)> callback;
    std::shared_ptr<SubscriptionState> state;
  };
  Mutex listeners_mu_;
  std::vector<Listener> listeners_ ELASTICJOB_GUARDED_BY(listeners_mu_);
  const std::shared_ptr<RegistryStats> stats_ = std::make_shared<RegistryStats>();
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_REGISTRY_BASE_H_
