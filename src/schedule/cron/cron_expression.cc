// Next-fire computation: the field-by-field walk of Quartz 2.3.2's CronExpression
// getTimeAfter, over JavaCalendar so that every lenient normalisation and every DST
// resolution happens where Quartz's happens. It jumps from candidate to candidate (next
// matching second, minute, hour, day, month, year); it never scans second by second.
#include "elasticjob/schedule/cron_expression.h"

#include <chrono>

#include "schedule/cron/cron_fields.h"
#include "schedule/cron/java_calendar.h"
#include "schedule/zone_rules.h"

namespace elasticjob {
namespace {

using schedule::CronFields;
using schedule::IntSet;
using schedule::JavaCalendar;
using schedule::kNoSpec;

constexpr int kSaturday = 7;
constexpr int kSunday = 1;

int CurrentYearPlus100() {
  auto now = std::chrono::system_clock::now();
  auto days = std::chrono::floor<std::chrono::days>(now);
  std::chrono::year_month_day ymd{days};
  return static_cast<int>(ymd.year()) + 100;
}

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int LastDayOfMonth(int month, int year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && IsLeapYear(year)) return 29;
  return kDays[(month - 1 + 120) % 12];
}

void SetHour(JavaCalendar& cl, int hour) {  // Quartz's setCalendarHour
  cl.Set(JavaCalendar::kHourOfDay, hour);
  if (cl.Get(JavaCalendar::kHourOfDay) != hour && hour != 24) {
    cl.Set(JavaCalendar::kHourOfDay, hour + 1);
  }
}

void ResetTime(JavaCalendar& cl) {
  cl.Set(JavaCalendar::kSecond, 0);
  cl.Set(JavaCalendar::kMinute, 0);
  cl.Set(JavaCalendar::kHourOfDay, 0);
}

// The nearest weekday to `day` of month `mon`, as Quartz's 'W' moves it, and whether the
// resulting fire time is before `after_time`. `tcal` mirrors Quartz's Calendar.getInstance():
// a fresh calendar whose milliseconds are those of "now"; we take them as zero, which only
// matters when the candidate and `after_time` share a second.
bool NearestWeekdayBefore(const schedule::ZoneRules& zone, int* day, int mon, int year, int sec,
                          int min, int hr, int64_t after_time) {
  JavaCalendar tcal(zone);
  tcal.SetTimeInMillis(after_time - after_time % 1000);
  tcal.Set(JavaCalendar::kMillisecond, 0);
  tcal.Set(JavaCalendar::kSecond, 0);
  tcal.Set(JavaCalendar::kMinute, 0);
  tcal.Set(JavaCalendar::kHourOfDay, 0);
  tcal.Set(JavaCalendar::kDayOfMonth, *day);
  tcal.Set(JavaCalendar::kMonth, mon - 1);
  tcal.Set(JavaCalendar::kYear, year);
  int ldom = LastDayOfMonth(mon, year);
  int dow = tcal.Get(JavaCalendar::kDayOfWeek);
  if (dow == kSaturday && *day == 1) {
    *day += 2;
  } else if (dow == kSaturday) {
    *day -= 1;
  } else if (dow == kSunday && *day == ldom) {
    *day -= 2;
  } else if (dow == kSunday) {
    *day += 1;
  }
  tcal.Set(JavaCalendar::kSecond, sec);
  tcal.Set(JavaCalendar::kMinute, min);
  tcal.Set(JavaCalendar::kHourOfDay, hr);
  tcal.Set(JavaCalendar::kDayOfMonth, *day);
  tcal.Set(JavaCalendar::kMonth, mon - 1);
  return tcal.GetTimeInMillis() < after_time;
}

std::optional<int64_t> TimeAfter(const CronFields& f, const schedule::ZoneRules& zone,
                                 int64_t after_millis) {
  JavaCalendar cl(zone);
  const int64_t after_time = after_millis + 1000;
  cl.SetTimeInMillis(after_time);
  cl.Set(JavaCalendar::kMillisecond, 0);
  const bool dom_spec = !f.days_of_month.Contains(kNoSpec);
  const bool dow_spec = !f.days_of_week.Contains(kNoSpec);

  while (true) {
    if (cl.Get(JavaCalendar::kYear) > 2999) return std::nullopt;

    // second
    int sec = cl.Get(JavaCalendar::kSecond);
    int min = cl.Get(JavaCalendar::kMinute);
    if (auto s = f.seconds.LowerBound(sec)) {
      sec = *s;
    } else {
      sec = f.seconds.First();
      ++min;
      cl.Set(JavaCalendar::kMinute, min);
    }
    cl.Set(JavaCalendar::kSecond, sec);

    // minute
    min = cl.Get(JavaCalendar::kMinute);
    int hr = cl.Get(JavaCalendar::kHourOfDay);
    int t = -1;
    if (auto m = f.minutes.LowerBound(min)) {
      t = min;
      min = *m;
    } else {
      min = f.minutes.First();
      ++hr;
    }
    if (min != t) {
      cl.Set(JavaCalendar::kSecond, 0);
      cl.Set(JavaCalendar::kMinute, min);
      SetHour(cl, hr);
      continue;
    }
    cl.Set(JavaCalendar::kMinute, min);

    // hour
    hr = cl.Get(JavaCalendar::kHourOfDay);
    int day = cl.Get(JavaCalendar::kDayOfMonth);
    t = -1;
    if (auto h = f.hours.LowerBound(hr)) {
      t = hr;
      hr = *h;
    } else {
      hr = f.hours.First();
      ++day;
    }
    if (hr != t) {
      cl.Set(JavaCalendar::kSecond, 0);
      cl.Set(JavaCalendar::kMinute, 0);
      cl.Set(JavaCalendar::kDayOfMonth, day);
      SetHour(cl, hr);
      continue;
    }
    cl.Set(JavaCalendar::kHourOfDay, hr);

    // day
    day = cl.Get(JavaCalendar::kDayOfMonth);
    int mon = cl.Get(JavaCalendar::kMonth) + 1;
    t = -1;
    int tmon = mon;
    if (dom_spec && !dow_spec) {
      std::optional<int> st = f.days_of_month.LowerBound(day);
      if (f.lastday_of_month) {
        if (!f.nearest_weekday) {
          t = day;
          day = LastDayOfMonth(mon, cl.Get(JavaCalendar::kYear)) - f.lastday_offset;
          if (t > day) {
            ++mon;
            if (mon > 12) {
              mon = 1;
              tmon = 3333;  // forces the month-changed branch below
              cl.AddYears(1);
            }
            day = 1;
          }
        } else {
          t = day;
          int year = cl.Get(JavaCalendar::kYear);
          day = LastDayOfMonth(mon, year) - f.lastday_offset;
          if (NearestWeekdayBefore(zone, &day, mon, year, sec, min, hr, after_time)) {
            day = 1;
            ++mon;
          }
        }
      } else if (f.nearest_weekday) {
        t = day;
        day = f.days_of_month.First();
        if (NearestWeekdayBefore(zone, &day, mon, cl.Get(JavaCalendar::kYear), sec, min, hr,
                                 after_time)) {
          day = f.days_of_month.First();
          ++mon;
        }
      } else if (st) {
        t = day;
        day = *st;
        if (day > LastDayOfMonth(mon, cl.Get(JavaCalendar::kYear))) {
          day = f.days_of_month.First();
          ++mon;
        }
      } else {
        day = f.days_of_month.First();
        ++mon;
      }
      if (day != t || mon != tmon) {
        ResetTime(cl);
        cl.Set(JavaCalendar::kDayOfMonth, day);
        cl.Set(JavaCalendar::kMonth, mon - 1);
        continue;
      }
    } else if (dow_spec && !dom_spec) {
      if (f.lastday_of_week) {
        int dow = f.days_of_week.First();
        int cdow = cl.Get(JavaCalendar::kDayOfWeek);
        int days_to_add = 0;
        if (cdow < dow) days_to_add = dow - cdow;
        if (cdow > dow) days_to_add = dow + (7 - cdow);
        int lday = LastDayOfMonth(mon, cl.Get(JavaCalendar::kYear));
        if (day + days_to_add > lday) {
          ResetTime(cl);
          cl.Set(JavaCalendar::kDayOfMonth, 1);
          cl.Set(JavaCalendar::kMonth, mon);
          continue;
        }
        while (day + days_to_add + 7 <= lday) days_to_add += 7;
        day += days_to_add;
        if (days_to_add > 0) {
          ResetTime(cl);
          cl.Set(JavaCalendar::kDayOfMonth, day);
          cl.Set(JavaCalendar::kMonth, mon - 1);
          continue;
        }
      } else if (f.nthday_of_week != 0) {
        int dow = f.days_of_week.First();
        int cdow = cl.Get(JavaCalendar::kDayOfWeek);
        int days_to_add = 0;
        if (cdow < dow) {
          days_to_add = dow - cdow;
        } else if (cdow > dow) {
          days_to_add = dow + (7 - cdow);
        }
        bool day_shifted = days_to_add > 0;
        day += days_to_add;
        int week_of_month = day / 7;
        if (day % 7 > 0) ++week_of_month;
        days_to_add = (f.nthday_of_week - week_of_month) * 7;
        day += days_to_add;
        if (days_to_add < 0 || day > LastDayOfMonth(mon, cl.Get(JavaCalendar::kYear))) {
          ResetTime(cl);
          cl.Set(JavaCalendar::kDayOfMonth, 1);
          cl.Set(JavaCalendar::kMonth, mon);
          continue;
        } else if (days_to_add > 0 || day_shifted) {
          ResetTime(cl);
          cl.Set(JavaCalendar::kDayOfMonth, day);
          cl.Set(JavaCalendar::kMonth, mon - 1);
          continue;
        }
      } else {
        int cdow = cl.Get(JavaCalendar::kDayOfWeek);
        int dow = f.days_of_week.First();
        if (auto d = f.days_of_week.LowerBound(cdow)) dow = *d;
        int days_to_add = 0;
        if (cdow < dow) days_to_add = dow - cdow;
        if (cdow > dow) days_to_add = dow + (7 - cdow);
        int lday = LastDayOfMonth(mon, cl.Get(JavaCalendar::kYear));
        if (day + days_to_add > lday) {
          ResetTime(cl);
          cl.Set(JavaCalendar::kDayOfMonth, 1);
          cl.Set(JavaCalendar::kMonth, mon);
          continue;
        } else if (days_to_add > 0) {
          ResetTime(cl);
          cl.Set(JavaCalendar::kDayOfMonth, day + days_to_add);
          cl.Set(JavaCalendar::kMonth, mon - 1);
          continue;
        }
      }
    } else {
      return std::nullopt;  // unreachable: the parser rejects both or neither
    }
    cl.Set(JavaCalendar::kDayOfMonth, day);

    // month
    mon = cl.Get(JavaCalendar::kMonth) + 1;
    int year = cl.Get(JavaCalendar::kYear);
    t = -1;
    if (year > f.max_year) return std::nullopt;
    if (auto m = f.months.LowerBound(mon)) {
      t = mon;
      mon = *m;
    } else {
      mon = f.months.First();
      ++year;
    }
    if (mon != t) {
      ResetTime(cl);
      cl.Set(JavaCalendar::kDayOfMonth, 1);
      cl.Set(JavaCalendar::kMonth, mon - 1);
      cl.Set(JavaCalendar::kYear, year);
      continue;
    }
    cl.Set(JavaCalendar::kMonth, mon - 1);

    // year
    year = cl.Get(JavaCalendar::kYear);
    t = -1;
    if (auto y = f.years.LowerBound(year)) {
      t = year;
      year = *y;
    } else {
      return std::nullopt;  // ran out of years
    }
    // Quartz sets the year and then gives up at the loop's top (past 2999); setting a year
    // such as 320600206 here would overflow the calendar's milliseconds first.
    if (year > 2999) return std::nullopt;
    if (year != t) {
      ResetTime(cl);
      cl.Set(JavaCalendar::kDayOfMonth, 1);
      cl.Set(JavaCalendar::kMonth, 0);
      cl.Set(JavaCalendar::kYear, year);
      continue;
    }
    cl.Set(JavaCalendar::kYear, year);
    return cl.GetTimeInMillis();
  }
}

int64_t ToMillis(CronExpression::TimePoint t) {
  return std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

Result<CronExpression> CronExpression::Parse(std::string_view expression) {
  static const int kMaxYear = CurrentYearPlus100();
  auto fields = schedule::ParseCronFields(expression, kMaxYear);
  if (!fields.ok()) return fields.status();
  return CronExpression(std::string(expression),
                        std::make_shared<const CronFields>(std::move(fields).value()));
}

std::optional<CronExpression::TimePoint> CronExpression::NextFireTimeAfter(
    TimePoint after, const TimeZone& zone) const {
  auto ms = TimeAfter(*fields_, zone.rules(), ToMillis(after));
  if (!ms) return std::nullopt;
  return TimePoint{} + std::chrono::milliseconds(*ms);
}

std::vector<CronExpression::TimePoint> CronExpression::NextFireTimes(TimePoint after,
                                                                     const TimeZone& zone,
                                                                     int count) const {
  std::vector<TimePoint> times;
  for (int i = 0; i < count; ++i) {
    auto next = NextFireTimeAfter(after, zone);
    if (!next.has_value()) break;
    times.push_back(*next);
    after = *next;
  }
  return times;
}

bool CronExpression::IsSatisfiedBy(TimePoint t, const TimeZone& zone) const {
  int64_t ms = ToMillis(t);
  int64_t whole = ms - ((ms % 1000) + 1000) % 1000;
  auto next = TimeAfter(*fields_, zone.rules(), whole - 1000);
  return next && *next == whole;
}

}  // namespace elasticjob
