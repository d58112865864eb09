#pragma once
// Latency statistics in memory that stays flat in the number of requests: every value is kept
// (exact nearest-rank percentiles) up to `exact_limit` values; beyond it the values move into
// a log-bucketed histogram whose buckets are 1% wide, so a reported p50/p90/p99 is within
// 0.5% of the exact nearest-rank value (the bucket's geometric centre, clamped to the values
// seen). Deterministic: the same values in the same order give the same figures.

#include <cstdint>
#include <map>
#include <vector>

namespace xpusim::serve {

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

/// Exact nearest-rank percentiles and the mean of `v`.
Percentiles percentiles(std::vector<double> v);

class LatencyStats {
 public:
  /// Values kept exactly before the histogram takes over (docs/serving.md, "Bounded memory").
  static constexpr long long kExactValues = 1'000'000;
  /// Relative width of a histogram bucket.
  static constexpr double kBucketRatio = 1.01;

  explicit LatencyStats(long long exact_limit = kExactValues) : exact_limit_(exact_limit) {}
  void add(double x);
  long long count() const { return count_; }
  /// True while every value is kept (summary() is then exact).
  bool exact() const { return count_ <= exact_limit_; }
  /// The values in insertion order while exact(); empty afterwards.
  const std::vector<double>& values() const { return values_; }
  /// Mean and p50/p90/p99: exact while exact(), from the histogram afterwards.
  Percentiles summary() const;
  /// The nearest-rank quantile q in (0, 1].
  double quantile(double q) const;

 private:
  void to_histogram();
  void bin(double x);
  double histogram_quantile(double q) const;
  long long exact_limit_;
  long long count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
  std::vector<double> values_;
  long long non_positive_ = 0;           ///< values ≤ 0 (below every bucket)
  std::map<int, long long> buckets_;     ///< bucket k: [r^k, r^(k+1)), r = kBucketRatio
};

}  // namespace xpusim::serve
