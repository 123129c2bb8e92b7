#include "elasticjob/schedule/fixed_rate.h"

namespace elasticjob {

std::chrono::system_clock::time_point FixedRateNextFireAfter(
    std::chrono::system_clock::time_point after, std::chrono::milliseconds period,
    std::chrono::system_clock::time_point anchor) {
  using std::chrono::milliseconds;
  const int64_t p = period.count();
  const int64_t since =
      std::chrono::duration_cast<milliseconds>(after - anchor).count();  // floor below
  // floor(since / p) as a mathematical floor (since may be negative), then one period on.
  int64_t k = since / p;
  if (since % p != 0 && since < 0) --k;
  std::chrono::system_clock::time_point next = anchor + milliseconds((k + 1) * p);
  // `after` may hold sub-millisecond ticks the millisecond cast dropped: still strictly after.
  while (next <= after) next += period;
  return next;
}

std::vector<std::chrono::system_clock::time_point> FixedRateNextFireTimes(
    std::chrono::system_clock::time_point after, std::chrono::milliseconds period, int count,
    std::chrono::system_clock::time_point anchor) {
  std::vector<std::chrono::system_clock::time_point> out;
  for (int i = 0; i < count; ++i) {
    after = FixedRateNextFireAfter(after, period, anchor);
    out.push_back(after);
  }
  return out;
}

}  // namespace elasticjob
