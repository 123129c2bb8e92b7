#include "elasticjob/schedule/time_zone.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <utility>

#include "schedule/zone_rules.h"

namespace elasticjob {
namespace schedule {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

CivilTime ZoneRules::Breakdown(int64_t utc_millis) const {
  int64_t secs = FloorDiv(utc_millis, 1000);
  int millis = static_cast<int>(utc_millis - secs * 1000);
  // Second precision throughout: a nanosecond system_clock overflows past the year 2262.
  cctz::time_point<cctz::seconds> tp{cctz::seconds(secs)};
  cctz::civil_second cs = cctz::convert(tp, zone);
  cctz::weekday wd = cctz::get_weekday(cctz::civil_day(cs));
  int dow = 0;
  switch (wd) {
    case cctz::weekday::sunday:
      dow = 1;
      break;
    case cctz::weekday::monday:
      dow = 2;
      break;
    case cctz::weekday::tuesday:
      dow = 3;
      break;
    case cctz::weekday::wednesday:
      dow = 4;
      break;
    case cctz::weekday::thursday:
      dow = 5;
      break;
    case cctz::weekday::friday:
      dow = 6;
      break;
    case cctz::weekday::saturday:
      dow = 7;
      break;
  }
  return CivilTime{cs.year(),   cs.month(),  cs.day(), cs.hour(),
                   cs.minute(), cs.second(), millis,   dow};
}

int64_t ZoneRules::ResolveWall(int64_t year, int month, int day, int hour, int minute, int second,
                               int millis) const {
  cctz::civil_second cs(year, month, day, hour, minute, second);  // normalises leniently
  cctz::time_zone::civil_lookup cl = zone.lookup(cs);
  cctz::time_point<cctz::seconds> tp;
  switch (cl.kind) {
    case cctz::time_zone::civil_lookup::UNIQUE:
      tp = cl.pre;
      break;
    case cctz::time_zone::civil_lookup::SKIPPED:
      tp = cs.year() <= 2037 ? cl.pre : cl.post;
      break;
    case cctz::time_zone::civil_lookup::REPEATED:
      tp = cl.post;
      break;
  }
  return tp.time_since_epoch().count() * 1000 + millis;
}

}  // namespace schedule

namespace {

// java.time.ZoneId.SHORT_IDS, which java.util.TimeZone also honours.
constexpr std::array<std::pair<std::string_view, std::string_view>, 28> kJavaShortIds = {{
    {"ACT", "Australia/Darwin"},
    {"AET", "Australia/Sydney"},
    {"AGT", "America/Argentina/Buenos_Aires"},
    {"ART", "Africa/Cairo"},
    {"AST", "America/Anchorage"},
    {"BET", "America/Sao_Paulo"},
    {"BST", "Asia/Dhaka"},
    {"CAT", "Africa/Harare"},
    {"CNT", "America/St_Johns"},
    {"CST", "America/Chicago"},
    {"CTT", "Asia/Shanghai"},
    {"EAT", "Africa/Addis_Ababa"},
    {"ECT", "Europe/Paris"},
    {"IET", "America/Indiana/Indianapolis"},
    {"IST", "Asia/Kolkata"},
    {"JST", "Asia/Tokyo"},
    {"MIT", "Pacific/Apia"},
    {"NET", "Asia/Yerevan"},
    {"NST", "Pacific/Auckland"},
    {"PLT", "Asia/Karachi"},
    {"PNT", "America/Phoenix"},
    {"PRT", "America/Puerto_Rico"},
    {"PST", "America/Los_Angeles"},
    {"SST", "Pacific/Guadalcanal"},
    {"VST", "Asia/Ho_Chi_Minh"},
    {"EST", "GMT-05:00"},
    {"MST", "GMT-07:00"},
    {"HST", "GMT-10:00"},
}};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int ToInt(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

// Java's custom id: GMT[+-]h, hh, h:mm, hh:mm, hmm, hhmm. Returns the offset in seconds.
Result<int> ParseCustomOffset(std::string_view id) {
  auto bad = [&] {
    return InvalidArgument(fmt::format(
        "timeZone: '{}' is not a valid offset id; use GMT+HH:MM, for example GMT+08:00", id));
  };
  std::string_view rest = id.substr(3);
  if (rest.empty() || (rest[0] != '+' && rest[0] != '-')) return bad();
  int sign = rest[0] == '-' ? -1 : 1;
  rest.remove_prefix(1);
  int hours = 0;
  int minutes = 0;
  size_t colon = rest.find(':');
  if (colon != std::string_view::npos) {
    std::string_view h = rest.substr(0, colon);
    std::string_view m = rest.substr(colon + 1);
    if (!AllDigits(h) || h.size() > 2 || !AllDigits(m) || m.size() != 2) return bad();
    hours = ToInt(h);
    minutes = ToInt(m);
  } else {
    if (!AllDigits(rest) || rest.size() > 4) return bad();
    if (rest.size() <= 2) {
      hours = ToInt(rest);
    } else {
      hours = ToInt(rest.substr(0, rest.size() - 2));
      minutes = ToInt(rest.substr(rest.size() - 2));
    }
  }
  if (hours > 23 || minutes > 59) return bad();
  return sign * (hours * 3600 + minutes * 60);
}

std::shared_ptr<schedule::ZoneRules> FixedZone(int offset_seconds) {
  auto rules = std::make_shared<schedule::ZoneRules>();
  rules->zone = cctz::fixed_time_zone(cctz::seconds(offset_seconds));
  if (offset_seconds == 0) {
    rules->id = "GMT";
  } else {
    int a = offset_seconds < 0 ? -offset_seconds : offset_seconds;
    rules->id = fmt::format("GMT{}{:02d}:{:02d}", offset_seconds < 0 ? '-' : '+', a / 3600,
                            (a % 3600) / 60);
  }
  return rules;
}

bool PlausibleZoneName(std::string_view id) {
  if (id.empty() || id.front() == '/' || id.find("..") != std::string_view::npos) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
          c == '+'))
      return false;
  }
  return true;
}

}  // namespace

