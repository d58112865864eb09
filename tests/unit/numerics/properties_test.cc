// Properties of MX quantisation over random inputs (fixed seeds): identity on representable
// values, RNE error bound, monotonicity, scale depends only on the block max.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "xpusim/numerics/mx.h"

namespace xpusim::numerics {
namespace {

const std::vector<ElementType> kTypes = {ElementType::Fp8E4m3, ElementType::Fp8E5m2,
                                         ElementType::Fp6E3m2, ElementType::Fp6E2m3,
                                         ElementType::Fp4E2m1, ElementType::Int8};
const std::vector<Rounding> kRoundings = {Rounding::Even, Rounding::Nearest, Rounding::Floor};
const std::vector<ScaleRule> kRules = {ScaleRule::Ocp, ScaleRule::Trn3, ScaleRule::Rceil};

/// Random block of 32 with magnitudes 2^-40..2^40, some zeros and negative values.
std::vector<float> random_block(std::mt19937& rng) {
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-40, 40), spread(0, 20), coin(0, 9);
  const int top = ex(rng);
  std::vector<float> x(32);
  for (float& v : x) {
    const int c = coin(rng);
    v = c == 0 ? 0.0f : std::ldexp(mant(rng), top - spread(rng));
    if (c >= 5) v = -v;
  }
  return x;
}

bool is_finite_code(ElementType t, uint8_t c) {
  return std::isfinite(decode_element(t, c)) && !(t == ElementType::Int8 && c == 0x80);
}

TEST(MxProperties, EncodeDecodeIsIdentityOnEveryRepresentableElement) {
  for (ElementType t : kTypes)
    for (Rounding r : kRoundings)
      for (int c = 0; c < code_count(t); ++c) {
        const uint8_t code = static_cast<uint8_t>(c);
        if (!is_finite_code(t, code)) continue;
        const uint8_t back = encode_element(t, decode_element(t, code), r);
        EXPECT_EQ(decode_element(t, back), decode_element(t, code))
            << element_info(t).name << " code " << c;
        if (t != ElementType::Int8) {
          EXPECT_EQ(back, code) << element_info(t).name << " " << c;
        }
      }
}

TEST(MxProperties, QuantizeIsIdentityOnRepresentableBlocks) {
  // A block of decoded codes times 2^s whose largest element is +-max_normal * 2^s: the OCP rule
  // picks the same s, so quantize gives back the same codes and values for every rounding.
  std::mt19937 rng(42);
  for (ElementType t : kTypes) {
    std::uniform_int_distribution<int> code(0, code_count(t) - 1), sc(-100, 100);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<float> x(32);
      const int s = sc(rng);
      for (float& v : x) {
        uint8_t c;
        do {
          c = static_cast<uint8_t>(code(rng));
        } while (!is_finite_code(t, c));
        v = std::ldexp(decode_element(t, c), s);
      }
      const uint8_t top = element_info(t).max_code;
      x[trial % 32] = std::ldexp(decode_element(t, top), s) * (trial % 2 ? -1.0f : 1.0f);
      for (Rounding r : kRoundings) {
        std::vector<uint8_t> codes(32);
        const uint8_t scale = quantize_mx_block(t, x.data(), 32, codes.data(), r, ScaleRule::Ocp);
        std::vector<float> y(32);
        dequantize_mx_block(t, scale, codes.data(), 32, y.data());
        EXPECT_EQ(scale, s + 127);
        for (int i = 0; i < 32; ++i) {
          ASSERT_EQ(y[i], x[i]) << element_info(t).name << " i=" << i;
          if (x[i] != 0 || t != ElementType::Int8) {  // INT8 has no -0
            ASSERT_EQ(std::signbit(y[i]), std::signbit(x[i]));
          }
        }
      }
    }
  }
}

