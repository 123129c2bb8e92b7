#include "metrics/exposition.h"

#include <fmt/format.h>

#include <cmath>

namespace elasticjob::metrics {

namespace {

// Backslash and newline escaped, and the double quote too when `quote` (label values).
std::string Escape(std::string_view value, bool quote) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) { return Escape(value, true); }

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<int64_t>(value));
  }
  return fmt::format("{}", value);  // shortest round-trip form
}

void ExpositionWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, Escape(help, false), name, type);
}

void ExpositionWriter::Series(std::string_view name, const Labels& labels,
                              std::string_view extra_name, std::string_view extra_value) {
  out_ += name;
  if (labels.empty() && extra_name.empty()) return;
  out_ += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out_ += ',';
    first = false;
    out_ += fmt::format("{}=\"{}\"", k, EscapeLabelValue(v));
  }
  if (!extra_name.empty()) {
    if (!first) out_ += ',';
    out_ += fmt::format("{}=\"{}\"", extra_name, extra_value);
  }
  out_ += '}';
}

void ExpositionWriter::Sample(std::string_view name, const Labels& labels, double value) {
  Series(name, labels);
  out_ += ' ';
  out_ += FormatValue(value);
  out_ += '\n';
}

void ExpositionWriter::Histogram(std::string_view name, const Labels& labels,
                                 const infra::HistogramSnapshot& h) {
  const std::string bucket = fmt::format("{}_bucket", name);
  for (size_t i = 0; i < h.cumulative.size(); ++i) {
    const std::string le =
        i < h.bounds_seconds.size() ? FormatValue(h.bounds_seconds[i]) : std::string("+Inf");
    Series(bucket, labels, "le", le);
    out_ += fmt::format(" {}\n", h.cumulative[i]);
  }
  Series(fmt::format("{}_sum", name), labels);
  out_ += fmt::format(" {}\n", FormatValue(h.sum_seconds));
  Series(fmt::format("{}_count", name), labels);
  out_ += fmt::format(" {}\n", h.count);
}

}  // namespace elasticjob::metrics
