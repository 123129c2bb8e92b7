// CronFields: a parsed Quartz cron expression, in the form Quartz's own algorithm reads.
//
// Thread safety: immutable once parsed.
#ifndef ELASTICJOB_SCHEDULE_CRON_CRON_FIELDS_H_
#define ELASTICJOB_SCHEDULE_CRON_CRON_FIELDS_H_

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob::schedule {

// Quartz's markers inside the value sets.
inline constexpr int kNoSpec = 98;   // '?'
inline constexpr int kAllSpec = 99;  // '*'

// A sorted set of ints with Java TreeSet's tailSet(v).first() as LowerBound.
class IntSet {
 public:
  void Add(int v) {
    auto it = std::lower_bound(v_.begin(), v_.end(), v);
    if (it == v_.end() || *it != v) v_.insert(it, v);
  }
  bool Contains(int v) const { return std::binary_search(v_.begin(), v_.end(), v); }
  bool empty() const { return v_.empty(); }
  int First() const { return v_.front(); }
  int Last() const { return v_.back(); }
  // The smallest element >= v, if any.
  std::optional<int> LowerBound(int v) const {
    auto it = std::lower_bound(v_.begin(), v_.end(), v);
    if (it == v_.end()) return std::nullopt;
    return *it;
  }
  const std::vector<int>& values() const { return v_; }

 private:
  std::vector<int> v_;
};

enum CronField { kSecond = 0, kMinute, kHour, kDayOfMonth, kMonth, kDayOfWeek, kYear };

// "second", "minute", ... as error messages name them.
const char* CronFieldName(int field);

struct CronFields {
  IntSet seconds, minutes, hours, days_of_month, months, days_of_week, years;
  bool lastday_of_week = false;
  int nthday_of_week = 0;
  bool lastday_of_month = false;
  bool nearest_weekday = false;
  int lastday_offset = 0;
  int max_year = 0;  // Quartz's MAX_YEAR: the current year + 100

  IntSet& Set(int field);
};

// Parses `expression` with Quartz 2.3.2's rules: the same expressions are accepted and
// rejected. `max_year` is Quartz's MAX_YEAR. Expressions Quartz accepts but then cannot
// evaluate (a field left with no values, such as seconds `L`) are rejected here.
Result<CronFields> ParseCronFields(std::string_view expression, int max_year);

}  // namespace elasticjob::schedule

#endif  // ELASTICJOB_SCHEDULE_CRON_CRON_FIELDS_H_
