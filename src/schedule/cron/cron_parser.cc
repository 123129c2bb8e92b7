// A re-implementation of the parsing rules of Quartz 2.3.2's CronExpression. The structure
// follows Quartz's so that its quirks (which junk it ignores, which it rejects) stay
// identical; tests/integration/schedule compares the two on generated expressions.
#include <fmt/format.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "schedule/cron/cron_fields.h"

namespace elasticjob::schedule {
namespace {

// Thrown inside the parser only, where Quartz throws ParseException or lets a runtime
// exception escape; ParseCronFields turns it into a Status.
struct CronError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* const kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
const char* const kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Java's Integer.parseInt: optional sign, at least one digit, 32-bit range.
int JavaParseInt(std::string_view s) {
  if (s.empty()) throw CronError(fmt::format("'{}' is not a number", s));
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
    if (s.size() == 1) throw CronError(fmt::format("'{}' is not a number", s));
  }
  long long v = 0;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) throw CronError(fmt::format("'{}' is not a number", s));
    v = v * 10 + (s[i] - '0');
    if (v > static_cast<long long>(INT_MAX) + 1) {
      throw CronError(fmt::format("'{}' is out of range", s));
    }
  }
  if (neg) v = -v;
  if (v > INT_MAX || v < INT_MIN) throw CronError(fmt::format("'{}' is out of range", s));
  return static_cast<int>(v);
}

class Parser {
 public:
  Parser(CronFields& f, int field) : f_(f), field_(field) {}