TEST(MxProperties, NearestEvenErrorIsAtMostHalfAQuantumOfTheBinade) {
  std::mt19937 rng(7);
  for (ElementType t : kTypes) {
    const ElementInfo& in = element_info(t);
    for (ScaleRule rule : kRules) {
      for (int trial = 0; trial < 300; ++trial) {
        const std::vector<float> x = random_block(rng);
        std::vector<uint8_t> codes(32);
        const uint8_t scale = quantize_mx_block(t, x.data(), 32, codes.data(), Rounding::Even, rule);
        std::vector<float> y(32);
        dequantize_mx_block(t, scale, codes.data(), 32, y.data());
        const double X = std::ldexp(1.0, scale - 127);
        for (int i = 0; i < 32; ++i) {
          const double q = std::fabs(static_cast<double>(x[i])) / X;
          if (q > in.max_normal) {  // saturated: the value is the max normal
            EXPECT_EQ(std::fabs(static_cast<double>(y[i])) / X, in.max_normal);
            continue;
          }
          // quantum: 2^(p - m) with p = max(floor(log2 q), emin); INT8: 2^-6.
          double quantum = std::ldexp(1.0, -6);
          if (t != ElementType::Int8) {
            const int p = q > 0 ? std::max(std::ilogb(q), in.emin) : in.emin;
            quantum = std::ldexp(1.0, p - in.mbits);
          }
          EXPECT_LE(std::fabs(static_cast<double>(x[i]) - y[i]), 0.5 * quantum * X)
              << in.name << " x=" << x[i] << " y=" << y[i];
        }
      }
    }
  }
}

TEST(MxProperties, QuantisationIsMonotonic) {
  // At a fixed scale, larger inputs never give smaller values (every type and rounding).
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-600.0f, 600.0f);
  std::vector<float> xs(20000);
  for (float& v : xs) v = u(rng);
  for (int i = 0; i < 2000; ++i) xs.push_back(std::ldexp(u(rng), -12));
  std::sort(xs.begin(), xs.end());
  for (ElementType t : kTypes)
    for (Rounding r : kRoundings)
      for (int s : {-3, 0, 5}) {
        float prev = -INFINITY;
        for (float x : xs) {
          const float v = decode_element(t, encode_element_scaled(t, x, s, r));
          ASSERT_GE(v, prev) << element_info(t).name << " x=" << x;
          prev = v;
        }
      }
}

TEST(MxProperties, BlockScaleDependsOnlyOnTheBlockMax) {
  std::mt19937 rng(11);
  for (ElementType t : kTypes)
    for (ScaleRule rule : kRules)
      for (int trial = 0; trial < 100; ++trial) {
        std::vector<float> x = random_block(rng);
        auto it = std::max_element(x.begin(), x.end(),
                                   [](float a, float b) { return std::fabs(a) < std::fabs(b); });
        const float amax = std::fabs(*it);
        if (amax == 0) continue;
        std::vector<uint8_t> codes(32);
        const uint8_t s1 = quantize_mx_block(t, x.data(), 32, codes.data(), Rounding::Even, rule);
        // Replace every other element by a random value of smaller magnitude.
        std::uniform_real_distribution<float> frac(0.0f, 1.0f);
        for (float& v : x)
          if (&v != &*it) v = (frac(rng) < 0.5f ? -1.0f : 1.0f) * amax * frac(rng) * 0.999f;
        const uint8_t s2 = quantize_mx_block(t, x.data(), 32, codes.data(), Rounding::Even, rule);
        EXPECT_EQ(s1, s2);
        EXPECT_EQ(s1, mx_scale_exponent(t, rule, amax) + 127);
      }
}

TEST(MxProperties, ScaleRulesOrdering) {
  // TRN3 is always twice OCP; RCEIL lies between them.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (ElementType t : kTypes)
    for (int i = 0; i < 1000; ++i) {
      const float a = std::ldexp(mant(rng), i % 200 - 100);
      const int o = mx_scale_exponent(t, ScaleRule::Ocp, a);
      EXPECT_EQ(mx_scale_exponent(t, ScaleRule::Trn3, a), o + 1);
      const int r = mx_scale_exponent(t, ScaleRule::Rceil, a);
      EXPECT_TRUE(r == o || r == o + 1);
      // RCEIL never saturates: amax / 2^r <= max_normal.
      EXPECT_LE(std::ldexp(static_cast<double>(a), -r), element_info(t).max_normal);
    }
}

}  // namespace
}  // namespace xpusim::numerics
