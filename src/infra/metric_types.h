// Counter, Gauge and Histogram: the instruments behind the Prometheus metrics
// (docs/metrics.md). Recording is one or two relaxed atomic additions, no lock and no
// allocation, so it may sit on a job's fire path; reading (a scrape) takes a snapshot that
// may be a few recordings apart between fields, as Prometheus clients' are.
//
// Thread safety: every method may be called from any thread, also concurrently.
#ifndef ELASTICJOB_INFRA_METRIC_TYPES_H_
#define ELASTICJOB_INFRA_METRIC_TYPES_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace elasticjob::infra {

class Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  void Set(int64_t n) { value_.store(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Bucket upper bounds in microseconds, ascending; at most Histogram::kMaxBuckets.
using HistogramBounds = std::span<const uint64_t>;

struct HistogramSnapshot {
  std::vector<double> bounds_seconds;  // each bucket's `le`, without +Inf
  std::vector<uint64_t> cumulative;    // one per bound, then +Inf (== count)
  uint64_t count = 0;
  double sum_seconds = 0;
};

class Histogram {
 public:
  static constexpr size_t kMaxBuckets = 15;
  // REQUIRES: `bounds` ascending, at most kMaxBuckets, and outliving the histogram (a
  // static array).
  explicit Histogram(HistogramBounds bounds) : bounds_(bounds) {}
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // One observation; a negative one counts as 0.
  void Observe(std::chrono::nanoseconds d) {
    const uint64_t us = d.count() <= 0 ? 0 : static_cast<uint64_t>(d.count()) / 1000;
    size_t i = 0;
    while (i < bounds_.size() && us > bounds_[i]) ++i;
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    sum_us_.fetch_add(us, std::memory_order_relaxed);
  }

  HistogramSnapshot Snapshot() const {
    HistogramSnapshot s;
    uint64_t running = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      running += buckets_[i].load(std::memory_order_relaxed);
      s.cumulative.push_back(running);
      if (i < bounds_.size()) s.bounds_seconds.push_back(static_cast<double>(bounds_[i]) / 1e6);
    }
    s.count = running;
    s.sum_seconds = static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6;
    return s;
  }

 private:
  const HistogramBounds bounds_;
  std::array<std::atomic<uint64_t>, kMaxBuckets + 1> buckets_{};  // the last: above every bound
  std::atomic<uint64_t> sum_us_{0};
};

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_METRIC_TYPES_H_
