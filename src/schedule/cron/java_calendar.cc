#include "schedule/cron/java_calendar.h"

namespace elasticjob::schedule {

void JavaCalendar::SetTimeInMillis(int64_t utc_millis) {
  time_ = utc_millis;
  CivilTime c = zone_.Breakdown(utc_millis);
  year_ = c.year;
  month_ = c.month - 1;
  day_ = c.day;
  hour_ = c.hour;
  minute_ = c.minute;
  second_ = c.second;
  millis_ = c.millis;
  day_of_week_ = c.day_of_week;
  time_valid_ = true;
}

void JavaCalendar::Complete() {
  if (time_valid_) return;
  // Java spreads milliseconds, seconds, minutes and hours linearly into days, and months into
  // years, before applying the zone; civil_second normalises the same way.
  int64_t secs_carry = millis_ >= 0 ? millis_ / 1000 : -((999 - millis_) / 1000);
  int ms = millis_ - static_cast<int>(secs_carry) * 1000;
  int64_t t = zone_.ResolveWall(year_, month_ + 1, day_, hour_, minute_,
                                second_ + static_cast<int>(secs_carry), ms);
  SetTimeInMillis(t);
}

int64_t JavaCalendar::GetTimeInMillis() {
  Complete();
  return time_;
}

int JavaCalendar::Get(Field field) {
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
      return day_of_week_;
  }
  return 0;
}

void JavaCalendar::Set(Field field, int value) {
  // Java computes all fields before a write when they are stale; ours are always current
  // once resolved, and unresolved writes accumulate exactly as Java's do.
  switch (field) {
    case kYear:
      year_ = value;
      break;
    case kMonth:
      month_ = value;
      break;
    case kDayOfMonth:
      day_ = value;
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
      break;  // Quartz never sets it
  }
  time_valid_ = false;
}

void JavaCalendar::AddYears(int n) {
  if (n == 0) return;
  Complete();
  year_ += n;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year_ % 4 == 0 && year_ % 100 != 0) || year_ % 400 == 0;
  int len = kDays[month_] + (month_ == 1 && leap ? 1 : 0);
  if (day_ > len) day_ = len;
  time_valid_ = false;
}

}  // namespace elasticjob::schedule
