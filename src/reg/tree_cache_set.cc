#include "reg/tree_cache_set.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

namespace elasticjob::reg {

// One node read of a batch: its value and children, each with the cache's watch.
struct TreeCacheSet::NodeRead {
  std::shared_ptr<TreeCache> cache;
  std::string full;
  ReplyLatch* latch = nullptr;
  bool read_value = true;  // else the cached value stands (its watch did not fire)
  bool read_children = true;
  bool probe = false;  // an exists watch on a named child (kProbe); data_rc says if it is there
  bool empty_value = false;                 // its value is "" by contract: never read (NodeWatches)
  uint64_t seq = 0;                         // its number once its requests were handed over
  std::span<const std::string_view> named;  // the node's named children (NodeWatches)
  size_t named_present = 0;                 // NodeWatches::named_present
  bool names_children = false;              // the others are outside the cache (NamesChildren)
  ClientCode data_rc = ClientCode::kConnectionLoss;  // until answered
  ClientCode children_rc = ClientCode::kConnectionLoss;
  std::string value;
  std::vector<std::string> children;
};

struct TreeCacheSet::WatchLoad {
  std::shared_ptr<TreeCache> cache;
  bool done = false;  // guarded by the set's watch_mu_ (not nameable from a nested struct)
};

TreeCacheSet::TreeCacheSet(RegistryClient& client, std::string prefix, Hooks hooks)
    : client_(client), prefix_(std::move(prefix)), hooks_(std::move(hooks)) {}

std::string TreeCacheSet::Relative(const std::string& full) const {
  return full.size() == prefix_.size() ? "/" : full.substr(prefix_.size());
}

// ---- lookups ---------------------------------------------------------------------------

NodeWatches TreeCacheSet::WatchesOf(const TreeCache& cache, const std::string& full) const {
  if (!cache.policy) return {};
  return cache.policy(Relative(full));
}

bool TreeCacheSet::Covers(const TreeCache& cache, const std::string& full) const {
  return PolicyCovers(cache.policy, cache.root, full, prefix_.size());
}

bool TreeCacheSet::IsNamedChild(const TreeCache& cache, const std::string& full) const {
  if (!cache.policy || full.size() <= cache.root.size()) return false;
  const NodeWatches w = WatchesOf(cache, ParentKey(full));
  return NamesChildren(w) && IsNamed(w, std::string_view(full).substr(full.rfind('/') + 1));
}

template <typename Fn>
void TreeCacheSet::ForEachCacheAbove(const std::string& full, Fn fn) {
  // The ancestors are views of `full` (no string is made for them), and only those at a depth
  // some cache's root has are looked up: one lookup a key when every root is a job's.
  size_t depth = Depth(full);
  for (std::string_view p = full;; p = ParentView(p), depth = depth == 0 ? 0 : depth - 1) {
    if (depth < roots_at_depth_.size() && roots_at_depth_[depth] != 0) {
      auto [from, to] = caches_.equal_range(p);
      for (auto it = from; it != to; ++it) {
        if (Covers(*it->second, full) && fn(it->second)) return;
      }
    }
    if (p == "/" || p.empty()) return;
  }
}

std::vector<std::shared_ptr<TreeCacheSet::TreeCache>> TreeCacheSet::CachesCovering(
    const std::string& full) {
  // A lookup per ancestor, not a scan of every cache: a process with a thousand jobs has a
  // thousand caches, and this runs for every read and write.
  std::vector<std::shared_ptr<TreeCache>> out;
  ForEachCacheAbove(full, [&](const std::shared_ptr<TreeCache>& c) {
    out.push_back(c);
    return false;
  });
  return out;
}

TreeCacheSet::TreeCache* TreeCacheSet::CacheFor(const std::string& full) {
  TreeCache* found = nullptr;
  ForEachCacheAbove(full, [&](const std::shared_ptr<TreeCache>& c) {
    found = c.get();
    return true;
  });
  return found;
}

size_t TreeCacheSet::Depth(std::string_view full) {
  return full == "/" ? 0 : static_cast<size_t>(std::count(full.begin(), full.end(), '/'));
}

void TreeCacheSet::CountRoot(const std::string& root, int delta) {  // +1 or -1
  const size_t depth = Depth(root);
  if (roots_at_depth_.size() <= depth) roots_at_depth_.resize(depth + 1, 0);
  if (delta > 0) {
    ++roots_at_depth_[depth];
  } else {
    --roots_at_depth_[depth];
  }
}

CachedRead TreeCacheSet::Read(const std::string& full) {
  MutexLock lock(&data_mu_);
  TreeCache* c = CacheFor(full);
  if (c == nullptr) return {};
  auto it = c->nodes.find(full);
  if (it == c->nodes.end()) return {true, std::nullopt};
  return {true, it->second.value};
}

TreeCacheSet::Known TreeCacheSet::Knows(const std::string& full) {
  MutexLock lock(&data_mu_);
  TreeCache* c = CacheFor(full);
  if (c == nullptr) return Known::kUnknown;
  return c->nodes.count(full) != 0 ? Known::kPresent : Known::kAbsent;
}

TreeCacheSet::Known TreeCacheSet::Children(const std::string& full, std::vector<std::string>* out) {
  MutexLock lock(&data_mu_);
  TreeCache* c = CacheFor(full);
  // A node that keeps only named children (or none) in the cache: its list is the server's.
  if (c == nullptr || NamesChildren(WatchesOf(*c, full))) return Known::kUnknown;
  auto it = c->nodes.find(full);
  if (it == c->nodes.end()) return Known::kAbsent;
  out->assign(it->second.children.begin(), it->second.children.end());
  return Known::kPresent;
}

int64_t TreeCacheSet::node_count() {
  MutexLock lock(&data_mu_);
  int64_t n = 0;
  for (const auto& [root, c] : caches_) n += static_cast<int64_t>(c->nodes.size());
  return n;
}

bool TreeCacheSet::refresh_pending() {
  MutexLock lock(&dirty_mu_);
  return drain_posted_ || !dirty_.empty();
}

void TreeCacheSet::Close() {
  // Cancelled outside data_mu_: Cancel waits for a delivery in progress, which may be
  // reading the cache.
  decltype(caches_) ended;
  {
    MutexLock lock(&data_mu_);
    ended.swap(caches_);
    roots_at_depth_.clear();
  }
  for (auto& [root, c] : ended) c->state->Cancel();
}

// ---- events ------------------------------------------------------------------------------

void TreeCacheSet::CacheWatch::OnWatch(const WatchEvent& event) {
  if (event.type == WatchEvent::Type::kSession || event.path.empty()) return;  // the hooks' part
  // A children event used up the children watch only, a data event the value watch only.
  int what = event.type == WatchEvent::Type::kChildren  ? kChildrenEvent
             : event.type == WatchEvent::Type::kChanged ? kValueEvent
                                                        : kValueEvent | kChildrenEvent;
  self->MarkDirty(std::string(event.path), what);
}

void TreeCacheSet::Deliver(TreeCache& cache, std::vector<TreeEvent> events) {
  for (auto& e : events) {
    e.key = Relative(e.key);
    auto state = cache.state;
    auto cb = cache.callback;
    state->PostIfActive(*cache.executor, [state, cb, e] { state->Run([&] { cb(e); }); });
  }
}

void TreeCacheSet::DropFrom(TreeCache& cache, const std::string& full,
                            std::vector<TreeEvent>* events) {
  // Children first, as ZooKeeper deletes them.
  auto it = cache.nodes.find(full);
  if (it == cache.nodes.end()) return;
  std::vector<std::string> children(it->second.children.begin(), it->second.children.end());
  for (const auto& c : children) DropFrom(cache, ChildKey(full, c), events);
  it = cache.nodes.find(full);
  events->push_back({TreeEvent::Type::kDeleted, full, it->second.value});
  cache.nodes.erase(it);
  cache.state->Changed();
  if (full != cache.root) {
    auto parent = cache.nodes.find(ParentKey(full));
    if (parent != cache.nodes.end())
      parent->second.children.erase(full.substr(full.rfind('/') + 1));
  }
}

void TreeCacheSet::RecordGone(TreeCache& cache, const std::string& full, uint64_t seq) {
  uint64_t& at = cache.gone[full];
  at = std::max(at, seq);
  if (cache.gone.size() <= kMaxGone) return;
  auto oldest = std::min_element(cache.gone.begin(), cache.gone.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
  cache.gone_evicted_seq = std::max(cache.gone_evicted_seq, oldest->second);
  cache.gone.erase(oldest);
}

// ---- loads -------------------------------------------------------------------------------

void TreeCacheSet::SendReads(std::vector<LoadItem>& items, bool deep, ReplyLatch& latch,
                             std::vector<std::unique_ptr<NodeRead>>& reads) {
  // An unanswered read (the connection or the session went) keeps an error code: the
  // reconnect resynchronises the caches.
  if (hooks_.before_send) hooks_.before_send();
  for (auto& item : items) {
    auto r = std::make_unique<NodeRead>();
    r->cache = item.cache;
    r->full = std::move(item.full);
    r->latch = &latch;
    const NodeWatches needs = WatchesOf(*r->cache, r->full);
    bool known;
    {
      MutexLock data(&data_mu_);
      known = r->cache->nodes.count(r->full) != 0;
    }
    // A probed named child the cache has keeps its own watch: nothing to read.
    if (item.what == kProbe && known && !deep) continue;
    if (NamesChildren(needs)) {
      r->names_children = true;
      r->named = needs.named_children;
      r->named_present = needs.named_present;
    }
    NodeRead* read = r.get();
    if ((item.what & kProbe) != 0 && (deep || !known)) {
      r->probe = true;
      r->read_value = r->read_children = false;
      r->children_rc = ClientCode::kOk;
      latch.Add();
      r->seq = hooks_.numbered([&] {
        client_.Exists(r->full, &cache_watch_, [read](ClientCode rc, const NodeStat&) {
          read->data_rc = rc;
          read->latch->Done();
        });
      });
      reads.push_back(std::move(r));
      continue;
    }
    // A known node reads again only what a fired watch covered (a ZooKeeper watch is used
    // up by firing; the other one is still set); a new node is read whole, but for a value
    // that is "" by contract (its children read tells whether it is there).
    r->empty_value = needs.empty_value && (needs.children || NamesChildren(needs));
    r->read_value = !r->empty_value && (!known || deep || (item.what & kValueEvent) != 0);
    r->read_children = needs.children && (!known || deep || (item.what & kChildrenEvent) != 0);
    if (!r->read_value) r->data_rc = ClientCode::kOk;
    if (!r->read_children) r->children_rc = ClientCode::kOk;
    if (r->read_value) latch.Add();
    if (r->read_children) latch.Add();
    // The read's number: its last request's.
    r->seq = hooks_.numbered([&] {
      if (read->read_value) {
        client_.Get(read->full, needs.value ? &cache_watch_ : nullptr,
                    [read](ClientCode rc, std::string_view value, const NodeStat&) {
                      read->data_rc = rc;
                      if (rc == ClientCode::kOk) read->value.assign(value);
                      read->latch->Done();
                    });
      }
      if (read->read_children) {
        client_.Children(read->full, &cache_watch_,
                         [read](ClientCode rc, std::vector<std::string> children) {
                           read->children_rc = rc;
                           if (rc == ClientCode::kOk) read->children = std::move(children);
                           read->latch->Done();
                         });
      }
    });
    reads.push_back(std::move(r));
  }
}

void TreeCacheSet::StageNext(const std::vector<std::unique_ptr<NodeRead>>& reads, bool deep,
                             std::set<std::pair<TreeCache*, std::string>>& staged,
                             std::vector<LoadItem>* next) {
  // What ApplyRead will ask for once the levels before are applied: the same decisions,
  // made on the cache plus the nodes those levels add (`staged`), changing nothing.
  for (const auto& rp : reads) {
    const NodeRead& r = *rp;
    TreeCache& cache = *r.cache;
    const LocalWrite* since = WrittenAfter(r.full, r.seq);
    if (since != nullptr && !since->written) continue;  // we deleted it since
    if (r.probe) {
      if (since != nullptr || r.data_rc == ClientCode::kOk) {
        next->push_back({r.cache, r.full, kValueEvent | kChildrenEvent});
      }
      continue;
    }
    ClientCode data_rc = r.data_rc;
    ClientCode children_rc = r.children_rc;
    bool no_children = false;  // a node we created since: it has none
    if (since != nullptr && (data_rc == ClientCode::kOk || data_rc == ClientCode::kNoNode) &&
        (children_rc == ClientCode::kOk || children_rc == ClientCode::kNoNode)) {
      data_rc = ClientCode::kOk;
      if (children_rc == ClientCode::kNoNode) {
        children_rc = ClientCode::kOk;
        no_children = true;
      }
    }
    if (data_rc == ClientCode::kNoNode || children_rc == ClientCode::kNoNode) {
      if (IsNamedChild(cache, r.full)) next->push_back({r.cache, r.full, kProbe});
      continue;
    }
    if (data_rc != ClientCode::kOk || children_rc != ClientCode::kOk) continue;
    auto node = cache.nodes.find(r.full);
    const bool fresh = node == cache.nodes.end() && staged.count({&cache, r.full}) == 0;
    if (node == cache.nodes.end() && !r.read_value && !r.empty_value && fresh) continue;
    if (fresh) {
      if (r.full != cache.root && cache.nodes.count(ParentKey(r.full)) == 0 &&
          staged.count({&cache, ParentKey(r.full)}) == 0) {
        continue;  // its parent went meanwhile
      }
      staged.insert({&cache, r.full});
    }
    if (r.names_children) {
      if (fresh || deep) {
        for (size_t i = 0; i < r.named.size(); ++i) {
          const int what = i < r.named_present ? kValueEvent | kChildrenEvent : kProbe;
          next->push_back({r.cache, ChildKey(r.full, std::string(r.named[i])), what});
        }
      }
      continue;
    }
    auto want = [&](const std::string& c) {
      if (deep || node == cache.nodes.end() || node->second.children.count(c) == 0) {
        next->push_back({r.cache, ChildKey(r.full, c), kValueEvent | kChildrenEvent});
      }
    };
    if (recent_writes_.empty()) {
      // The common case, without a copy of the list: no write of ours to merge. A list not
      // read is the cache's own: nothing new in it.
      if (r.read_children && !no_children) {
        std::for_each(r.children.begin(), r.children.end(), want);
      } else if (!r.read_children && deep && node != cache.nodes.end()) {
        std::for_each(node->second.children.begin(), node->second.children.end(), want);
      }
      continue;
    }
    std::set<std::string> now;
    if (r.read_children && !no_children) {
      now.insert(r.children.begin(), r.children.end());
    } else if (!r.read_children && node != cache.nodes.end()) {
      now = node->second.children;
    }
    MergeWritesAfter(r.full, r.seq, now);
    std::for_each(now.begin(), now.end(), want);
  }
}

void TreeCacheSet::ApplyRead(NodeRead& read, bool deep, std::vector<TreeEvent>& out,
                             std::vector<LoadItem>* next, std::vector<std::string>* watch_roots) {
  NodeRead* r = &read;
  TreeCache& cache = *r->cache;
  if (r->data_rc == ClientCode::kOk || r->data_rc == ClientCode::kNoNode ||
      r->children_rc == ClientCode::kNoNode) {
    cache.read_seq = std::max(cache.read_seq, r->seq);
  }
  // A write of ours sent after this read was: the read shows the node as it was.
  const LocalWrite* since = WrittenAfter(r->full, r->seq);
  if (since != nullptr && !since->written) return;  // we deleted it since
  if (since != nullptr && r->probe) {
    next->push_back({r->cache, r->full, kValueEvent | kChildrenEvent});  // we made it
    return;
  }
  if (since != nullptr && (r->data_rc == ClientCode::kOk || r->data_rc == ClientCode::kNoNode) &&
      (r->children_rc == ClientCode::kOk || r->children_rc == ClientCode::kNoNode)) {
    // We wrote it since: it is as we wrote it, with the children it had (none if we
    // created it).
    r->data_rc = ClientCode::kOk;
    r->read_value = true;
    r->value = since->value;
    if (r->children_rc == ClientCode::kNoNode) {
      r->children_rc = ClientCode::kOk;
      r->children.clear();
    }
  }
  if (r->probe) {
    if (r->data_rc == ClientCode::kOk) {
      next->push_back({r->cache, r->full, kValueEvent | kChildrenEvent});  // there: read it
    } else if (r->data_rc == ClientCode::kNoNode) {
      RecordGone(cache, r->full, r->seq);
      DropFrom(cache, r->full, &out);  // its exists watch tells when it comes
    }
    return;
  }
  if (r->data_rc == ClientCode::kNoNode || r->children_rc == ClientCode::kNoNode) {
    if (IsNamedChild(cache, r->full)) {
      // Gone, and its data watch with it: watch for it to come back.
      next->push_back({r->cache, r->full, kProbe});
    }
    if (r->full == cache.root) watch_roots->push_back(r->full);
    RecordGone(cache, r->full, r->seq);
    DropFrom(cache, r->full, &out);
    return;
  }
  // Connection trouble: the reconnect resynchronises every cache.
  if (r->data_rc != ClientCode::kOk || r->children_rc != ClientCode::kOk) return;
  auto it = cache.nodes.find(r->full);
  if (it != cache.nodes.end()) {
    if (!r->read_value) r->value = it->second.value;
    if (!r->read_children) {
      r->children.assign(it->second.children.begin(), it->second.children.end());
    }
  } else if (!r->read_value && !r->empty_value) {
    return;  // dropped meanwhile by an earlier read of this batch
  }
  const bool fresh = it == cache.nodes.end();
  if (fresh) {
    auto parent = cache.nodes.end();
    if (r->full != cache.root) {
      parent = cache.nodes.find(ParentKey(r->full));
      if (parent == cache.nodes.end()) return;  // its parent went meanwhile
    }
    out.push_back({TreeEvent::Type::kAdded, r->full, r->value});
    it = cache.nodes.emplace(r->full, CachedNode{r->value, {}}).first;
    cache.state->Changed();
    if (parent != cache.nodes.end())
      parent->second.children.insert(r->full.substr(r->full.rfind('/') + 1));
  } else if (it->second.value != r->value) {
    out.push_back({TreeEvent::Type::kUpdated, r->full, r->value});
    it->second.value = r->value;
    cache.state->Changed();
  }
  if (r->read_value) it->second.value_seq = std::max(it->second.value_seq, r->seq);
  if (r->read_children) it->second.children_seq = std::max(it->second.children_seq, r->seq);
  if (r->names_children) {
    // Its children are the named ones (if any), each watched on its own.
    if (fresh || deep) {
      for (size_t i = 0; i < r->named.size(); ++i) {
        // One usually there is read at once (missing: probed then, as a node gone).
        const int what = i < r->named_present ? kValueEvent | kChildrenEvent : kProbe;
        next->push_back({r->cache, ChildKey(r->full, std::string(r->named[i])), what});
      }
    }
    return;
  }
  std::set<std::string> now(r->children.begin(), r->children.end());
  MergeWritesAfter(r->full, r->seq, now);
  std::vector<std::string> gone;
  for (const auto& c : it->second.children) {
    if (now.count(c) == 0) gone.push_back(c);
  }
  for (const auto& c : gone) DropFrom(cache, ChildKey(r->full, c), &out);
  it = cache.nodes.find(r->full);
  for (const auto& c : now) {
    // Reloading a known child would only re-arm watches it still has: two requests per node
    // of the subtree on every child event (the packets benchmark counts them).
    if (deep || it->second.children.count(c) == 0)
      next->push_back({r->cache, ChildKey(r->full, c), kValueEvent | kChildrenEvent});
  }
  if (it->second.children != now) {
    it->second.children = std::move(now);
    cache.state->Changed();
  }
}

void TreeCacheSet::LoadAll(std::vector<LoadItem> level, bool deep, EventsByCache* events) {
  // REQUIRES: refresh_mu_ held (not data_mu_).
  while (!level.empty()) {
    // Stage: one round trip per level of the tree, whatever its width (every read of a
    // level is sent before the first reply is awaited), nothing applied yet.
    std::vector<std::vector<std::unique_ptr<NodeRead>>> levels;
    std::set<std::pair<TreeCache*, std::string>> staged;  // nodes the levels will add
    {
      MutexLock data(&data_mu_);
      loading_ = true;  // from now on our writes are recorded until the levels are applied
    }
    while (!level.empty()) {
      std::vector<std::unique_ptr<NodeRead>> reads;
      ReplyLatch latch;
      SendReads(level, deep, latch, reads);
      if (hooks_.after_send) hooks_.after_send();
      latch.Wait();
      // The replies may show a change whose other parts (a transaction's other nodes) fired
      // watches that this pass has not read: ZooKeeper delivers those events before a reply
      // that shows the change, so they are queued by now. Read them in this level too, until
      // no more came (chaos kill9_mid_item: the sharding flag gone, the old owners still
      // there). Bounded: under a constant stream of changes the rest waits for the next
      // pass.
      for (int round = 0; !deep && round < kCatchUpRounds; ++round) {
        std::vector<LoadItem> more = TakeDirty();
        if (more.empty()) break;
        ReplyLatch more_latch;
        SendReads(more, deep, more_latch, reads);
        more_latch.Wait();
      }
      level.clear();
      {
        MutexLock data(&data_mu_);
        StageNext(reads, deep, staged, &level);
      }
      levels.push_back(std::move(reads));
    }
    // Apply: every level under one hold, so a reader sees all of the refresh or none of it
    // (not a new item node whose owner is a level further down). What a level's application
    // asks for that the next staged level did not read (our writes changed the cache
    // meanwhile) is read by another pass.
    std::vector<std::string> watch_roots;  // roots gone: be told when they appear
    {
      MutexLock data(&data_mu_);
      for (size_t k = 0; k < levels.size(); ++k) {
        std::vector<LoadItem> wanted;
        for (auto& r : levels[k]) ApplyRead(*r, deep, (*events)[r->cache], &wanted, &watch_roots);
        if (wanted.empty()) continue;
        std::set<std::tuple<const TreeCache*, std::string_view, bool>> read_next;
        if (k + 1 < levels.size()) {
          for (const auto& r : levels[k + 1]) read_next.insert({r->cache.get(), r->full, r->probe});
        }
        for (auto& item : wanted) {
          if (read_next.count({item.cache.get(), item.full, item.what == kProbe}) == 0) {
            level.push_back(std::move(item));
          }
        }
      }
      // Every read on its way has been applied: no later read was sent before these writes.
      recent_writes_.clear();
      loading_ = false;
    }
    for (const auto& root : watch_roots) {
      hooks_.retry(RequestKind::kExists,
                   [&] { return client_.ExistsSync(root, &cache_watch_, nullptr); });
    }
  }
}

void TreeCacheSet::MarkDirty(const std::string& full, int what) {
  MutexLock lock(&dirty_mu_);
  dirty_[full] |= what;
  if (drain_posted_) return;
  drain_posted_ = true;
  // The events of a short while are read in one batch (the registry's window): a node
  // created and deleted within it (a run's running mark) costs one read of its parent, not
  // two plus its own. Every event of the window is applied together, in one pass, so the
  // cache never shows a later change (the sharding flag gone) before an earlier one (the new
  // owners).
  hooks_.schedule_refresh([this] { RefreshDirty(); });
}

std::vector<TreeCacheSet::LoadItem> TreeCacheSet::LevelOf(const std::map<std::string, int>& paths) {
  std::vector<LoadItem> level;
  MutexLock lock(&data_mu_);
  for (const auto& [full, what] : paths) {
    for (auto& c : CachesCovering(full)) level.push_back({c, full, what});
  }
  return level;
}

std::vector<TreeCacheSet::LoadItem> TreeCacheSet::TakeDirty() {
  std::map<std::string, int> paths;
  {
    // The drain posted for them stays posted: it finds what came after.
    MutexLock lock(&dirty_mu_);
    paths.swap(dirty_);
  }
  return LevelOf(paths);
}

void TreeCacheSet::RefreshDirty() {
  // Every path whose watch fired since the last pass is read again in one pipelined batch:
  // a burst of events costs one round trip, not one per event.
  std::map<std::string, int> paths;
  {
    MutexLock lock(&dirty_mu_);
    paths.swap(dirty_);
    drain_posted_ = false;
  }
  MutexLock refresh(&refresh_mu_);
  std::vector<LoadItem> level = LevelOf(paths);
  EventsByCache events;
  LoadAll(std::move(level), /*deep=*/false, &events);
  for (auto& [cache, list] : events) Deliver(*cache, std::move(list));
}

void TreeCacheSet::ResyncAll() {
  MutexLock refresh(&refresh_mu_);
  std::vector<LoadItem> level;
  {
    MutexLock lock(&data_mu_);
    for (auto& [root, c] : caches_) level.push_back({c, root, kValueEvent | kChildrenEvent});
  }
  EventsByCache events;
  LoadAll(std::move(level), /*deep=*/true, &events);
  for (auto& [cache, list] : events) Deliver(*cache, std::move(list));
}

// ---- read-your-writes --------------------------------------------------------------------

const TreeCacheSet::LocalWrite* TreeCacheSet::WrittenAfter(const std::string& full,
                                                           uint64_t seq) const {
  auto it = recent_writes_.find(full);
  return it != recent_writes_.end() && it->second.seq > seq ? &it->second : nullptr;
}

void TreeCacheSet::MergeWritesAfter(const std::string& full, uint64_t seq,
                                    std::set<std::string>& children) const {
  const std::string prefix = full == "/" ? full : full + "/";
  for (auto it = recent_writes_.lower_bound(prefix);
       it != recent_writes_.end() && it->first.starts_with(prefix); ++it) {
    const std::string name = it->first.substr(prefix.size());
    if (name.find('/') != std::string::npos || it->second.seq <= seq) continue;
    if (it->second.written) {
      children.insert(name);
    } else {
      children.erase(name);
    }
  }
}

bool TreeCacheSet::ReadSince(TreeCache& cache, const std::string& full, bool written,
                             uint64_t seq) {
  if (cache.read_seq <= seq) return false;  // nothing read since the write was sent
  auto node = cache.nodes.find(full);
  if (node != cache.nodes.end() && node->second.value_seq > seq) return true;
  auto parent = full == cache.root ? cache.nodes.end() : cache.nodes.find(ParentKey(full));
  const bool members_read = parent != cache.nodes.end() && parent->second.children_seq > seq;
  // There, from an older read: a new value is ours to apply (a later change fires the
  // node's watch); a delete too, unless its parent's children were read since (the node
  // came back meanwhile).
  if (node != cache.nodes.end()) return !written && members_read;
  if (!written) return true;  // gone already
  if (members_read) {
    // Known to be gone again, unless that read lists it: then it is there, and the read of
    // the node itself is the next level of the load that listed it. Ours until then; that
    // read, numbered after ours, replaces the value.
    return parent->second.children.count(full.substr(full.rfind('/') + 1)) == 0;
  }
  // A create of a node the cache does not hold: applied unless a read of the node itself
  // found it gone since.
  auto gone = cache.gone.find(full);
  if (gone != cache.gone.end() && gone->second > seq) return true;
  if (cache.gone_evicted_seq <= seq) return false;
  // That record may have been evicted: ask the server.
  MarkDirty(full, kValueEvent | kChildrenEvent);
  if (full != cache.root) MarkDirty(ParentKey(full), kChildrenEvent);
  return true;
}

void TreeCacheSet::ApplyLocalWrite(const std::string& full, const std::optional<std::string>& value,
                                   uint64_t seq) {
  MutexLock lock(&data_mu_);
  if (loading_) {
    LocalWrite& w = recent_writes_[full];
    if (seq >= w.seq) w = {seq, value.has_value(), value.value_or("")};
  }
  if (watch_loading_) watch_load_writes_.push_back({full, value, seq});
  // In place: no list of the caches (a vector and a reference count each), as every write
  // of every run comes here (a profile of 1,000 jobs put 7 % of the process's CPU in that
  // list). Applying changes a cache's nodes, never the set of caches.
  ForEachCacheAbove(full, [&](const std::shared_ptr<TreeCache>& c) ELASTICJOB_REQUIRES(data_mu_) {
    std::vector<TreeEvent> events;
    ApplyLocalWriteTo(*c, full, value, seq, &events);
    Deliver(*c, std::move(events));
    return false;
  });
}

void TreeCacheSet::ApplyLocalWriteTo(TreeCache& cache, const std::string& full,
                                     const std::optional<std::string>& value, uint64_t seq,
                                     std::vector<TreeEvent>* events) {
  TreeCache* c = &cache;
  // A read sent after the write has shown the node as it is now (issue 24, chaos
  // zk_restart_past_session: the leader's own delete of the sharding flag, applied after a
  // refresh had read the flag raised again by a joining instance, hid it for good).
  if (ReadSince(*c, full, value.has_value(), seq)) return;
  if (!value.has_value()) {
    DropFrom(*c, full, events);
    return;
  }
  auto it = c->nodes.find(full);
  const std::string parent_key = ParentKey(full);
  auto parent = c->nodes.find(parent_key);
  if (it == c->nodes.end() && full != c->root && parent == c->nodes.end() &&
      WatchesOf(*c, parent_key).empty_value) {
    // The parent was there when the server took our write (another session may have made it,
    // or our container chain, which the cache has not read yet): a parent whose value is ""
    // by contract is known whole, so it comes in with its child. Left out, its removal would
    // be no event here: a listener waiting for it (a distribute-once listener's phase root)
    // would wait for its timeout.
    if (loading_) {
      LocalWrite& w = recent_writes_[parent_key];
      if (seq >= w.seq) w = {seq, true, std::string()};
    }
    ApplyLocalWriteTo(*c, parent_key, std::string(), seq, events);
    parent = c->nodes.find(parent_key);
  }
  if (it == c->nodes.end() && (full == c->root || parent != c->nodes.end())) {
    events->push_back({TreeEvent::Type::kAdded, full, *value});
    c->nodes.emplace(full, CachedNode{*value, {}});
    c->state->Changed();
    if (full != c->root) parent->second.children.insert(full.substr(full.rfind('/') + 1));
    // Arm its watches (the parent's child event will not load it: it is known now), with
    // only the reads that set a watch it needs: its value is what we wrote.
    NodeWatches needs = WatchesOf(*c, full);
    const int what = (needs.value ? kValueEvent : 0) | (needs.children ? kChildrenEvent : 0);
    if (what != 0) MarkDirty(full, what);
    if (NamesChildren(needs)) {
      for (std::string_view name : needs.named_children) {
        MarkDirty(ChildKey(full, std::string(name)), kProbe);
      }
    }
  } else if (it != c->nodes.end() && it->second.value != *value) {
    events->push_back({TreeEvent::Type::kUpdated, full, *value});
    it->second.value = *value;
    c->state->Changed();
  }
}

// ---- Watch -------------------------------------------------------------------------------

void TreeCacheSet::LoadWatches(const std::vector<std::shared_ptr<WatchLoad>>& batch) {
  {
    MutexLock lock(&data_mu_);
    watch_loading_ = true;
  }
  EventsByCache events;
  std::vector<LoadItem> level;
  for (const auto& w : batch) {
    level.push_back({w->cache, w->cache->root, kValueEvent | kChildrenEvent});
  }
  LoadAll(std::move(level), /*deep=*/true, &events);
  {
    MutexLock lock(&data_mu_);
    std::multimap<std::string, std::shared_ptr<TreeCache>> loaded;  // by root
    for (const auto& w : batch) {
      caches_.emplace(w->cache->root, w->cache);
      CountRoot(w->cache->root, 1);
      loaded.emplace(w->cache->root, w->cache);
    }
    // Our writes that went on while they loaded, as they would have been applied had the
    // caches been registered (a read sent after one keeps what it read: ReadSince), each to
    // the caches at or above it only: a lookup per ancestor, as CachesCovering's (a thousand
    // jobs starting together write thousands of nodes, each under one job's cache).
    for (const auto& write : watch_load_writes_) {
      for (std::string p = write.full;; p = ParentKey(p)) {
        auto [from, to] = loaded.equal_range(p);
        for (auto it = from; it != to; ++it) {
          if (!Covers(*it->second, write.full)) continue;
          ApplyLocalWriteTo(*it->second, write.full, write.value, write.seq, &events[it->second]);
        }
        if (p == "/" || p.size() <= prefix_.size()) break;
      }
    }
    watch_load_writes_.clear();
    watch_loading_ = false;
  }
  for (const auto& w : batch) Deliver(*w->cache, std::move(events[w->cache]));
}

std::unique_ptr<CountedSubscription> TreeCacheSet::Watch(
    const std::string& full, Executor& executor, std::function<void(const TreeEvent&)> callback,
    WatchPolicy policy) {
  auto cache = std::make_shared<TreeCache>();
  cache->policy = std::move(policy);
  cache->root = full;
  cache->executor = &executor;
  cache->callback = std::move(callback);
  cache->state = std::make_shared<SubscriptionState>();
  cache->state->counted = true;
  {
    // The Watch calls that come while a load is in progress wait, and the first of them to
    // wake loads every waiting one's cache at once: many jobs starting together load their
    // subtrees in a few round trips, not a few each one after another.
    auto me = std::make_shared<WatchLoad>();
    me->cache = cache;
    MutexLock lock(&watch_mu_);
    pending_watches_.push_back(me);
    while (!me->done && watch_loader_) watch_cv_.Wait();
    if (!me->done) {
      watch_loader_ = true;
      lock.Unlock();
      std::vector<std::shared_ptr<WatchLoad>> batch;
      {
        // Those that come while a refresh holds refresh_mu_ join this load.
        MutexLock refresh(&refresh_mu_);
        lock.Lock();
        batch.swap(pending_watches_);
        lock.Unlock();
        LoadWatches(batch);
      }
      lock.Lock();
      for (auto& w : batch) w->done = true;
      watch_loader_ = false;
      watch_cv_.SignalAll();
    }
  }
  auto state = cache->state;
  std::weak_ptr<TreeCache> weak = cache;
  return std::make_unique<SubscriptionHandle>(state, [this, weak] {
    MutexLock lock(&data_mu_);
    auto c = weak.lock();
    if (c != nullptr && std::erase_if(caches_, [&](const auto& e) { return e.second == c; }) != 0) {
      CountRoot(c->root, -1);  // one entry a cache
    }
  });
}

}  // namespace elasticjob::reg
