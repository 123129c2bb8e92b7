// LeaderLatch: Curator's LeaderLatch recipe, as ElasticJob's LeaderService runs it through
// CoordinatorRegistryCenter.executeInLeader, over the client seam (reg/client/registry_client.h).
// The registry's ExecuteInLeader is this component's (docs/registry.md, "The components").
//
// The recipe, for a latch at `latch`:
// 1. Create our contender node `latch/_c_{uuid}-latch-{sequence}`, ephemeral and sequential,
//    with `latch` and its missing ancestors as containers (Curator's
//    creatingParentContainersIfNeeded). The server reaps an empty container at any moment, so
//    a parent gone between its creation and the node's is made again.
// 2. List `latch`'s children, sorted by their sequence (the part after "latch-"). The lowest
//    holds the latch: the callback runs, then our node is deleted.
// 3. Otherwise set an exists watch on the node just before ours and wait until it fires, the
//    session changes or the latch closes; then go to 2 (to 1 when our node went with an
//    expired session).
//
// Thread safety: safe for concurrent use; any number of ExecuteInLeader calls may wait at
// once (each its own contender). One lock (`mu_`), never held while calling the client or a
// callback. The latch's one Watcher is set with every exists watch, so the client must be
// closed (Close or ReplaceSession closes its handle) before the latch is destroyed.
#ifndef ELASTICJOB_REG_LEADER_LATCH_H_
#define ELASTICJOB_REG_LEADER_LATCH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "reg/client/registry_client.h"

namespace elasticjob::reg {

class LeaderLatch {
 public:
  struct Hooks {
    // Runs `attempt` (one request of `kind`) through the registry's retries. Required.
    std::function<ClientCode(RequestKind kind, const std::function<ClientCode()>& attempt)>
        with_retry;
    // The error a request on `full` that met `rc` returns. Required.
    std::function<Status(ClientCode rc, const std::string& full)> to_status;
    // Whether the registry's caches know that `full` is there (true) or not (false); nullopt
    // when no cache covers it. Optional: without it every level is asked of the server.
    std::function<std::optional<bool>(const std::string& full)> cached_exists;
    // One attempt at creating `full` (empty, with `mode`; `created` gets the created path) and
    // at deleting it, as the registry's own writes are made: the registry numbers them and
    // applies them to its caches, so that what it writes next below a container just made is
    // in its caches at once. Optional: without them the client's CreateSync and DeleteSync.
    std::function<ClientCode(const std::string& full, CreateMode mode, std::string* created)>
        create;
    std::function<ClientCode(const std::string& full)> remove;
    // Makes `full` and its missing ancestors below the floor as containers, as the registry
    // makes a chain (every level handed over before the first answer: one round trip), with
    // `trust_cache` as MakeContainers below. Optional: without it, one level at a time.
    std::function<Status(const std::string& full, bool trust_cache)> make_containers;
  };

  // `floor`: a full path the latch never creates nor climbs above (the namespace's root).
  // `client` must outlive the latch.
  LeaderLatch(RegistryClient& client, std::string floor, Hooks hooks);

  LeaderLatch(const LeaderLatch&) = delete;
  LeaderLatch& operator=(const LeaderLatch&) = delete;

  // Waits until this session holds the latch at `latch` (a full path below the floor), runs
  // `callback` on the calling thread, then deletes our node. `key` names the latch in
  // messages. CANCELLED once Close was called, waiting or not; another error is the failed
  // request's (to_status). REQUIRES: not on a callback of the client.
  Status ExecuteInLeader(const std::string& latch, std::string_view key,
                         const std::function<void()>& callback);

  // Wakes every waiter to look again (the session changed: a watch may be gone with it).
  void Wake();
  // Waiters return CANCELLED, and so does every later call until Open.
  void Close();
  // Takes calls again after Close (the registry opened again).
  void Open();

 private:
  // The latch's watcher: whatever fires wakes every waiter, who each look again.
  struct WakeWatch final : Watcher {
    explicit WakeWatch(LeaderLatch* owner) : latch(owner) {}
    void OnWatch(const WatchEvent&) override { latch->Wake(); }
    LeaderLatch* latch;
  };

  // Creates our contender node `latch`/`prefix` + sequence; returns its name.
  Result<std::string> CreateNode(const std::string& latch, const std::string& prefix);
  // Creates `full` and its missing ancestors below the floor as containers, top down; with
  // `trust_cache`, stops at the first level a cache knows is there.
  Status MakeContainers(const std::string& full, bool trust_cache);
  ClientCode CreateOnce(const std::string& full, CreateMode mode, std::string* created);
  ClientCode RemoveOnce(const std::string& full);

  RegistryClient& client_;
  const std::string floor_;
  const Hooks hooks_;
  WakeWatch watch_{this};

  Mutex mu_;
  CondVar cv_{&mu_};
  uint64_t wakes_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // moves on every Wake
  bool closed_ ELASTICJOB_GUARDED_BY(mu_) = false;
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_LEADER_LATCH_H_
