// ZoneTable: a time zone's UTC offsets from 1900 to 2200 as a sorted table of spans, so that
// the conversions java.util.GregorianCalendar makes (an instant to local civil time, local
// civil time back to an instant) take a binary search instead of a cctz call. Each span
// holds the instants with one offset and the local times that only those instants show:
// a local time in a spring-forward gap or in a repeated fall-back hour belongs to no span,
// and neither does anything outside the table; callers resolve those exactly (ZoneRules).
//
// Thread safety: immutable once built; ZoneTable::For shares one table per zone.
#ifndef ELASTICJOB_SCHEDULE_ZONE_TABLE_H_
#define ELASTICJOB_SCHEDULE_ZONE_TABLE_H_

#include <cctz/time_zone.h>

#include <cstdint>
#include <vector>

namespace elasticjob::schedule {

// Seconds are counted from 1970-01-01T00:00:00, in UTC for instants and on the zone's wall
// clock for local times.
struct ZoneSpan {
  int64_t utc_lo, utc_hi;      // [utc_lo, utc_hi): the instants at `offset`
  int64_t local_lo, local_hi;  // [local_lo, local_hi): the local times only they show
  int64_t offset;              // seconds east of Greenwich

  bool HasUtc(int64_t t) const { return t >= utc_lo && t < utc_hi; }
  bool HasLocal(int64_t l) const { return l >= local_lo && l < local_hi; }
};

class ZoneTable {
 public:
  // The table of `zone`, built on first use and kept for the life of the process (one per
  // distinct zone).
  static const ZoneTable& For(const cctz::time_zone& zone);

  // The span holding the instant `utc_seconds`; nullptr outside the table.
  const ZoneSpan* FindUtc(int64_t utc_seconds) const;

  // The span whose instants alone show the local time `local_seconds`; nullptr when that
  // local time is skipped, repeated or outside the table.
  const ZoneSpan* FindLocal(int64_t local_seconds) const;

  const std::vector<ZoneSpan>& spans() const { return spans_; }

 private:
  explicit ZoneTable(const cctz::time_zone& zone);

  std::vector<ZoneSpan> spans_;  // by utc_lo; local_lo is non-decreasing too
};

}  // namespace elasticjob::schedule

#endif  // ELASTICJOB_SCHEDULE_ZONE_TABLE_H_