Result<TimeZone> TimeZone::Parse(std::string_view id) {
  if (id.empty()) return InvalidArgument("timeZone: must not be empty");
  for (const auto& [short_id, target] : kJavaShortIds) {
    if (id == short_id) {
      auto r = Parse(target);
      if (!r.ok()) return r;
      return r;
    }
  }
  if (id.size() > 3 && id.substr(0, 3) == "GMT" && (id[3] == '+' || id[3] == '-')) {
    auto offset = ParseCustomOffset(id);
    if (!offset.ok()) return offset.status();
    return TimeZone(FixedZone(*offset));
  }
  if (!PlausibleZoneName(id)) {
    return InvalidArgument(fmt::format("timeZone: '{}' is not a time zone id", id));
  }
  auto rules = std::make_shared<schedule::ZoneRules>();
  if (!cctz::load_time_zone(std::string(id), &rules->zone)) {
    return InvalidArgument(fmt::format(
        "timeZone: unknown time zone '{}' (expected an IANA id such as Asia/Shanghai, or "
        "GMT+08:00)",
        id));
  }
  rules->id = std::string(id);
  return TimeZone(std::move(rules));
}

TimeZone TimeZone::Utc() {
  static const auto* const kUtc = new std::shared_ptr<const schedule::ZoneRules>([] {
    auto r = std::make_shared<schedule::ZoneRules>();
    r->zone = cctz::utc_time_zone();
    r->id = "UTC";
    return r;
  }());
  return TimeZone(*kUtc);
}

TimeZone TimeZone::SystemDefault() {
  const char* tz = std::getenv("TZ");
  if (tz != nullptr && *tz != '\0') {
    std::string_view v(tz);
    if (v.front() == ':') v.remove_prefix(1);
    auto r = Parse(v);
    if (r.ok()) return *r;
  }
  std::ifstream f("/etc/timezone");
  std::string name;
  if (f && std::getline(f, name) && !name.empty()) {
    auto r = Parse(name);
    if (r.ok()) return *r;
  }
  auto rules = std::make_shared<schedule::ZoneRules>();
  rules->zone = cctz::local_time_zone();
  rules->id = rules->zone.name();
  return TimeZone(std::move(rules));
}