  void StoreExpressionVals(const std::string& s) {
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) return;
    char c = s[i];
    if (c >= 'A' && c <= 'Z' && s != "L" && s != "LW" && !MatchesLastDayOffset(s)) {
      StoreName(s, i);
      return;
    }
    if (c == '?') {
      ++i;
      if (i + 1 < s.size() && s[i] != ' ' && s[i + 1] != '\t') {
        throw CronError(fmt::format("illegal character after '?': '{}'", s[i]));
      }
      if (field_ != kDayOfWeek && field_ != kDayOfMonth) {
        throw CronError("'?' can only be specified for day-of-month or day-of-week");
      }
      if (field_ == kDayOfWeek && !f_.lastday_of_month) {
        if (!f_.days_of_month.empty() && f_.days_of_month.Last() == kNoSpec) {
          throw CronError("'?' can only be specified for day-of-month -OR- day-of-week");
        }
      }
      AddToSet(kNoSpec, -1, 0);
      return;
    }
    if (c == '*' || c == '/') {
      if (c == '*' && i + 1 >= s.size()) {
        AddToSet(kAllSpec, -1, 0);
        return;
      }
      if (c == '/' && (i + 1 >= s.size() || s[i + 1] == ' ' || s[i + 1] == '\t')) {
        throw CronError("'/' must be followed by an integer");
      }
      if (c == '*') ++i;
      c = s[i];
      int incr;
      if (c == '/') {
        ++i;
        if (i >= s.size()) throw CronError("unexpected end of field after '/'");
        incr = JavaParseInt(std::string_view(s).substr(i));
        CheckIncrementRange(incr);
      } else {
        incr = 1;
      }
      AddToSet(kAllSpec, -1, incr);
      return;
    }
    if (c == 'L') {
      ++i;
      if (field_ == kDayOfMonth) f_.lastday_of_month = true;
      if (field_ == kDayOfWeek) AddToSet(7, 7, 0);
      if (field_ == kDayOfMonth && s.size() > i) {
        c = s[i];
        if (c == '-') {
          auto [value, pos] = GetValue(0, s, i + 1);
          f_.lastday_offset = value;
          if (f_.lastday_offset > 30) throw CronError("offset from last day must be <= 30");
          i = pos;
        }
        if (s.size() > i && s[i] == 'W') f_.nearest_weekday = true;
      }
      return;
    }
    if (IsDigit(c)) {
      int val = c - '0';
      ++i;
      if (i >= s.size()) {
        AddToSet(val, -1, -1);
        return;
      }
      c = s[i];
      if (IsDigit(c)) {
        auto [v, pos] = GetValue(val, s, i);
        val = v;
        i = pos;
      }
      CheckNext(i, s, val);
      return;
    }
    throw CronError(fmt::format("unexpected character '{}'", c));
  }

 private:
  static bool MatchesLastDayOffset(const std::string& s) {  // ^L-[0-9]*[W]?$
    if (s.size() < 2 || s[0] != 'L' || s[1] != '-') return false;
    size_t i = 2;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i < s.size() && s[i] == 'W') ++i;
    return i == s.size();
  }

  static char At(const std::string& s, size_t i) {
    if (i >= s.size()) throw CronError("unexpected end of field");
    return s[i];
  }

  static std::string Sub3(const std::string& s, size_t i) {
    if (i + 3 > s.size()) {
      throw CronError(fmt::format("'{}' is not a valid name", s.substr(std::min(i, s.size()))));
    }
    return s.substr(i, 3);
  }

  void StoreName(const std::string& s, size_t i) {
    std::string sub = Sub3(s, i);
    int sval = -1;
    int eval = -1;
    if (field_ == kMonth) {
      sval = MonthNumber(sub) + 1;
      if (sval <= 0) throw CronError(fmt::format("invalid month value '{}'", sub));
      if (s.size() > i + 3 && s[i + 3] == '-') {
        i += 4;
        sub = Sub3(s, i);
        eval = MonthNumber(sub) + 1;
        if (eval <= 0) throw CronError(fmt::format("invalid month value '{}'", sub));
      }
    } else if (field_ == kDayOfWeek) {
      sval = DayNumber(sub);
      if (sval < 0) throw CronError(fmt::format("invalid day-of-week value '{}'", sub));
      if (s.size() > i + 3) {
        char c = s[i + 3];
        if (c == '-') {
          i += 4;
          sub = Sub3(s, i);
          eval = DayNumber(sub);
          if (eval < 0) throw CronError(fmt::format("invalid day-of-week value '{}'", sub));
        } else if (c == '#') {
          i += 4;
          ParseNth(s.substr(std::min(i, s.size())));
        } else if (c == 'L') {
          f_.lastday_of_week = true;
        }
      }
    } else {
      throw CronError(fmt::format("illegal characters for this position: '{}'", sub));
    }
    AddToSet(sval, eval, eval != -1 ? 1 : 0);
  }

  void ParseNth(const std::string& text) {
    int n = 0;
    try {
      n = JavaParseInt(text);
    } catch (const CronError&) {
      n = 0;
    }
    if (n < 1 || n > 5) throw CronError("a numeric value between 1 and 5 must follow '#'");
    f_.nthday_of_week = n;
  }

  static int MonthNumber(const std::string& s) {
    for (int k = 0; k < 12; ++k)
      if (s == kMonthNames[k]) return k;
    return -1;
  }
  static int DayNumber(const std::string& s) {
    for (int k = 0; k < 7; ++k)
      if (s == kDayNames[k]) return k + 1;
    return -1;
  }

  // Quartz's getValue: `v` followed by the digits at s[i...]. Returns {value, next position}
  // where the position is one past the end when the digits end the string (Quartz's quirk).
  static std::pair<int, size_t> GetValue(int v, const std::string& s, size_t i) {
    char c = At(s, i);
    std::string digits = std::to_string(v);
    while (IsDigit(c)) {
      digits.push_back(c);
      ++i;
      if (i >= s.size()) break;
      c = s[i];
    }
    size_t pos = i < s.size() ? i : i + 1;
    return {JavaParseInt(digits), pos};
  }

  void CheckIncrementRange(int incr) const {
    if (incr > 59 && (field_ == kSecond || field_ == kMinute)) {
      throw CronError(fmt::format("increment {} must be at most 59", incr));
    } else if (incr > 23 && field_ == kHour) {
      throw CronError(fmt::format("increment {} must be at most 23", incr));
    } else if (incr > 31 && field_ == kDayOfMonth) {
      throw CronError(fmt::format("increment {} must be at most 31", incr));
    } else if (incr > 7 && field_ == kDayOfWeek) {
      throw CronError(fmt::format("increment {} must be at most 7", incr));
    } else if (incr > 12 && field_ == kMonth) {
      throw CronError(fmt::format("increment {} must be at most 12", incr));
    }
  }

  void CheckNext(size_t i, const std::string& s, int val) {
    if (i >= s.size()) {
      AddToSet(val, -1, -1);
      return;
    }
    char c = s[i];
    if (c == 'L') {
      if (field_ != kDayOfWeek) throw CronError("'L' option is not valid here");
      if (val < 1 || val > 7) throw CronError("day-of-week values must be between 1 and 7");
      f_.lastday_of_week = true;
      f_.Set(field_).Add(val);
      return;
    }
    if (c == 'W') {
      if (field_ != kDayOfMonth) throw CronError("'W' option is not valid here");
      f_.nearest_weekday = true;
      if (val > 31) {
        throw CronError("the 'W' option does not make sense with values larger than 31");
      }
      if (val < 1) {  // Quartz accepts 0W, then loops forever computing the next fire time
        throw CronError("day-of-month values must be between 1 and 31");
      }
      f_.Set(field_).Add(val);
      return;
    }
    if (c == '#') {
      if (field_ != kDayOfWeek) throw CronError("'#' option is not valid here");
      ParseNth(s.substr(i + 1));
      f_.Set(field_).Add(val);
      return;
    }
    if (c == '-') {
      ++i;
      c = At(s, i);
      int end = JavaParseInt(std::string(1, c));
      ++i;
      if (i >= s.size()) {
        AddToSet(val, end, 1);
        return;
      }
      c = s[i];
      if (IsDigit(c)) {
        auto [v, pos] = GetValue(end, s, i);
        end = v;
        i = pos;
      }
      if (i < s.size() && s[i] == '/') {
        ++i;
        c = At(s, i);
        int v2 = JavaParseInt(std::string(1, c));
        ++i;
        if (i >= s.size()) {
          AddToSet(val, end, v2);
          return;
        }
        c = s[i];
        if (IsDigit(c)) {
          auto [v3, pos] = GetValue(v2, s, i);
          AddToSet(val, end, v3);
        } else {
          AddToSet(val, end, v2);
        }
        return;
      }
      AddToSet(val, end, 1);
      return;
    }
    if (c == '/') {
      if (i + 1 >= s.size() || s[i + 1] == ' ' || s[i + 1] == '\t') {
        throw CronError("'/' must be followed by an integer");
      }
      ++i;
      c = s[i];
      int v2 = JavaParseInt(std::string(1, c));
      ++i;
      if (i >= s.size()) {
        CheckIncrementRange(v2);
        AddToSet(val, -1, v2);
        return;
      }
      c = s[i];
      if (IsDigit(c)) {
        auto [v3, pos] = GetValue(v2, s, i);
        CheckIncrementRange(v3);
        AddToSet(val, -1, v3);
        return;
      }
      throw CronError(fmt::format("unexpected character '{}' after '/'", c));
    }
    AddToSet(val, -1, 0);
  }

  void AddToSet(int val, int end, int incr) {
    IntSet& set = f_.Set(field_);
    switch (field_) {
      case kSecond:
      case kMinute:
        if ((val < 0 || val > 59 || end > 59) && val != kAllSpec) {
          throw CronError("minute and second values must be between 0 and 59");
        }
        break;
      case kHour:
        if ((val < 0 || val > 23 || end > 23) && val != kAllSpec) {
          throw CronError("hour values must be between 0 and 23");
        }
        break;
      case kDayOfMonth:
        if ((val < 1 || val > 31 || end > 31) && val != kAllSpec && val != kNoSpec) {
          throw CronError("day-of-month values must be between 1 and 31");
        }
        break;
      case kMonth:
        if ((val < 1 || val > 12 || end > 12) && val != kAllSpec) {
          throw CronError("month values must be between 1 and 12");
        }
        break;
      case kDayOfWeek:
        if ((val == 0 || val > 7 || end > 7) && val != kAllSpec && val != kNoSpec) {
          throw CronError("day-of-week values must be between 1 and 7");
        }
        break;
      default:
        break;
    }
    if ((incr == 0 || incr == -1) && val != kAllSpec) {
      set.Add(val != -1 ? val : kNoSpec);
      return;
    }
    int start = val;
    int stop = end;
    if (val == kAllSpec && incr <= 0) {
      incr = 1;
      set.Add(kAllSpec);
    }
    int lo = 0;
    int hi = 0;
    switch (field_) {
      case kSecond:
      case kMinute:
        lo = 0;
        hi = 59;
        break;
      case kHour:
        lo = 0;
        hi = 23;
        break;
      case kDayOfMonth:
        lo = 1;
        hi = 31;
        break;
      case kMonth:
        lo = 1;
        hi = 12;
        break;
      case kDayOfWeek:
        lo = 1;
        hi = 7;
        break;
      case kYear:
        lo = 1970;
        hi = f_.max_year;
        break;
      default:
        break;
    }
    if (stop == -1) stop = hi;
    if (start == -1 || start == kAllSpec) start = lo;
    int max = -1;
    if (stop < start) {
      switch (field_) {
        case kSecond:
        case kMinute:
          max = 60;
          break;
        case kHour:
          max = 24;
          break;
        case kMonth:
          max = 12;
          break;
        case kDayOfWeek:
          max = 7;
          break;
        case kDayOfMonth:
          max = 31;
          break;
        default:
          throw CronError("start year must be less than stop year");
      }
      stop += max;
    }
    // Years beyond 3000 can never fire (Quartz gives up past 2999); one representative is
    // enough and keeps `1970-2000000000` from allocating billions of entries.
    if (field_ == kYear && stop > 3000) stop = std::max(start, 3000);
    for (long long k = start; k <= stop; k += incr) {
      int v = static_cast<int>(k);
      if (max == -1) {
        set.Add(v);
      } else {
        int v2 = v % max;
        if (v2 == 0 && (field_ == kMonth || field_ == kDayOfWeek || field_ == kDayOfMonth)) {
          v2 = max;
        }
        set.Add(v2);
      }
    }
  }

  CronFields& f_;
  int field_;
};

