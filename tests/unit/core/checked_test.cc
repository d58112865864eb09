// Checked arithmetic on input-derived sizes: results that do not fit are InputErrors naming the
// quantity, never wrapped numbers or undefined casts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "xpusim/core/checked.h"
#include "xpusim/core/diagnostics.h"

namespace xpusim::core {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Checked, MultiplyAndAddInRange) {
  EXPECT_EQ(checked_mul(1LL << 31, 1LL << 31, "bytes"), 1LL << 62);
  EXPECT_EQ(checked_add(INT64_MAX - 1, 1, "bytes"), INT64_MAX);
  const int64_t shape[] = {2, 3, 4};
  EXPECT_EQ(checked_product(shape, 3, "elements"), 24);
  EXPECT_EQ(checked_product(shape, 0, "elements"), 1);
}

TEST(Checked, OverflowIsAnInputErrorNamingTheQuantity) {
  const std::string m = error_of([] { checked_mul(1LL << 32, 1LL << 32, "tensor elements"); });
  EXPECT_NE(m.find("tensor elements"), std::string::npos) << m;
  EXPECT_NE(m.find("4294967296 × 4294967296"), std::string::npos) << m;
  EXPECT_NE(error_of([] { checked_add(INT64_MAX, 1, "offset"); }).find("offset"), std::string::npos);
  EXPECT_NE(error_of([] { checked_mul(-1, 2, "size"); }), "");
  // 2^32 · 2^32 · 16 wraps to 0 in plain int64 arithmetic.
  const int64_t wrap[] = {1LL << 32, 1LL << 32, 16};
  EXPECT_NE(error_of([&] { checked_product(wrap, 3, "elements"); }), "");
}

TEST(Checked, NarrowingIsRangeChecked) {
  EXPECT_EQ(checked_int(32, "layers"), 32);
  EXPECT_NE(error_of([] { checked_int((1LL << 32) + 32, "layers"); }).find("layers"), std::string::npos);
  EXPECT_EQ(checked_int64(4096.0, "hidden", 0, 1 << 20), 4096);
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {std::nan(""), inf, -inf, 1e30, 0x1p63, 2.5, -1.0})
    EXPECT_NE(error_of([&] { checked_int64(bad, "hidden", 0, INT64_MAX); }), "") << bad;
}

}  // namespace
}  // namespace xpusim::core
