// ZoneRules: a loaded time zone plus the civil-time conversions java.util.GregorianCalendar
// performs with it. Quartz's fire times depend on exactly these conversions.
//
// Thread safety: immutable after construction (the table is built once, on first use, and
// shared).
#ifndef ELASTICJOB_SCHEDULE_ZONE_RULES_H_
#define ELASTICJOB_SCHEDULE_ZONE_RULES_H_

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "schedule/zone_table.h"

namespace elasticjob::schedule {

struct CivilTime {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
  int hour;
  int minute;
  int second;
  int millis;
  int day_of_week;  // Java's Calendar.DAY_OF_WEEK: 1 = Sunday .. 7 = Saturday
};

struct ZoneRules {
  std::string id;
  cctz::time_zone zone;

  // UTC epoch milliseconds -> local civil time.
  CivilTime Breakdown(int64_t utc_millis) const;

  // Local civil time -> UTC epoch milliseconds, fields normalised leniently (month 13 is
  // January of the next year, hour 24 is midnight of the next day) and ambiguities resolved
  // as GregorianCalendar does: a wall time in a spring-forward gap is read with the offset
  // before the transition (so it lands after the gap) up to 2037, and with the offset after
  // it from 2038 on, where Java switches from its transition table to the zone's last rule;
  // a wall time repeated by a fall-back is read as the later (standard-time) instant.
  // REQUIRES: 0 <= millis <= 999.
  int64_t ResolveWall(int64_t year, int month, int day, int hour, int minute, int second,
                      int millis) const;

  // The zone's offsets as a table (ZoneTable::For(zone), looked up once).
  const ZoneTable& table() const {
    const ZoneTable* t = table_.load(std::memory_order_acquire);
    if (t == nullptr) {
      t = &ZoneTable::For(zone);
      table_.store(t, std::memory_order_release);
    }
    return *t;
  }

 private:
  // Atomic: filled on first use by whichever thread computes a fire time first.
  mutable std::atomic<const ZoneTable*> table_{nullptr};
};

}  // namespace elasticjob::schedule

#endif  // ELASTICJOB_SCHEDULE_ZONE_RULES_H_
