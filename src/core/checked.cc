#include "xpusim/core/checked.h"

#include <cmath>
#include <limits>

#include "xpusim/core/diagnostics.h"

namespace xpusim::core {

namespace {

[[noreturn]] void overflow(const std::string& quantity, const std::string& got, const std::string& expected) {
  fail(quantity, "does not fit the accepted range", got, expected);
}

}  // namespace

int64_t checked_mul(int64_t a, int64_t b, const std::string& quantity) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
    overflow(quantity, std::to_string(a) + " × " + std::to_string(b),
             "non-negative factors whose product is at most " + std::to_string(INT64_MAX));
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const std::string& quantity) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    overflow(quantity, std::to_string(a) + " + " + std::to_string(b),
             "a sum of at most " + std::to_string(INT64_MAX));
  return r;
}

int64_t checked_product(const int64_t* factors, std::size_t count, const std::string& quantity) {
  int64_t r = 1;
  for (std::size_t i = 0; i < count; ++i) r = checked_mul(r, factors[i], quantity);
  return r;
}

int checked_int(int64_t value, const std::string& quantity, int lo, int hi) {
  if (value < lo || value > hi)
    fail(quantity, "out of range", std::to_string(value),
         "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(value);
}

int64_t checked_int64(double value, const std::string& quantity, int64_t lo, int64_t hi) {
  if (!std::isfinite(value) || std::fabs(value) >= 0x1p63 || value < static_cast<double>(lo) || value > static_cast<double>(hi) ||
      value != std::floor(value)) {
    const std::string got = std::isnan(value) ? "nan" : std::isinf(value) ? (value > 0 ? "inf" : "-inf")
                                                                          : std::to_string(value);
    fail(quantity, "out of range", got, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return static_cast<int64_t>(value);
}

}  // namespace xpusim::core
