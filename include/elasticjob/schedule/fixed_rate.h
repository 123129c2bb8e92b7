// Fixed-rate fire times: every `period` from an anchor the whole cluster shares (docs/
// scheduling.md), so every instance computes the same instants whenever it started.
//
// clang-format off
//   auto next = elasticjob::FixedRateNextFireAfter(std::chrono::system_clock::now(),
//                                                  std::chrono::seconds(30));
// clang-format on
//
// Thread safety: pure functions.
#ifndef ELASTICJOB_SCHEDULE_FIXED_RATE_H_
#define ELASTICJOB_SCHEDULE_FIXED_RATE_H_

#include <chrono>
#include <vector>

namespace elasticjob {

// The first instant strictly after `after` of the form `anchor + k * period` (k any integer).
// The default anchor is the Unix epoch: a 30 s job fires at :00 and :30 of every minute on
// every instance. REQUIRES: period > 0.
std::chrono::system_clock::time_point FixedRateNextFireAfter(
    std::chrono::system_clock::time_point after, std::chrono::milliseconds period,
    std::chrono::system_clock::time_point anchor = {});

// `count` fire times strictly after `after`, in order (FixedRateNextFireAfter, chained).
std::vector<std::chrono::system_clock::time_point> FixedRateNextFireTimes(
    std::chrono::system_clock::time_point after, std::chrono::milliseconds period, int count,
    std::chrono::system_clock::time_point anchor = {});

}  // namespace elasticjob

#endif  // ELASTICJOB_SCHEDULE_FIXED_RATE_H_
