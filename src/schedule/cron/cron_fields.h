// CronFields: a parsed Quartz cron expression, in the form Quartz's own algorithm reads.
//
// Thread safety: immutable once parsed.
#ifndef ELASTICJOB_SCHEDULE_CRON_CRON_FIELDS_H_
#define ELASTICJOB_SCHEDULE_CRON_CRON_FIELDS_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob::schedule {

// Quartz's markers inside the value sets.
inline constexpr int kNoSpec = 98;   // '?'
inline constexpr int kAllSpec = 99;  // '*'

// A set of ints with Java TreeSet's tailSet(v).first() as LowerBound. Values 0 to 127 (every
// field but the year, with Quartz's markers 98 and 99) are bits, so that LowerBound is a mask
// and a count of trailing zeros; others (years) sorted, disjoint ranges: a year field of `*`
// (1970 to Quartz's MAX_YEAR) is one range, not 157 values, in every job's expression.
class IntSet {
 public:
  void Add(int v) {
    if (v >= 0 && v < 128) {
      bits_[v >> 6] |= uint64_t{1} << (v & 63);
      return;
    }
    // The first range ending at or after v - 1 (the one v extends or falls in, if any).
    const int64_t w = v;  // v - 1 and v + 1 without overflow
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), w,
                               [](const Range& r, int64_t x) { return r.hi < x - 1; });
    if (it == ranges_.end() || it->lo > w + 1) {
      ranges_.insert(it, Range{v, v});
      return;
    }
    if (v >= it->lo && v <= it->hi) return;  // already in
    if (w == int64_t{it->hi} + 1) {
      it->hi = v;
      auto next = std::next(it);
      if (next != ranges_.end() && int64_t{next->lo} == w + 1) {  // bridges two ranges
        it->hi = next->hi;
        ranges_.erase(next);
      }
    } else {
      it->lo = v;  // v == it->lo - 1
    }
  }
  bool Contains(int v) const {
    if (v >= 0 && v < 128) return (bits_[v >> 6] >> (v & 63) & 1) != 0;
    auto it = RangeFrom(v);
    return it != ranges_.end() && it->lo <= v;
  }
  bool empty() const { return bits_[0] == 0 && bits_[1] == 0 && ranges_.empty(); }
  // REQUIRES: !empty().
  int First() const { return *LowerBound(std::numeric_limits<int>::min()); }
  int Last() const {
    if (!ranges_.empty() && ranges_.back().hi >= 128) return ranges_.back().hi;
    if (bits_[1] != 0) return 127 - std::countl_zero(bits_[1]);
    if (bits_[0] != 0) return 63 - std::countl_zero(bits_[0]);
    return ranges_.back().hi;
  }
  // How many ranges hold the values outside 0..127 (for tests).
  size_t range_count() const { return ranges_.size(); }
  // The smallest element >= v, if any.
  std::optional<int> LowerBound(int v) const {
    if (v >= 0 && v < 128) {
      uint64_t w = bits_[v >> 6] & (~uint64_t{0} << (v & 63));
      if (w != 0) return (v & 64) + std::countr_zero(w);
      if (v < 64 && bits_[1] != 0) return 64 + std::countr_zero(bits_[1]);
      if (ranges_.empty()) return std::nullopt;
    } else if (v < 0) {
      auto it = RangeFrom(v);
      if (it != ranges_.end() && it->lo < 0) return std::max(it->lo, v);
      return LowerBound(0);
    }
    auto it = RangeFrom(v);
    if (it == ranges_.end()) return std::nullopt;
    return std::max(it->lo, v);
  }

 private:
  struct Range {
    int lo;
    int hi;  // inclusive
  };
  // The first range ending at or after v.
  std::vector<Range>::const_iterator RangeFrom(int v) const {
    return std::lower_bound(ranges_.begin(), ranges_.end(), v,
                            [](const Range& r, int x) { return r.hi < x; });
  }

  uint64_t bits_[2] = {0, 0};  // values 0..127
  std::vector<Range> ranges_;  // the others, sorted and disjoint, none adjacent
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
