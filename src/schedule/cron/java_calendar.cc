#include "schedule/cron/java_calendar.h"

namespace elasticjob::schedule {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t year, int month0) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return kDays[month0] + (month0 == 1 && IsLeap(year) ? 1 : 0);
}

// Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

void JavaCalendar::SetLocal(int64_t local) {
  local_ = local;
  int64_t days = FloorDiv(local, 86400);
  midnight_ = days * 86400;
  date_changed_ = false;
  int sod = static_cast<int>(local - days * 86400);
  hour_ = sod / 3600;
  minute_ = sod / 60 % 60;
  second_ = sod % 60;
  // H. Hinnant's civil_from_days.
  int64_t z = days + 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  day_ = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  year_ = yoe + era * 400 + (m <= 2);
  month_ = m - 1;
}

void JavaCalendar::SetTimeInMillis(int64_t utc_millis) {
  time_ = utc_millis;
  time_valid_ = true;
  int64_t secs = FloorDiv(utc_millis, 1000);
  millis_ = static_cast<int>(utc_millis - secs * 1000);
  if (span_ == nullptr || !span_->HasUtc(secs)) span_ = table_.FindUtc(secs);
  if (span_ != nullptr) {
    SetLocal(secs + span_->offset);
    return;
  }
  // Outside the table: cctz.
  CivilTime c = zone_.Breakdown(utc_millis);
  year_ = c.year;
  month_ = c.month - 1;
  day_ = c.day;
  hour_ = c.hour;
  minute_ = c.minute;
  second_ = c.second;
  midnight_ = DaysFromCivil(year_, month_ + 1, day_) * 86400;
  local_ = midnight_ + hour_ * 3600 + minute_ * 60 + second_;
  date_changed_ = false;
}

void JavaCalendar::CompleteSlowly() {
  // Java spreads milliseconds, seconds, minutes and hours linearly into days, and months into
  // years, before applying the zone (as cctz's civil_second normalises).
  int64_t local;
  if (millis_ >= 0 && millis_ <= 999 && second_ >= 0 && second_ <= 59 && minute_ >= 0 &&
      minute_ <= 59 && hour_ >= 0 && hour_ <= 23 && month_ >= 0 && month_ <= 11 && day_ >= 1 &&
      (day_ <= 28 || day_ <= DaysInMonth(year_, month_))) {
    midnight_ = DaysFromCivil(year_, month_ + 1, day_) * 86400;
    local = midnight_ + hour_ * 3600 + minute_ * 60 + second_;
    local_ = local;
  } else {
    int64_t secs_carry = FloorDiv(millis_, 1000);
    millis_ -= static_cast<int>(secs_carry) * 1000;
    int64_t year = year_ + FloorDiv(month_, 12);
    int month0 = static_cast<int>(month_ - FloorDiv(month_, 12) * 12);
    local = (DaysFromCivil(year, month0 + 1, 1) + (day_ - 1)) * 86400 + int64_t{hour_} * 3600 +
            int64_t{minute_} * 60 + second_ + secs_carry;
    SetLocal(local);
  }
  if (span_ == nullptr || !span_->HasLocal(local)) span_ = table_.FindLocal(local);
  date_changed_ = false;
  if (span_ != nullptr) {
    time_ = (local - span_->offset) * 1000 + millis_;
    time_valid_ = true;
    return;
  }
  // A gap, a repeated hour, or outside the table: the fields are normalised, cctz resolves.
  SetTimeInMillis(zone_.ResolveWall(year_, month_ + 1, day_, hour_, minute_, second_, millis_));
}

int JavaCalendar::DayOfWeek() const {  // 1970-01-01 was a Thursday (5); Sunday is 1
  int64_t d = FloorDiv(midnight_, 86400) + 4;
  return static_cast<int>(d - FloorDiv(d, 7) * 7) + 1;
}

void JavaCalendar::AddYears(int n) {
  if (n == 0) return;
  Complete();
  year_ += n;
  int len = DaysInMonth(year_, month_);
  if (day_ > len) day_ = len;
  time_valid_ = false;
  date_changed_ = true;
}

}  // namespace elasticjob::schedule
