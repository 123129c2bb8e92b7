#include "cli/suggest.h"

#include <algorithm>

namespace elasticjob::cli {

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between a's first i characters and b's first j.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> ClosestWord(std::string_view word,
                                       const std::vector<std::string>& candidates) {
  if (word.empty()) return std::nullopt;
  const size_t allowed = word.size() <= 4 ? 1 : 2;
  std::optional<std::string> best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const bool prefix = c.starts_with(word) || word.starts_with(c);
    const size_t distance = EditDistance(word, c);
    if (distance > allowed && !prefix) continue;
    if (!best || distance < best_distance) {
      best = c;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace elasticjob::cli
