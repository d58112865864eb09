// Exhaustive decode of every code of every element type against formats.md §1.2, and element
// encoding facts.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "xpusim/numerics/element.h"

namespace xpusim::numerics {
namespace {

struct TypeRow {
  ElementType type;
  int bits, ebits, mbits, bias;
  double max_normal, min_normal, max_subnormal, min_subnormal;
  int max_code, min_normal_code;
  bool has_inf, has_nan;
};

// The table of formats.md §1.2.
const std::vector<TypeRow> kTable = {
    {ElementType::Fp8E4m3, 8, 4, 3, 7, 448, 0.015625, 0.013671875, 0.001953125, 0x7E, 0x08, false, true},
    {ElementType::Fp8E5m2, 8, 5, 2, 15, 57344, std::ldexp(1.0, -14), 0.75 * std::ldexp(1.0, -14),
     std::ldexp(1.0, -16), 0x7B, 0x04, true, true},
    {ElementType::Fp6E3m2, 6, 3, 2, 3, 28, 0.25, 0.1875, 0.0625, 0x1F, 0x04, false, false},
    {ElementType::Fp6E2m3, 6, 2, 3, 1, 7.5, 1.0, 0.875, 0.125, 0x1F, 0x08, false, false},
    {ElementType::Fp4E2m1, 4, 2, 1, 1, 6.0, 1.0, 0.5, 0.5, 0x7, 0x2, false, false},
};

/// Independent decode from the layout S.E.M and the bias: IEEE-style with subnormals.
double expected_value(const TypeRow& r, int code) {
  const int sign = (code >> (r.bits - 1)) & 1;
  const int e = (code >> r.mbits) & ((1 << r.ebits) - 1);
  const int m = code & ((1 << r.mbits) - 1);
  const int emask = (1 << r.ebits) - 1;
  if (r.type == ElementType::Fp8E4m3 && e == emask && m == (1 << r.mbits) - 1) return NAN;
  if (r.type == ElementType::Fp8E5m2 && e == emask) return m == 0 ? (sign ? -INFINITY : INFINITY) : NAN;
  const double v = e == 0 ? std::ldexp(m, 1 - r.bias - r.mbits)
                          : std::ldexp((1 << r.mbits) + m, e - r.bias - r.mbits);
  return sign ? -v : v;
}

TEST(ElementDecode, EveryCodeOfEveryFloatTypeMatchesLayout) {
  for (const TypeRow& r : kTable) {
    const ElementInfo& in = element_info(r.type);
    SCOPED_TRACE(in.name);
    EXPECT_EQ(in.bits, r.bits);
    EXPECT_EQ(in.max_normal, r.max_normal);
    EXPECT_EQ(in.max_code, r.max_code);
    double max_finite = 0, min_pos = INFINITY, max_sub = 0;
    for (int c = 0; c < (1 << r.bits); ++c) {
      const double want = expected_value(r, c);
      const float got = decode_element(r.type, static_cast<uint8_t>(c));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << "code " << c;
        continue;
      }
      EXPECT_EQ(static_cast<double>(got), want) << "code " << c;
      EXPECT_EQ(std::signbit(got), ((c >> (r.bits - 1)) & 1) == 1) << "code " << c;
      if (std::isfinite(want) && want > 0) {
        max_finite = std::max(max_finite, want);
        min_pos = std::min(min_pos, want);
        if (c < r.min_normal_code) max_sub = std::max(max_sub, want);
      }
    }
    EXPECT_EQ(max_finite, r.max_normal);
    EXPECT_EQ(min_pos, r.min_subnormal);
    EXPECT_EQ(max_sub, r.max_subnormal);
    EXPECT_EQ(decode_element(r.type, static_cast<uint8_t>(r.max_code)), r.max_normal);
    EXPECT_EQ(decode_element(r.type, static_cast<uint8_t>(r.min_normal_code)), r.min_normal);
  }
}

TEST(ElementDecode, SpecialCodes) {
  EXPECT_TRUE(std::isnan(decode_element(ElementType::Fp8E4m3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode_element(ElementType::Fp8E4m3, 0xFF)));
  EXPECT_EQ(decode_element(ElementType::Fp8E5m2, 0x7C), INFINITY);
  EXPECT_EQ(decode_element(ElementType::Fp8E5m2, 0xFC), -INFINITY);
  for (int c : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF})
    EXPECT_TRUE(std::isnan(decode_element(ElementType::Fp8E5m2, static_cast<uint8_t>(c))));
}

TEST(ElementDecode, Fp4FullTable) {
  const float want[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 16; ++c) {
    const float v = decode_element(ElementType::Fp4E2m1, static_cast<uint8_t>(c));
    EXPECT_EQ(v, c < 8 ? want[c] : -want[c - 8]) << c;
  }
  EXPECT_TRUE(std::signbit(decode_element(ElementType::Fp4E2m1, 0x8)));  // -0
}

TEST(ElementDecode, Int8IsTwosComplementOver64) {
  for (int c = 0; c < 256; ++c) {
    const int v = c < 128 ? c : c - 256;
    EXPECT_EQ(decode_element(ElementType::Int8, static_cast<uint8_t>(c)), v / 64.0f) << c;
  }
  EXPECT_EQ(decode_element(ElementType::Int8, 0x80), -2.0f);
  EXPECT_EQ(element_info(ElementType::Int8).max_normal, 127.0 / 64.0);
}

TEST(ElementDecode, FiniteValuesAreDistinctExceptSignedZero) {
  for (const TypeRow& r : kTable) {
    std::set<float> values;
    int finite = 0;
    for (int c = 0; c < (1 << r.bits); ++c) {
      const float v = decode_element(r.type, static_cast<uint8_t>(c));
      if (!std::isfinite(v)) continue;
      ++finite;
      values.insert(v);
    }
    EXPECT_EQ(static_cast<int>(values.size()), finite - 1) << element_info(r.type).name;  // +0 == -0
  }
}

TEST(ElementEncode, Int8NeverProduces0x80AndSaturatesSymmetrically) {
  for (Rounding r : {Rounding::Even, Rounding::Nearest, Rounding::Floor}) {
    EXPECT_EQ(encode_element(ElementType::Int8, -2.0f, r), 0x81);
    EXPECT_EQ(encode_element(ElementType::Int8, -1e30f, r), 0x81);
    EXPECT_EQ(encode_element(ElementType::Int8, 1e30f, r), 0x7F);
  }
}

TEST(ElementEncode, RoundingModesOnTies) {
  // E2M1 around 2.5 (between 2 and 3, quantum 1): even -> 2, nearest -> 3, floor -> 2.
  EXPECT_EQ(encode_element(ElementType::Fp4E2m1, 2.5f, Rounding::Even), 0x4);
  EXPECT_EQ(encode_element(ElementType::Fp4E2m1, 2.5f, Rounding::Nearest), 0x5);
  EXPECT_EQ(encode_element(ElementType::Fp4E2m1, 2.9f, Rounding::Floor), 0x4);
  EXPECT_EQ(encode_element(ElementType::Fp4E2m1, -2.9f, Rounding::Floor), 0xC);  // toward zero
  // Carry into the next binade: E4M3 1.96 -> 2.0 (quantum 1/8).
  EXPECT_EQ(encode_element(ElementType::Fp8E4m3, 1.96f, Rounding::Even), 0x40);
}

TEST(ElementEncode, ScaledEncodingIsExactAtExtremeScales) {
  // x / 2^127 and x / 2^-127 without fp32 rounding in between.
  const float tiny = std::ldexp(1.0f, -136);  // E4M3 min subnormal 2^-9 times 2^-127
  EXPECT_EQ(encode_element_scaled(ElementType::Fp8E4m3, tiny, -127, Rounding::Even), 0x01);
  const float big = std::ldexp(1.5f, 127);
  EXPECT_EQ(encode_element_scaled(ElementType::Fp8E4m3, big, 127, Rounding::Even), 0x3C);  // 1.5
}

}  // namespace
}  // namespace xpusim::numerics
