#include "schedule/zone_table.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "elasticjob/mutex.h"

namespace elasticjob::schedule {
namespace {

constexpr int64_t kForever = int64_t{1} << 60;  // far beyond any date; offsets cannot overflow it
constexpr int64_t kTableStart = -2208988800;    // 1900-01-01T00:00:00Z
constexpr int64_t kTableEnd = 7258118400;       // 2200-01-01T00:00:00Z
// More than any offset difference between two spans (offsets stay within +-26 hours): local
// times this close to the table's ends might also be shown by instants outside it.
constexpr int64_t kMargin = 2 * 86400;

cctz::time_point<cctz::seconds> At(int64_t seconds) {
  return cctz::time_point<cctz::seconds>(cctz::seconds(seconds));
}

}  // namespace

ZoneTable::ZoneTable(const cctz::time_zone& zone) {
  // Instants: the offset before the first transition from 1900 on, then after each one.
  std::vector<int64_t> bounds;  // transition instants
  std::vector<int64_t> offsets{zone.lookup(At(kTableStart)).offset};
  cctz::time_zone::civil_transition trans;
  const bool before = zone.prev_transition(At(kTableStart), &trans);
  bool after = false;  // transitions go on past the last bound
  int64_t t = kTableStart;
  while (zone.next_transition(At(t), &trans)) {
    int64_t next = zone.lookup(trans.to).trans.time_since_epoch().count();
    if (next <= t) break;  // defensive: enumeration must move forward
    bounds.push_back(next);
    offsets.push_back(zone.lookup(At(next)).offset);
    t = next;
    if (next > kTableEnd) {
      after = true;
      break;
    }
  }
  // After the last bound the spans go on only if the zone never changes again.
  size_t count = after ? bounds.size() : bounds.size() + 1;
  spans_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    ZoneSpan& s = spans_[i];
    s.offset = offsets[i];
    s.utc_lo = i == 0 ? (before ? kTableStart : -kForever) : bounds[i - 1];
    s.utc_hi = i < bounds.size() ? bounds[i] : kForever;
    s.local_lo = s.utc_lo + s.offset;
    s.local_hi = s.utc_hi + s.offset;
  }
  // A local time is shown by one span's instants alone when no other span reaches it:
  // not the spans before (their local times end at most at the running maximum), not the
  // spans after (theirs start at least at the running minimum), nor the unknown instants
  // before and after the table.
  int64_t reach = before ? kTableStart + kMargin : -kForever;
  std::vector<int64_t> lo(count);
  for (size_t i = 0; i < count; ++i) {
    lo[i] = std::max(spans_[i].local_lo, reach);
    reach = std::max(reach, spans_[i].local_hi);
  }
  int64_t floor = after ? bounds.back() - kMargin : kForever;
  for (size_t i = count; i-- > 0;) {
    int64_t start = spans_[i].local_lo;
    spans_[i].local_hi = std::min(spans_[i].local_hi, floor);
    floor = std::min(floor, start);
    spans_[i].local_lo = lo[i];
  }
}

const ZoneTable& ZoneTable::For(const cctz::time_zone& zone) {
  static Mutex mu;
  static auto* tables = new std::vector<std::pair<cctz::time_zone, std::unique_ptr<ZoneTable>>>;
  MutexLock lock(&mu);
  for (const auto& [z, table] : *tables)
    if (z == zone) return *table;
  tables->emplace_back(zone, std::unique_ptr<ZoneTable>(new ZoneTable(zone)));
  return *tables->back().second;
}

const ZoneSpan* ZoneTable::FindUtc(int64_t utc_seconds) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), utc_seconds,
                             [](int64_t t, const ZoneSpan& s) { return t < s.utc_lo; });
  if (it == spans_.begin()) return nullptr;
  --it;
  return it->HasUtc(utc_seconds) ? &*it : nullptr;
}

const ZoneSpan* ZoneTable::FindLocal(int64_t local_seconds) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), local_seconds,
                             [](int64_t l, const ZoneSpan& s) { return l < s.local_lo; });
  if (it == spans_.begin()) return nullptr;
  --it;
  return it->HasLocal(local_seconds) ? &*it : nullptr;
}

}  // namespace elasticjob::schedule
