#include "tracing/events/event.h"

#include <fmt/format.h>
#include <time.h>

#include <charconv>
#include <random>

#include "elasticjob/tracing/job_event.h"

namespace elasticjob {

const char* ExecutionSourceName(ExecutionSource source) {
  switch (source) {
    case ExecutionSource::kNormalTrigger:
      return "NORMAL_TRIGGER";
    case ExecutionSource::kMisfire:
      return "MISFIRE";
    case ExecutionSource::kFailover:
      return "FAILOVER";
  }
  return "NORMAL_TRIGGER";
}

Result<ExecutionSource> ParseExecutionSource(std::string_view name) {
  for (auto s :
       {ExecutionSource::kNormalTrigger, ExecutionSource::kMisfire, ExecutionSource::kFailover}) {
    if (name == ExecutionSourceName(s)) return s;
  }
  return InvalidArgument(fmt::format("execution_source: unknown '{}'", name));
}

namespace {
constexpr const char* kStateNames[] = {
    "TASK_STAGING", "TASK_RUNNING",          "TASK_FINISHED",    "TASK_KILLED",
    "TASK_LOST",    "TASK_FAILED",           "TASK_ERROR",       "TASK_DROPPED",
    "TASK_GONE",    "TASK_GONE_BY_OPERATOR", "TASK_UNREACHABLE", "TASK_UNKNOWN"};
}  // namespace

const char* TraceStateName(TraceState state) { return kStateNames[static_cast<int>(state)]; }

Result<TraceState> ParseTraceState(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kStateNames)); ++i) {
    if (name == kStateNames[i]) return static_cast<TraceState>(i);
  }
  return InvalidArgument(fmt::format("state: unknown '{}'", name));
}

}  // namespace elasticjob

namespace elasticjob::tracing {

Uuid NewUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng();
  uint64_t lo = rng();
  hi = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 1
  static constexpr char kHex[] = "0123456789abcdef";
  Uuid out;
  int pos = 0;
  auto put = [&](uint64_t v, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i) out[pos++] = kHex[(v >> (4 * i)) & 0xF];
  };
  put(hi >> 32, 8);
  out[pos++] = '-';
  put(hi >> 16, 4);
  out[pos++] = '-';
  put(hi, 4);
  out[pos++] = '-';
  put(lo >> 48, 4);
  out[pos++] = '-';
  put(lo, 12);
  return out;
}

std::shared_ptr<const RunInfo> MakeRunInfo(std::string job_name, std::string task_id,
                                           std::string hostname, std::string ip) {
  auto info = std::make_shared<RunInfo>();
  // jobName@-@items@-@READY@-@ip@-@pid...: ElasticJob's TaskContext.from.
  std::vector<std::string_view> parts;
  std::string_view rest = task_id;
  while (true) {
    size_t d = rest.find("@-@");
    parts.push_back(rest.substr(0, d));
    if (d == std::string_view::npos) break;
    rest.remove_prefix(d + 3);
  }
  if (parts.size() > 1) {
    std::string items = "[";
    std::string_view list = parts[1];
    while (!list.empty()) {
      size_t c = list.find(',');
      if (items.size() > 1) items += ", ";
      items += list.substr(0, c);
      if (c == std::string_view::npos) break;
      list.remove_prefix(c + 1);
    }
    items += ']';
    info->items_text = std::move(items);
  } else {
    info->items_text = "[]";
  }
  info->execution_type = parts.size() > 2 ? std::string(parts[2]) : "READY";
  info->slave_id = parts.size() > 3 ? std::string(parts[3]) : ip;
  info->job_name = std::move(job_name);
  info->task_id = std::move(task_id);
  info->hostname = std::move(hostname);
  info->ip = std::move(ip);
  return info;
}

std::string FormatTimestamp(Clock::WallTime t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  time_t secs = static_cast<time_t>(ms / 1000);
  int frac = static_cast<int>(ms % 1000);
  if (frac < 0) {
    frac += 1000;
    --secs;
  }
  struct tm tm {};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

Result<Clock::WallTime> ParseTimestamp(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument(
        fmt::format("time: expected YYYY-MM-DD HH:MM:SS[.fff] (UTC), got '{}'", text));
  };
  int f[6] = {0, 0, 0, 0, 0, 0};
  const char seps[] = {'-', '-', ' ', ':', ':'};
  size_t pos = 0;
  const int widths[] = {4, 2, 2, 2, 2, 2};
  for (int i = 0; i < 6; ++i) {
    if (pos + widths[i] > text.size()) {
      if (i == 3) break;  // a date alone: midnight
      return bad();
    }
    auto [p, ec] = std::from_chars(text.data() + pos, text.data() + pos + widths[i], f[i]);
    if (ec != std::errc() || p != text.data() + pos + widths[i]) return bad();
    pos += widths[i];
    if (i < 5) {
      if (pos == text.size() && i == 2) break;
      if (pos >= text.size()) return bad();
      char c = text[pos];
      if (!(c == seps[i] || (i == 2 && c == 'T'))) return bad();
      ++pos;
    }
  }
  int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && digits < 9) {
      nanos = nanos * 10 + (text[pos] - '0');
      ++pos;
      ++digits;
    }
    if (digits == 0) return bad();
    for (int i = digits; i < 9; ++i) nanos *= 10;
  }
  if (pos < text.size() && text[pos] == 'Z') ++pos;
  if (pos != text.size()) return bad();
  if (f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60) {
    return bad();
  }
  struct tm tm {};
  tm.tm_year = f[0] - 1900;
  tm.tm_mon = f[1] - 1;
  tm.tm_mday = f[2];
  tm.tm_hour = f[3];
  tm.tm_min = f[4];
  tm.tm_sec = f[5];
  time_t secs = timegm(&tm);
  return Clock::WallTime(std::chrono::duration_cast<Clock::WallTime::duration>(
      std::chrono::seconds(secs) + std::chrono::nanoseconds(nanos)));
}

std::string Truncate(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s;
}

}  // namespace elasticjob::tracing
