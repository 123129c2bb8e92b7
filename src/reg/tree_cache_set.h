// TreeCacheSet: the registry's watch-fed subtree caches over the client seam
// (reg/client/registry_client.h): what `Watch(key)` keeps in memory (docs/registry.md,
// "Caches"). Each cache holds the subtree at its root, kept fresh by one-shot watches that
// each refresh sets again (the 3.8 C API has no persistent recursive watches), thinned by the
// cache's WatchPolicy; every watch that fired since the last pass is read again in one
// pipelined batch, and a subtree loads one round trip per level. A refresh stages every
// level it reads and applies them all under one hold of the data lock, so a reader sees a
// refresh whole or not at all (never a new item node without its owner, nor the sharding flag
// gone one level before the owners written with it). After a new session (or a reconnect)
// the registry calls ResyncAll: every cache is read again, deep, and the differences are
// delivered as events.
//
// The registry's own writes are applied at once (ApplyLocalWrite: read-your-writes), without
// waiting for a refresh in progress; a read of that refresh sent before the write shows the
// node as it was and is not applied over it, and a read sent after it (newer) is not undone
// by it. Requests are numbered in the order they leave (Hooks::next_seq and Hooks::numbered,
// the registry's numbering, which its write pipeline shares).
//
// Threads: watch events arrive on the client's event thread and only queue their path
// (MarkDirty); the registry's worker runs the refreshes (Hooks::schedule_refresh) and
// ResyncAll; Watch loads on the calling thread (concurrent calls load together); reads and
// ApplyLocalWrite run on any thread. Events are posted to each subscription's executor.
//
// Thread safety: safe for concurrent use. Locks, in the order they may nest: `refresh_mu_`
// (one refresh or load at a time, held across its round trips), `watch_mu_` (the Watch calls
// waiting for a load; taken alone, or briefly under `refresh_mu_`), `data_mu_` (the caches;
// never held while waiting for the server, so a cached read waits for no round trip),
// `dirty_mu_` (the queue of fired watches).
// `refresh_mu_` is held across a load, its hooks included (a test seam may write: our writes
// take `data_mu_` only); `data_mu_` and `dirty_mu_` are held while calling no hook but
// `schedule_refresh` (under `dirty_mu_`; it only posts), and no callback (events are posted
// to the subscriptions' executors).
#ifndef ELASTICJOB_REG_TREE_CACHE_SET_H_
#define ELASTICJOB_REG_TREE_CACHE_SET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"
#include "reg/registry_base.h"
#include "reg/reply_latch.h"

namespace elasticjob::reg {

class TreeCacheSet {
 public:
  struct Hooks {
    // A number in the registry's order of requests, taken now (an asynchronous write's,
    // or a read's that was not handed over). Required.
    std::function<uint64_t()> next_seq;
    // Runs `send`, which hands requests to the client, and returns the number the last of
    // them got as the client handed it over (next_seq() when none was). Required.
    std::function<uint64_t(const std::function<void()>& send)> numbered;
    // Runs `refresh` on the registry's worker, after its batching window (cacheBatchMs).
    // Called under `dirty_mu_`: must only post. Required.
    std::function<void(std::function<void()> refresh)> schedule_refresh;
    // Runs one blocking request (`attempt`) through the registry's retries. Required.
    std::function<ClientCode(RequestKind, const std::function<ClientCode()>& attempt)> retry;
    // Test seams, on the loading thread: before a level's reads are handed to the client,
    // and once they have been (before their replies are awaited). Optional.
    std::function<void()> before_send;
    std::function<void()> after_send;
  };

  // What the caches say of a node: there, not there, or no cache covers it.
  enum class Known { kPresent, kAbsent, kUnknown };

  // `client` must outlive the set, and must have answered every read sent (Close answers
  // what it owed) before the set is destroyed. `prefix` is the namespace ("/ns"): events
  // and policies name keys below it.
  TreeCacheSet(RegistryClient& client, std::string prefix, Hooks hooks);
  TreeCacheSet(const TreeCacheSet&) = delete;
  TreeCacheSet& operator=(const TreeCacheSet&) = delete;

