// ExpositionWriter: Prometheus's text exposition format 0.0.4, written by hand (Debian 12
// has no prometheus-cpp): one `# HELP` and `# TYPE` line per family, then its samples;
// label values escaped (backslash, double quote, newline), HELP text escaped (backslash,
// newline); histograms as cumulative `_bucket{le=...}` ending at le="+Inf", then `_sum` and
// `_count`. `promtool check metrics` accepts what it writes (tests/unit/metrics).
//
// Thread safety: none (one writer per scrape).
#ifndef ELASTICJOB_METRICS_EXPOSITION_H_
#define ELASTICJOB_METRICS_EXPOSITION_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "infra/metric_types.h"

namespace elasticjob::metrics {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

// `value` with backslash, double quote and newline escaped as a label value.
std::string EscapeLabelValue(std::string_view value);
// A number as Prometheus reads it ("+Inf", "NaN", integers without a fraction).
std::string FormatValue(double value);

class ExpositionWriter {
 public:
  // Starts a family. `type`: "counter", "gauge" or "histogram". REQUIRES: each name once.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the current family (a counter's or gauge's).
  void Sample(std::string_view name, const Labels& labels, double value);
  // A histogram's samples under `name` (the family's name).
  void Histogram(std::string_view name, const Labels& labels, const infra::HistogramSnapshot& h);

  std::string Take() { return std::move(out_); }

 private:
  void Series(std::string_view name, const Labels& labels, std::string_view extra_name = {},
              std::string_view extra_value = {});
  std::string out_;
};

}  // namespace elasticjob::metrics

#endif  // ELASTICJOB_METRICS_EXPOSITION_H_
