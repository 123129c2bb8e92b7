#include "metrics/exposition.h"

#include <gtest/gtest.h>

#include <chrono>

#include "infra/job_metrics.h"

namespace elasticjob::metrics {
namespace {

using std::chrono::milliseconds;

TEST(ExpositionTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\"b"), "a\\\"b");
  EXPECT_EQ(EscapeLabelValue("a\\b"), "a\\\\b");
  EXPECT_EQ(EscapeLabelValue("a\nb"), "a\\nb");
}

TEST(ExpositionTest, FormatsNumbersAsPrometheusReadsThem) {
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(0.0025), "0.0025");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
}

TEST(ExpositionTest, WritesHelpTypeAndSamples) {
  ExpositionWriter w;
  w.Family("x_total", "counter", "Help with a \\ and a\nnewline.");
  w.Sample("x_total", {{"job", "a\"b"}, {"outcome", "success"}}, 7);
  w.Family("up", "gauge", "Up.");
  w.Sample("up", {}, 1);
  EXPECT_EQ(w.Take(),
            "# HELP x_total Help with a \\\\ and a\\nnewline.\n"
            "# TYPE x_total counter\n"
            "x_total{job=\"a\\\"b\",outcome=\"success\"} 7\n"
            "# HELP up Up.\n"
            "# TYPE up gauge\n"
            "up 1\n");
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeAndEndAtInf) {
  static constexpr uint64_t kBounds[] = {1000, 10000};  // 1 ms, 10 ms
  infra::Histogram h(kBounds);
  h.Observe(milliseconds(0));
  h.Observe(milliseconds(1));  // on the bound: in it
  h.Observe(milliseconds(5));
  h.Observe(milliseconds(50));  // above every bound
  h.Observe(milliseconds(-3));  // counts as 0
  ExpositionWriter w;
  w.Histogram("d_seconds", {{"job", "j"}}, h.Snapshot());
  EXPECT_EQ(w.Take(),
            "d_seconds_bucket{job=\"j\",le=\"0.001\"} 3\n"
            "d_seconds_bucket{job=\"j\",le=\"0.01\"} 4\n"
            "d_seconds_bucket{job=\"j\",le=\"+Inf\"} 5\n"
            "d_seconds_sum{job=\"j\"} 0.056\n"
            "d_seconds_count{job=\"j\"} 5\n");
}

TEST(ExpositionTest, BucketBoundsFitTheHistogram) {
  EXPECT_LE(std::size(kLatencyBoundsUs), infra::Histogram::kMaxBuckets);
  EXPECT_LE(std::size(kDurationBoundsUs), infra::Histogram::kMaxBuckets);
  EXPECT_LE(std::size(kRequestBoundsUs), infra::Histogram::kMaxBuckets);
}

}  // namespace
}  // namespace elasticjob::metrics