  // Loads the subtree at `full` into a new cache (one round trip per level; Watch calls
  // made while a load is in progress load together) and registers it: from then on its
  // changes are delivered to `callback` on `executor`, and its change count moves. Our
  // writes made while it loaded are in it when Watch returns. The subscription's
  // destruction unregisters the cache. REQUIRES: `full` a valid full path.
  std::unique_ptr<CountedSubscription> Watch(const std::string& full, Executor& executor,
                                             std::function<void(const TreeEvent&)> callback,
                                             WatchPolicy policy);

  // ---- cached reads (no round trip) ----
  // The value of `full` in the deepest cache covering it: {covered, value or nullopt when
  // the cache says absent}; {} (not covered) when no cache covers it.
  CachedRead Read(const std::string& full);
  // Whether the caches hold `full` (kUnknown: no cache covers it).
  Known Knows(const std::string& full);
  // The children of `full` as its cache holds them, into `out` (in ascending order):
  // kPresent; kAbsent when the cache says `full` is not there; kUnknown when no cache covers
  // it or the cache keeps only named children of it (or none: the list is the server's).
  Known Children(const std::string& full, std::vector<std::string>* out);
  // The nodes held, over every cache (a metric, read at a scrape).
  int64_t node_count();

  // ---- our writes ----
  // Applies a write of ours the server accepted (`value`, or nullopt for a delete) to the
  // caches at once, so that this process reads its own writes. `seq` is the number the
  // write got as it was handed to the client. A cache that has meanwhile applied a read sent
  // after the write keeps what it read (it is newer: another instance may have changed the
  // node again, and no watch would tell); where that read did not cover the node, the node
  // is read again instead (rare: see ReadSince). A node created here is queued for the
  // reads that arm the watches it needs. A create or set under a parent the cache does not
  // hold brings that parent in too when its value is "" by contract (NodeWatches::
  // empty_value): the server took the write, so the parent was there, and its removal is
  // then an event like any other.
  void ApplyLocalWrite(const std::string& full, const std::optional<std::string>& value,
                       uint64_t seq);

  // ---- the registry's worker ----
  // Reads every cache again, deep (after a reconnect or a new session, whose watches may
  // be gone), and delivers the differences. REQUIRES: on the registry's worker.
  void ResyncAll();

  // Unregisters every cache and cancels its subscription (each waits for a delivery in
  // progress, outside the data lock). A refresh in progress applies to no cache.
  void Close();

  // Whether watch events are queued, or a refresh for them posted and not yet run (the
  // registry's WaitIdleForTesting).
  bool refresh_pending();

  // Bits of a queued path (MarkDirty): which of its watches fired, or a probe.
  static constexpr int kValueEvent = 1;     // its value watch fired
  static constexpr int kChildrenEvent = 2;  // its children watch fired
  // A named child (NodeWatches::named_children) not in the cache: set an exists watch, and
  // read it if it is there.
  static constexpr int kProbe = 4;
  // Queues `full` for the next refresh pass on the worker (a fired watch, or a node this
  // instance created whose watches must be armed).
  void MarkDirty(const std::string& full, int what);

  // How many times a level of a refresh reads, on top of its own reads, the paths whose
  // watches fired while it waited (LoadAll) before it goes on.
  static constexpr int kCatchUpRounds = 4;
  // How many nodes found gone a cache remembers (ReadSince).
  static constexpr size_t kMaxGone = 256;