const std::string& TimeZone::id() const { return rules_->id; }

int TimeZone::OffsetSecondsAt(std::chrono::system_clock::time_point t) const {
  auto secs = std::chrono::time_point_cast<cctz::seconds>(t);
  return rules_->zone.lookup(secs).offset;
}

std::string TimeZone::FormatIso8601(std::chrono::system_clock::time_point t) const {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  schedule::CivilTime c = rules_->Breakdown(ms);
  int off = OffsetSecondsAt(t);
  char sign = off < 0 ? '-' : '+';
  int a = off < 0 ? -off : off;
  std::string offset = fmt::format("{}{:02d}:{:02d}", sign, a / 3600, (a % 3600) / 60);
  if (a % 60 != 0) offset += fmt::format(":{:02d}", a % 60);
  std::string fraction = c.millis != 0 ? fmt::format(".{:03d}", c.millis) : std::string();
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{}", c.year, c.month, c.day,
                     c.hour, c.minute, c.second, fraction, offset);
}

Result<std::chrono::system_clock::time_point> TimeZone::ParseIso8601(std::string_view text) const {
  auto bad = [&](std::string_view why) {
    return InvalidArgument(
        fmt::format("time '{}': {} (expected YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM])", text, why));
  };
  auto num = [&](size_t pos, size_t len, int* out) {
    if (pos + len > text.size() || !AllDigits(text.substr(pos, len))) return false;
    *out = ToInt(text.substr(pos, len));
    return true;
  };
  int y, mo, d, h = 0, mi = 0, s = 0, ms = 0;
  if (!num(0, 4, &y) || text.size() < 10 || text[4] != '-' || !num(5, 2, &mo) || text[7] != '-' ||
      !num(8, 2, &d))
    return bad("malformed date");
  size_t pos = 10;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != ' ') return bad("expected 'T' after the date");
    if (!num(pos + 1, 2, &h) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !num(pos + 4, 2, &mi))
      return bad("malformed time");
    pos += 6;
    if (pos < text.size() && text[pos] == ':') {
      if (!num(pos + 1, 2, &s)) return bad("malformed seconds");
      pos += 3;
      if (pos < text.size() && text[pos] == '.') {
        size_t start = ++pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        std::string frac(text.substr(start, pos - start));
        if (frac.empty()) return bad("malformed fraction");
        frac.resize(3, '0');
        ms = ToInt(frac.substr(0, 3));
      }
    }
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) {
    return bad("field out of range");
  }
  if (cctz::civil_day(y, mo, d).day() != d) return bad("no such day");
  std::string_view zone_part = text.substr(pos);
  // The clock counts nanoseconds in 64 bits: years 1678 to 2261 (out of range: overflow).
  auto in_range = [&](int64_t epoch_ms) -> Result<std::chrono::system_clock::time_point> {
    using Clock = std::chrono::system_clock;
    const auto lo = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::duration::min());
    const auto hi = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::duration::max());
    if (epoch_ms <= lo.count() || epoch_ms >= hi.count())
      return bad("out of range (years 1678 to 2261)");
    return Clock::time_point{} + std::chrono::milliseconds(epoch_ms);
  };
  if (zone_part.empty()) return in_range(rules_->ResolveWall(y, mo, d, h, mi, s, ms));
  int offset = 0;
  if (zone_part == "Z") {
    offset = 0;
  } else {
    int oh = 0, om = 0;
    if ((zone_part[0] != '+' && zone_part[0] != '-') || zone_part.size() != 6 ||
        !num(pos + 1, 2, &oh) || zone_part[3] != ':' || !num(pos + 4, 2, &om))
      return bad("malformed offset");
    offset = (zone_part[0] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  cctz::civil_second cs(y, mo, d, h, mi, s);
  auto tp = cctz::convert(cs, cctz::utc_time_zone()) - cctz::seconds(offset);
  return in_range(tp.time_since_epoch().count() * 1000 + ms);
}

}  // namespace elasticjob
