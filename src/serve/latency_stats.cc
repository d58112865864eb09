#include "xpusim/serve/latency_stats.h"

#include <algorithm>
#include <cmath>

namespace xpusim::serve {

namespace {

size_t nearest_rank(double q, long long n) {
  const auto i = static_cast<long long>(std::ceil(q * static_cast<double>(n)));
  return static_cast<size_t>(std::clamp<long long>(i, 1, n));
}

}  // namespace

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  double s = 0;
  for (double x : v) s += x;
  p.mean = s / static_cast<double>(v.size());
  const auto n = static_cast<long long>(v.size());
  p.p50 = v[nearest_rank(0.50, n) - 1];
  p.p90 = v[nearest_rank(0.90, n) - 1];
  p.p99 = v[nearest_rank(0.99, n) - 1];
  return p;
}

void LatencyStats::add(double x) {
  min_ = count_ == 0 ? x : std::min(min_, x);
  max_ = count_ == 0 ? x : std::max(max_, x);
  ++count_;
  sum_ += x;
  if (count_ <= exact_limit_) {
    values_.push_back(x);
    return;
  }
  if (!values_.empty()) to_histogram();
  bin(x);
}

void LatencyStats::to_histogram() {
  for (double v : values_) bin(v);
  std::vector<double>().swap(values_);
}

void LatencyStats::bin(double x) {
  if (!(x > 0)) {
    ++non_positive_;
    return;
  }
  ++buckets_[static_cast<int>(std::floor(std::log(x) / std::log(kBucketRatio)))];
}

double LatencyStats::histogram_quantile(double q) const {
  const auto rank = static_cast<long long>(nearest_rank(q, count_));
  if (rank <= non_positive_) return std::min(0.0, max_) < min_ ? min_ : std::min(0.0, max_);
  long long seen = non_positive_;
  for (const auto& [k, c] : buckets_) {
    seen += c;
    if (seen >= rank) {
      const double centre = std::pow(kBucketRatio, static_cast<double>(k) + 0.5);
      return std::clamp(centre, min_, max_);
    }
  }
  return max_;
}

double LatencyStats::quantile(double q) const {
  if (count_ == 0) return 0;
  if (!exact()) return histogram_quantile(q);
  std::vector<double> v(values_);
  std::sort(v.begin(), v.end());
  return v[nearest_rank(q, count_) - 1];
}

Percentiles LatencyStats::summary() const {
  if (exact()) return percentiles(values_);
  Percentiles p;
  p.mean = sum_ / static_cast<double>(count_);
  p.p50 = histogram_quantile(0.50);
  p.p90 = histogram_quantile(0.90);
  p.p99 = histogram_quantile(0.99);
  return p;
}

}  // namespace xpusim::serve
