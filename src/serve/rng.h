#pragma once
// The serving layer's random numbers: own transforms of mt19937_64 bits, so a seed gives the same
// sequence with every standard library (request lengths and arrivals, closed-loop starts, the
// session generator).

#include <cmath>
#include <cstdint>
#include <random>

namespace xpusim::serve {

// Named, not anonymous: RequestStream::State (declared in the header, external linkage) holds
// two of them, which GCC warns about when a unity build includes workload.cc (-Wsubobject-linkage).
namespace detail {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  double uniform() {  // (0, 1)
    return (static_cast<double>(g_() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  double exponential(double mean) { return -std::log(uniform()) * mean; }
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// Lognormal with the given mean and log-space sigma.
  double lognormal(double mean, double sigma) {
    return std::exp(std::log(mean) - 0.5 * sigma * sigma + sigma * normal());
  }

 private:
  std::mt19937_64 g_;
};

}  // namespace detail
}  // namespace xpusim::serve