// Java's String.trim: strips chars <= U+0020 at both ends.
std::string JavaTrim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= 0x20) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> Tokenize(std::string_view s, std::string_view delims) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && delims.find(s[i]) != std::string_view::npos) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    while (j < s.size() && delims.find(s[j]) == std::string_view::npos) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

const char* CronFieldName(int field) {
  static const char* const kNames[] = {"second", "minute",      "hour", "day-of-month",
                                       "month",  "day-of-week", "year"};
  return field >= 0 && field <= kYear ? kNames[field] : "field";
}

IntSet& CronFields::Set(int field) {
  switch (field) {
    case kSecond:
      return seconds;
    case kMinute:
      return minutes;
    case kHour:
      return hours;
    case kDayOfMonth:
      return days_of_month;
    case kMonth:
      return months;
    case kDayOfWeek:
      return days_of_week;
    default:
      return years;
  }
}

Result<CronFields> ParseCronFields(std::string_view expression, int max_year) {
  std::string upper(expression);
  for (char& c : upper)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  auto error = [&](int field, const std::string& token, const std::string& why) {
    if (field < 0) {
      return InvalidArgument(fmt::format("cron '{}': {}", expression, why));
    }
    return InvalidArgument(
        fmt::format("cron '{}': {} field '{}': {}", expression, CronFieldName(field), token, why));
  };
  CronFields f;
  f.max_year = max_year;
  int field = kSecond;
  std::vector<std::string> tokens = Tokenize(upper, " \t");
  for (const std::string& raw : tokens) {
    if (field > kYear) break;  // Quartz ignores anything after the year
    std::string expr = JavaTrim(raw);
    bool has_l = expr.find('L') != std::string::npos;
    bool has_comma = expr.find(',') != std::string::npos;
    if (field == kDayOfMonth && has_l && expr.size() > 1 && has_comma) {
      return error(field, expr, "'L' and 'LW' cannot be combined with other days of the month");
    }
    if (field == kDayOfWeek && has_l && expr.size() > 1 && has_comma) {
      return error(field, expr, "'L' cannot be combined with other days of the week");
    }
    size_t hash = expr.find('#');
    if (field == kDayOfWeek && hash != std::string::npos &&
        expr.find('#', hash + 1) != std::string::npos) {
      return error(field, expr, "more than one '#' (nth day) is not supported");
    }
    try {
      Parser parser(f, field);
      for (const std::string& v : Tokenize(expr, ",")) parser.StoreExpressionVals(v);
    } catch (const CronError& e) {
      return error(field, expr, e.what());
    }
    ++field;
  }
  if (field <= kDayOfWeek) {
    return error(-1, "",
                 fmt::format("expected 6 or 7 fields (second minute hour day-of-month month "
                             "day-of-week [year]), got {}",
                             field));
  }
  if (field <= kYear) {
    Parser(f, kYear).StoreExpressionVals("*");
  }
  bool dom_spec = !f.days_of_month.Contains(kNoSpec);
  bool dow_spec = !f.days_of_week.Contains(kNoSpec);
  if (dom_spec == dow_spec) {
    return error(-1, "",
                 dom_spec ? "specifying both a day-of-month and a day-of-week is not supported; "
                            "use '?' in one of them"
                          : "'?' can only be specified for day-of-month -OR- day-of-week");
  }
  // Quartz accepts these but then fails on first use (NoSuchElementException).
  for (int k : {kSecond, kMinute, kHour, kMonth}) {
    if (f.Set(k).empty()) return error(k, tokens[static_cast<size_t>(k)], "has no values");
  }
  if (dow_spec && f.days_of_week.empty()) {
    return error(kDayOfWeek, tokens[kDayOfWeek], "has no values");
  }
  if (dom_spec && f.days_of_month.empty() && !f.lastday_of_month) {
    return error(kDayOfMonth, tokens[kDayOfMonth], "has no values");
  }
  return f;
}

}  // namespace elasticjob::schedule