 private:
  struct CachedNode {
    std::string value;
    std::set<std::string> children;
    // The sequence numbers of the reads that gave `value` and `children`: a write of ours
    // sent before them is already in what they read (ApplyLocalWrite).
    uint64_t value_seq = 0;
    uint64_t children_seq = 0;
  };
  struct TreeCache {
    std::string root;  // full path
    Executor* executor;
    std::function<void(const TreeEvent&)> callback;
    std::shared_ptr<SubscriptionState> state;
    WatchPolicy policy;  // may be null: watch everything
    // Guarded by the set's data_mu_, as `gone` below (a nested struct's fields cannot name
    // the enclosing object's mutex to the analysis).
    std::map<std::string, CachedNode> nodes;
    uint64_t read_seq = 0;  // the newest read applied (drops included)
    // Nodes a read of their own found gone, with that read's number (their parent's
    // children may not have been read since): the newest kMaxGone, and the newest number of
    // those evicted. GUARDED_BY(data_mu_).
    std::map<std::string, uint64_t> gone;
    uint64_t gone_evicted_seq = 0;
  };
  struct NodeRead;
  struct WatchLoad;
  using EventsByCache = std::map<std::shared_ptr<TreeCache>, std::vector<TreeEvent>>;
  // A (cache, path) to read, and which reads a known node needs (k*Event bits).
  struct LoadItem {
    std::shared_ptr<TreeCache> cache;
    std::string full;
    int what;
  };
  // The caches' watcher: a fired watch queues its path for the next refresh (MarkDirty).
  struct CacheWatch final : Watcher {
    explicit CacheWatch(TreeCacheSet* set) : self(set) {}
    void OnWatch(const WatchEvent& event) override;
    TreeCacheSet* self;
  };
  // A write of ours applied while a load's reads were on their way (it does not wait for the
  // load: a refresh's round trips would hold up every writer). A read sent before it (a
  // smaller number) shows the node as it was and must not undo it.
  struct LocalWrite {
    uint64_t seq = 0;
    bool written = false;  // a create or set; else a delete
    std::string value;     // what it wrote
  };
  // Our writes applied while Watch caches were loading: applied to those caches too once
  // they are registered.
  struct ReplayWrite {
    std::string full;
    std::optional<std::string> value;
    uint64_t seq;
  };

  std::string Relative(const std::string& full) const;
  // Reads each (cache, path) of `level` (value and children, arming their watches), then the
  // children the caches do not know yet, one round trip per tree level, staging every level;
  // then applies them all under one hold of data_mu_. `deep` (a resync after the session's
  // watches may have been lost) reloads every child too. A known child keeps its own
  // watches, which refresh it.
  void LoadAll(std::vector<LoadItem> level, bool deep, EventsByCache* events)
      ELASTICJOB_REQUIRES(refresh_mu_);
  // Hands the reads of `items` to the client, each answered to `latch`, into `reads`.
  void SendReads(std::vector<LoadItem>& items, bool deep, ReplyLatch& latch,
                 std::vector<std::unique_ptr<NodeRead>>& reads);
  // The reads the next level of a staged load needs after `reads` (answered, not yet
  // applied), as applying them (ApplyRead) would ask for them; `staged` holds the nodes
  // earlier levels of the load will add. REQUIRES: data_mu_ held.
  void StageNext(const std::vector<std::unique_ptr<NodeRead>>& reads, bool deep,
                 std::set<std::pair<TreeCache*, std::string>>& staged, std::vector<LoadItem>* next)
      ELASTICJOB_REQUIRES(data_mu_);
  // Applies one answered read to its cache; appends the events to `out`, the reads it then
  // needs to `next`, and a root found gone to `watch_roots`. REQUIRES: data_mu_ held.
  void ApplyRead(NodeRead& r, bool deep, std::vector<TreeEvent>& out, std::vector<LoadItem>* next,
                 std::vector<std::string>* watch_roots) ELASTICJOB_REQUIRES(data_mu_);
  // The (cache, path) reads for queued `paths`; takes data_mu_.
  std::vector<LoadItem> LevelOf(const std::map<std::string, int>& paths);
  // The paths queued so far (MarkDirty), taken out of the queue, as a level to read.
  std::vector<LoadItem> TakeDirty();
  // Reads every queued path again, in one pipelined batch (on the worker).
  void RefreshDirty();
  // Loads the caches of concurrent Watch calls together and registers them.
  void LoadWatches(const std::vector<std::shared_ptr<WatchLoad>>& batch)
      ELASTICJOB_REQUIRES(refresh_mu_);
  void DropFrom(TreeCache& cache, const std::string& full, std::vector<TreeEvent>* events)
      ELASTICJOB_REQUIRES(data_mu_);
  // Records that a read numbered `seq` found `full` gone. REQUIRES: data_mu_ held.
  static void RecordGone(TreeCache& cache, const std::string& full, uint64_t seq);
  // The cache-side half of ApplyLocalWrite, for one cache; appends to `events`.
  void ApplyLocalWriteTo(TreeCache& cache, const std::string& full,
                         const std::optional<std::string>& value, uint64_t seq,
                         std::vector<TreeEvent>* events) ELASTICJOB_REQUIRES(data_mu_);
  // The write of `full` applied after a read numbered `seq` was sent, or nullptr.
  const LocalWrite* WrittenAfter(const std::string& full, uint64_t seq) const
      ELASTICJOB_REQUIRES(data_mu_);
  // `children` (a read numbered `seq` of `full`'s) with our writes since applied to it.
  void MergeWritesAfter(const std::string& full, uint64_t seq,
                        std::set<std::string>& children) const ELASTICJOB_REQUIRES(data_mu_);
  // Whether `cache` holds, for `full`, a read newer than our write numbered `seq` (a create
  // or set when `written`, else a delete), so that the write must not be applied over it
  // (see ApplyLocalWrite). If it may but cannot tell (the record of a node found gone was
  // evicted), queues `full` and its parent to be read again and answers true too.
  bool ReadSince(TreeCache& cache, const std::string& full, bool written, uint64_t seq)
      ELASTICJOB_REQUIRES(data_mu_);
  // Posts `events` (full paths) to the cache's subscription, keys made relative.
  void Deliver(TreeCache& cache, std::vector<TreeEvent> events);
  NodeWatches WatchesOf(const TreeCache& cache, const std::string& full) const;
  // Whether `full` (at or below `cache.root`) is inside the cache: not a child that its
  // parent's policy leaves out by naming the others (NodeWatches::named_children).
  bool Covers(const TreeCache& cache, const std::string& full) const;
  // Whether `full` is one of its parent's named children in `cache`.
  bool IsNamedChild(const TreeCache& cache, const std::string& full) const;
  // The caches covering `full` (Covers).
  std::vector<std::shared_ptr<TreeCache>> CachesCovering(const std::string& full)
      ELASTICJOB_REQUIRES(data_mu_);
  // The deepest cache covering `full`, or nullptr.
  TreeCache* CacheFor(const std::string& full) ELASTICJOB_REQUIRES(data_mu_);
  // Calls `fn(cache)` for each cache covering `full`, the deepest root first, until it
  // returns true.
  template <typename Fn>
  void ForEachCacheAbove(const std::string& full, Fn fn) ELASTICJOB_REQUIRES(data_mu_);
  // How many '/' a full path has ("/" has none).
  static size_t Depth(std::string_view full);
  // Counts a cache root in or out of roots_at_depth_.
  void CountRoot(const std::string& root, int delta) ELASTICJOB_REQUIRES(data_mu_);

