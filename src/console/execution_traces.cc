#include "console/execution_traces.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

namespace elasticjob::console {
namespace {

using std::chrono::milliseconds;

bool IsTerminal(TraceState s) {
  return s != TraceState::kTaskStaging && s != TraceState::kTaskRunning;
}

// The TASK_FINISHED of a misfire notice (tracing::MisfireMessage).
bool IsMisfireFinish(const JobStatusTraceEvent& t) {
  return t.state == TraceState::kTaskFinished && t.message.starts_with("Previous job '");
}

int Rank(TraceState s) {
  return s == TraceState::kTaskStaging ? 0 : s == TraceState::kTaskRunning ? 1 : 2;
}

}  // namespace

std::vector<JobStatusTraceEvent> PassTraces(const JobExecutionEvent& e,
                                            std::vector<JobStatusTraceEvent> rows) {
  // Oldest first; rows of one instant in the order a pass posts them (the database keeps no
  // order among equal times: TASK_STAGING and TASK_RUNNING share one).
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.creation_time != b.creation_time) return a.creation_time < b.creation_time;
    return Rank(a.state) < Rank(b.state);
  });
  // Misfire notices: the finish and the TASK_STAGING just before it.
  std::vector<bool> notice(rows.size(), false);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!IsMisfireFinish(rows[i])) continue;
    notice[i] = true;
    for (size_t j = i; j-- > 0;) {
      if (rows[j].state == TraceState::kTaskStaging && !notice[j]) {
        notice[j] = true;
        break;
      }
    }
  }
  std::optional<size_t> begin;
  for (size_t i = 0; i < rows.size() && rows[i].creation_time <= e.start_time; ++i) {
    if (rows[i].state == TraceState::kTaskStaging && !notice[i]) begin = i;
  }
  // A terminal row before this threshold ended an earlier pass (one of the same instant).
  const Clock::WallTime ends_after = e.complete_time.value_or(e.start_time);
  std::vector<JobStatusTraceEvent> out;
  size_t i = 0;
  if (begin) {
    out.push_back(rows[*begin]);
    i = *begin + 1;
  } else {
    while (i < rows.size() && rows[i].creation_time < e.start_time) ++i;  // its start is unknown
  }
  for (; i < rows.size(); ++i) {
    if (notice[i]) continue;
    const JobStatusTraceEvent& t = rows[i];
    if (t.state == TraceState::kTaskStaging) break;  // the next pass
    if (IsTerminal(t.state) && t.creation_time < ends_after) continue;
    out.push_back(t);
    if (IsTerminal(t.state)) break;
  }
  return out;
}

Result<std::vector<JobStatusTraceEvent>> ReadPassTraces(TraceReader& reader,
                                                        const JobExecutionEvent& e,
                                                        Clock::WallTime now) {
  StatusQuery before;
  before.job_name = e.job_name;
  before.task_id = e.task_id;
  before.until = e.start_time + milliseconds(1);
  before.limit = 50;
  auto rows = reader.StatusTraces(before);
  if (!rows.ok()) return rows.status();
  // After the start: the pass ends when its last item does, which may be long after this
  // one; windows that widen until its end is seen (each newest first, so each read whole).
  const Clock::WallTime from = e.start_time + milliseconds(1);
  std::vector<Clock::WallTime> ends;
  if (e.complete_time) {
    for (auto extra : {milliseconds(2000), milliseconds(60000), milliseconds(3600000)}) {
      ends.push_back(std::min(*e.complete_time + extra, now + milliseconds(1000)));
    }
  }
  ends.push_back(now + milliseconds(1000));
  Clock::WallTime since = from;
  for (Clock::WallTime until : ends) {
    if (until <= since) continue;
    StatusQuery after;
    after.job_name = e.job_name;
    after.task_id = e.task_id;
    after.since = since;
    after.until = until;
    after.limit = 500;
    auto more = reader.StatusTraces(after);
    if (!more.ok()) return more.status();
    bool ended = false;
    for (auto& t : *more) {
      if (IsTerminal(t.state) && !IsMisfireFinish(t) &&
          t.creation_time >= e.complete_time.value_or(e.start_time)) {
        ended = true;
      }
      rows->push_back(std::move(t));
    }
    since = until;
    if (ended) break;
  }
  return PassTraces(e, *std::move(rows));
}

void LastRuns::Merge(const std::vector<JobExecutionEvent>& rows) {
  for (const JobExecutionEvent& r : rows) {
    Item& item = jobs_[r.job_name][r.sharding_item];
    if (!item.latest || item.latest->id == r.id || r.start_time > item.latest->start_time) {
      item.latest = r;
    }
    if (r.complete_time &&
        (!item.finished || item.finished->id == r.id || r.start_time > item.finished->start_time)) {
      item.finished = r;
    }
    if (!r.ip.empty() && !r.hostname.empty()) {
      auto& host = hostnames_[r.ip];
      if (host.second.empty() || r.start_time >= host.first) host = {r.start_time, r.hostname};
    }
  }
}

std::optional<LastRuns::Summary> LastRuns::Of(const std::string& job,
                                              int sharding_total_count) const {
  auto found = jobs_.find(job);
  if (found == jobs_.end()) return std::nullopt;
  std::optional<Summary> out;
  bool failing = false;
  for (const auto& [number, item] : found->second) {
    if (number >= sharding_total_count) break;
    if (item.finished && !item.finished->success) failing = true;
    if (item.latest && (!out || item.latest->start_time > out->latest.start_time)) {
      out = Summary{*item.latest, false};
    }
  }
  if (out) out->failing = failing;
  return out;
}

std::vector<std::string> LastRuns::Unfinished() const {
  std::vector<std::string> ids;
  for (const auto& [job, items] : jobs_) {
    for (const auto& [number, item] : items) {
      if (item.latest && !item.latest->complete_time) ids.push_back(item.latest->id);
    }
  }
  return ids;
}

std::string LastRuns::HostnameOf(const std::string& ip) const {
  auto found = hostnames_.find(ip);
  return found == hostnames_.end() ? "" : found->second.second;
}

}  // namespace elasticjob::console
