// LatencyStats: exact percentiles up to its limit, and beyond it a log-bucketed histogram whose
// p50/p90/p99 stay within 1% of the exact nearest-rank values, with memory flat in the count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "xpusim/serve/latency_stats.h"

namespace xpusim::serve {
namespace {

struct Dist {
  std::string name;
  std::function<double(std::mt19937_64&)> draw;
};

std::vector<Dist> distributions() {
  return {
      {"lognormal", [](std::mt19937_64& g) { return std::lognormal_distribution<double>(0.0, 1.5)(g); }},
      {"uniform", [](std::mt19937_64& g) { return std::uniform_real_distribution<double>(0.010, 0.020)(g); }},
      {"exponential", [](std::mt19937_64& g) { return std::exponential_distribution<double>(3.0)(g); }},
      {"bimodal", [](std::mt19937_64& g) {
         const bool slow = std::bernoulli_distribution(0.2)(g);
         return slow ? std::normal_distribution<double>(30.0, 2.0)(g) : std::normal_distribution<double>(0.05, 0.005)(g);
       }},
      {"with zeros", [](std::mt19937_64& g) {
         return std::bernoulli_distribution(0.3)(g) ? 0.0 : std::exponential_distribution<double>(50.0)(g);
       }},
  };
}

TEST(LatencyStats, ExactUpToTheLimitMatchesPercentiles) {
  LatencyStats s(1000);
  std::vector<double> v;
  std::mt19937_64 g(7);
  for (int i = 0; i < 1000; ++i) {
    v.push_back(std::exponential_distribution<double>(2.0)(g));
    s.add(v.back());
  }
  ASSERT_TRUE(s.exact());
  const Percentiles a = s.summary(), b = percentiles(v);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.p50, b.p50);
  EXPECT_EQ(a.p90, b.p90);
  EXPECT_EQ(a.p99, b.p99);
}

TEST(LatencyStats, HistogramQuantilesAreWithinOnePercentOfExact) {
  for (const Dist& d : distributions()) {
    LatencyStats s(1000);  // the histogram takes over after 1,000 values
    std::vector<double> v;
    std::mt19937_64 g(42);
    for (int i = 0; i < 200000; ++i) {
      v.push_back(std::max(0.0, d.draw(g)));
      s.add(v.back());
    }
    ASSERT_FALSE(s.exact());
    EXPECT_TRUE(s.values().empty()) << "values are dropped once the histogram takes over";
    const Percentiles exact = percentiles(v), approx = s.summary();
    for (auto [q, e, a] : {std::tuple{"p50", exact.p50, approx.p50}, {"p90", exact.p90, approx.p90},
                           {"p99", exact.p99, approx.p99}}) {
      const double rel = e == 0 ? std::fabs(a) : std::fabs(a - e) / e;
      EXPECT_LE(rel, 0.01) << d.name << " " << q << ": exact " << e << ", sketch " << a;
    }
    EXPECT_NEAR(approx.mean, exact.mean, 1e-9 * std::fabs(exact.mean) + 1e-12) << d.name;
  }
}

TEST(LatencyStats, SameValuesGiveTheSameFigures) {
  LatencyStats a(10), b(10);
  for (int i = 1; i <= 5000; ++i) {
    a.add(1.0 / i);
    b.add(1.0 / i);
  }
  EXPECT_EQ(a.summary().p99, b.summary().p99);
  EXPECT_EQ(a.quantile(0.5), b.quantile(0.5));
}

}  // namespace
}  // namespace xpusim::serve