  RegistryClient& client_;
  const std::string prefix_;  // "/namespace"
  const Hooks hooks_;
  CacheWatch cache_watch_{this};

  // Watch calls waiting for their cache's load; one of them loads for all (LoadWatches).
  Mutex watch_mu_;
  CondVar watch_cv_{&watch_mu_};
  std::vector<std::shared_ptr<WatchLoad>> pending_watches_ ELASTICJOB_GUARDED_BY(watch_mu_);
  bool watch_loader_ ELASTICJOB_GUARDED_BY(watch_mu_) = false;

  Mutex refresh_mu_;  // serialises refreshes and loads (held across their round trips)

  Mutex data_mu_;
  // By root; several subscriptions may watch one key.
  // Hashed, looked up by views: every read and write looks up each ancestor of its key
  // (CachesCovering).
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view path) const noexcept {
      return std::hash<std::string_view>{}(path);
    }
  };
  std::unordered_multimap<std::string, std::shared_ptr<TreeCache>, PathHash, std::equal_to<>>
      caches_ ELASTICJOB_GUARDED_BY(data_mu_);
  // How many of caches_' roots are at each depth (Depth): the ancestors at other depths are
  // not looked up.
  std::vector<uint32_t> roots_at_depth_ ELASTICJOB_GUARDED_BY(data_mu_);
  // Our writes applied while a load's reads were on their way (loading_), by path; cleared
  // when the load's levels are applied.
  std::map<std::string, LocalWrite> recent_writes_ ELASTICJOB_GUARDED_BY(data_mu_);
  bool loading_ ELASTICJOB_GUARDED_BY(data_mu_) = false;
  std::vector<ReplayWrite> watch_load_writes_ ELASTICJOB_GUARDED_BY(data_mu_);
  bool watch_loading_ ELASTICJOB_GUARDED_BY(data_mu_) = false;

  Mutex dirty_mu_;
  std::map<std::string, int> dirty_ ELASTICJOB_GUARDED_BY(dirty_mu_);  // path -> k* bits
  bool drain_posted_ ELASTICJOB_GUARDED_BY(dirty_mu_) = false;
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_TREE_CACHE_SET_H_
