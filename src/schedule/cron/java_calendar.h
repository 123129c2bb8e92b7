// JavaCalendar: the subset of java.util.GregorianCalendar that Quartz's CronExpression uses,
// with the same lenient field arithmetic and the same set()/get() normalisation points.
//
// Quartz computes fire times by setting calendar fields and reading them back; each read
// after a write re-resolves the wall time in the zone. Its DST behaviour (a time in a
// spring-forward gap moves past the gap; a time in a repeated fall-back hour resolves to the
// standard-time instant) comes from exactly when those resolutions happen, so this class
// reproduces them rather than approximating them.
//
// Thread safety: not thread-safe; one instance per computation.
#ifndef ELASTICJOB_SCHEDULE_CRON_JAVA_CALENDAR_H_
#define ELASTICJOB_SCHEDULE_CRON_JAVA_CALENDAR_H_

#include <cstdint>

#include "schedule/zone_rules.h"

namespace elasticjob::schedule {

class JavaCalendar {
 public:
  enum Field { kYear, kMonth, kDayOfMonth, kHourOfDay, kMinute, kSecond, kMillisecond, kDayOfWeek };

  // REQUIRES: `zone` outlives this calendar.
  explicit JavaCalendar(const ZoneRules& zone) : zone_(zone) {}

  // Calendar.setTime: fields are recomputed from the instant.
  void SetTimeInMillis(int64_t utc_millis);

  // Calendar.getTimeInMillis: resolves pending field writes first.
  int64_t GetTimeInMillis();

  // Calendar.get: resolves pending writes, then reads. kMonth is 0-based as in Java.
  int Get(Field field);

  // Calendar.set: stores the raw value; resolution happens on the next read.
  void Set(Field field, int value);

  // Calendar.add(YEAR, n): resolves, adds, then pins the day of month to the month's length.
  void AddYears(int n);

 private:
  void Complete();

  const ZoneRules& zone_;
  int64_t time_ = 0;
  bool time_valid_ = false;
  int64_t year_ = 1970;
  int month_ = 0;  // 0-based, may be out of range until resolved
  int day_ = 1;
  int hour_ = 0;
  int minute_ = 0;
  int second_ = 0;
  int millis_ = 0;
  int day_of_week_ = 5;
};

}  // namespace elasticjob::schedule

#endif  // ELASTICJOB_SCHEDULE_CRON_JAVA_CALENDAR_H_
