// JavaCalendar: the subset of java.util.GregorianCalendar that Quartz's CronExpression uses,
// with the same lenient field arithmetic and the same set()/get() normalisation points.
//
// Quartz computes fire times by setting calendar fields and reading them back; each read
// after a write re-resolves the wall time in the zone. Its DST behaviour (a time in a
// spring-forward gap moves past the gap; a time in a repeated fall-back hour resolves to the
// standard-time instant) comes from exactly when those resolutions happen, so this class
// reproduces them rather than approximating them.
//
// Each resolution is civil arithmetic plus a look at the zone's table (ZoneTable): a local
// time that only one offset shows converts with that offset, the span of the previous
// resolution is tried first, and only a local time in a gap, in a repeated hour or outside
// the table goes through cctz (ZoneRules::ResolveWall, Breakdown), as Java resolves it.
//
// Thread safety: not thread-safe; one instance per computation.
#ifndef ELASTICJOB_SCHEDULE_CRON_JAVA_CALENDAR_H_
#define ELASTICJOB_SCHEDULE_CRON_JAVA_CALENDAR_H_

#include <cstdint>

#include "schedule/zone_rules.h"
#include "schedule/zone_table.h"

namespace elasticjob::schedule {

class JavaCalendar {
 public:
  enum Field { kYear, kMonth, kDayOfMonth, kHourOfDay, kMinute, kSecond, kMillisecond, kDayOfWeek };

  // REQUIRES: `zone` outlives this calendar.
  explicit JavaCalendar(const ZoneRules& zone) : zone_(zone), table_(zone.table()) {}

  // Calendar.setTime: fields are recomputed from the instant.
  void SetTimeInMillis(int64_t utc_millis);

  // Calendar.getTimeInMillis: resolves pending field writes first.
  int64_t GetTimeInMillis() {
    Complete();
    return time_;
  }

  // Calendar.get: resolves pending writes, then reads. kMonth is 0-based as in Java.
  int Get(Field field) {
    Complete();
    switch (field) {
      case kYear:
        return static_cast<int>(year_);
      case kMonth:
        return month_;
      case kDayOfMonth:
        return day_;
      case kHourOfDay:
        return hour_;
      case kMinute:
        return minute_;
      case kSecond:
        return second_;
      case kMillisecond:
        return millis_;
      case kDayOfWeek:
        return DayOfWeek();
    }
    return 0;
  }

  // Calendar.set: stores the raw value; resolution happens on the next read. Java computes
  // all fields before a write when they are stale; ours are always current once resolved,
  // and unresolved writes accumulate exactly as Java's do.
  void Set(Field field, int value) {
    switch (field) {
      case kYear:
        year_ = value;
        date_changed_ = true;
        break;
      case kMonth:
        month_ = value;
        date_changed_ = true;
        break;
      case kDayOfMonth:
        day_ = value;
        date_changed_ = true;
        break;
      case kHourOfDay:
        hour_ = value;
        break;
      case kMinute:
        minute_ = value;
        break;
      case kSecond:
        second_ = value;
        break;
      case kMillisecond:
        millis_ = value;
        break;
      case kDayOfWeek:
        return;  // Quartz never sets it
    }
    time_valid_ = false;
  }

  // Calendar.add(YEAR, n): resolves, adds, then pins the day of month to the month's length.
  void AddYears(int n);

 private:
  // Resolves pending writes. The common case, a time of day in range on the same date in
  // the same span as the last resolution, is a few additions and two comparisons.
  void Complete() {
    if (time_valid_) return;
    if (!date_changed_ && static_cast<unsigned>(second_) < 60 &&
        static_cast<unsigned>(minute_) < 60 && static_cast<unsigned>(hour_) < 24 &&
        static_cast<unsigned>(millis_) < 1000 && span_ != nullptr) {
      int64_t local = midnight_ + hour_ * 3600 + minute_ * 60 + second_;
      if (span_->HasLocal(local)) {
        local_ = local;
        time_ = (local - span_->offset) * 1000 + millis_;
        time_valid_ = true;
        return;
      }
    }
    CompleteSlowly();
  }
  // Any other write: normalises the fields, then finds the span or resolves through cctz.
  void CompleteSlowly();
  // Sets the fields from local seconds (since 1970-01-01T00:00 on the wall clock).
  void SetLocal(int64_t local);
  int DayOfWeek() const;

  const ZoneRules& zone_;
  const ZoneTable& table_;
  const ZoneSpan* span_ = nullptr;  // of the last resolution, when the table had it
  int64_t time_ = 0;                // UTC milliseconds, when time_valid_
  bool time_valid_ = false;
  bool date_changed_ = true;  // year, month or day written since the last resolution
  int64_t local_ = 0;         // local seconds of the resolved fields, when time_valid_
  int64_t midnight_ = 0;      // local seconds at the start of the resolved date
  int64_t year_ = 1970;
  int month_ = 0;  // 0-based, may be out of range until resolved
  int day_ = 1;
  int hour_ = 0;
  int minute_ = 0;
  int second_ = 0;
  int millis_ = 0;
};

}  // namespace elasticjob::schedule

#endif  // ELASTICJOB_SCHEDULE_CRON_JAVA_CALENDAR_H_
