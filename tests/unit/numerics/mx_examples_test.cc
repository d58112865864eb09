// Every worked example of ../shared/reference/formats.md §1.7–1.10, bit for bit (scale code,
// element codes and dequantised values).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "xpusim/numerics/mx.h"

namespace xpusim::numerics {
namespace {

struct BlockCase {
  std::string name;
  ElementType type;
  Rounding rounding;
  ScaleRule rule;
  std::vector<float> in;
  uint8_t scale;
  std::vector<uint8_t> codes;
  std::vector<float> out;
};

void check_block(const BlockCase& c) {
  SCOPED_TRACE(c.name);
  const int n = static_cast<int>(c.in.size());
  std::vector<uint8_t> codes(n);
  const uint8_t scale = quantize_mx_block(c.type, c.in.data(), n, codes.data(), c.rounding, c.rule);
  EXPECT_EQ(scale, c.scale);
  std::vector<float> out(n);
  dequantize_mx_block(c.type, scale, codes.data(), n, out.data());
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(codes[i], c.codes[i]) << "element " << i;
    EXPECT_EQ(out[i], c.out[i]) << "element " << i;
    // The sign of zero is kept (formats.md §1.5).
    EXPECT_EQ(std::signbit(out[i]), std::signbit(c.out[i])) << "element " << i;
  }
}

const float k2m6 = std::ldexp(1.0f, -6);  // 2^-6 = 0.015625

const ElementType E4 = ElementType::Fp8E4m3, E5 = ElementType::Fp8E5m2,
                  E32 = ElementType::Fp6E3m2, E23 = ElementType::Fp6E2m3,
                  F4 = ElementType::Fp4E2m1, I8 = ElementType::Int8;
const Rounding Even = Rounding::Even, Near = Rounding::Nearest;
const ScaleRule Ocp = ScaleRule::Ocp, Trn3 = ScaleRule::Trn3, Rceil = ScaleRule::Rceil;

TEST(MxWorkedExamples, Section1_10_SmallBlocks) {
  const std::vector<BlockCase> cases = {
      // 1. E4M3 saturation and ties; amax 485 -> floor(log2) 8 -> s = 8 - 8 = 0 -> code 127.
      {"ex1_e4m3_nearest", E4, Near, Ocp, {485, 475, 400, -485, -475, -450, k2m6, -k2m6}, 0x7F,
       {0x7E, 0x7E, 0x7D, 0xFE, 0xFE, 0xFE, 0x08, 0x88},
       {448, 448, 416, -448, -448, -448, k2m6, -k2m6}},
      // 400/32 = 12.5 is a tie: even -> 12*32 = 384.
      {"ex1_e4m3_even", E4, Even, Ocp, {485, 475, 400, -485, -475, -450, k2m6, -k2m6}, 0x7F,
       {0x7E, 0x7E, 0x7C, 0xFE, 0xFE, 0xFE, 0x08, 0x88},
       {448, 448, 384, -448, -448, -448, k2m6, -k2m6}},
      // 3. MXINT8, block of 10: 1.0234375*64 = 65.5 ties away; 1.9921875*64 = 127.5 -> 128 -> 127.
      {"ex3_int8_row1", I8, Near, Ocp,
       {1.015625f, 1.0234375f, 1.03125f, 1.0390625f, 1.25f, 1.2578125f, 1.9375f, 1.9453125f,
        1.984375f, 1.9921875f},
       0x7F, {0x41, 0x42, 0x42, 0x43, 0x50, 0x51, 0x7C, 0x7D, 0x7F, 0x7F},
       {1.015625f, 1.03125f, 1.03125f, 1.046875f, 1.25f, 1.265625f, 1.9375f, 1.953125f,
        1.984375f, 1.984375f}},
      {"ex3_int8_row2", I8, Near, Ocp,
       {1.99609375f, 1.98828125f, 0, 0.00390625f, 0.0078125f, 0.01171875f, -0.015625f,
        -0.01171875f, -0.0078125f, -0.00390625f},
       0x7F, {0x7F, 0x7F, 0x00, 0x00, 0x01, 0x01, 0xFF, 0xFF, 0xFF, 0x00},
       {1.984375f, 1.984375f, 0, 0, 0.015625f, 0.015625f, -0.015625f, -0.015625f, -0.015625f,
        0.0f}},  // INT8 has no -0 code: the reference's -0.0 decodes as +0 here
      // amax 2 -> s = 1: 1/2*64 = 32 (0x20), 2/2*64 = 64 (0x40).
      {"ex3_int8_row3", I8, Near, Ocp, {1, 1, 1, 1, 1, 2, 2, 2, 2, 2}, 0x80,
       {0x20, 0x20, 0x20, 0x20, 0x20, 0x40, 0x40, 0x40, 0x40, 0x40},
       {1, 1, 1, 1, 1, 2, 2, 2, 2, 2}},
      // 4. FP4 ties, nearest vs even.
      {"ex4_fp4_nearest", F4, Near, Ocp, {6.5f, 0.25f, 0.75f, 2.5f, 5.0f, -1.25f, -0.2f, 0}, 0x7F,
       {0x7, 0x1, 0x2, 0x5, 0x7, 0xB, 0x8, 0x0}, {6, 0.5f, 1, 3, 6, -1.5f, -0.0f, 0}},
      {"ex4_fp4_even", F4, Even, Ocp, {6.5f, 0.25f, 0.75f, 2.5f, 5.0f, -1.25f, -0.2f, 0}, 0x7F,
       {0x7, 0x0, 0x2, 0x4, 0x6, 0xA, 0x8, 0x0}, {6, 0, 1, 2, 4, -1, -0.0f, 0}},
      // 5. amax 0.3 -> floor(log2) -2 -> s = -4 -> code 123.
      {"ex5_fp4_small", F4, Even, Ocp, {0.3f, -0.12f, 0.05f, 0}, 0x7B, {0x6, 0xC, 0x2, 0x0},
       {0.25f, -0.125f, 0.0625f, 0}},
      // 6. E5M2: amax 60000 -> 15 - 15 = 0.
      {"ex6_e5m2", E5, Even, Ocp, {60000, 1, -30000, 0.1f}, 0x7F, {0x7B, 0x3C, 0xF7, 0x2E},
       {57344, 1, -28672, 0.09375f}},
      // 7. E3M2: s = 3 - 4 = -1.
      {"ex7_e3m2", E32, Even, Ocp, {10, 1.1f, -0.3f, 0.05f}, 0x7E, {0x1D, 0x10, 0x29, 0x02},
       {10, 1, -0.3125f, 0.0625f}},
      // 8. E2M3: s = 3 - 2 = 1.
      {"ex8_e2m3", E23, Even, Ocp, {10, 1.1f, -0.3f, 0.05f}, 0x80, {0x1A, 0x04, 0x21, 0x00},
       {10, 1, -0.25f, 0}},
      // 9. MXINT8 with X = 2.
      {"ex9_int8_x2", I8, Even, Ocp, {3, -1, 0.01f, -2.99f}, 0x80, {0x60, 0xE0, 0x00, 0xA0},
       {3, -1, 0, -3}},
      // 10. fp32-subnormal block: s = -130 - 8 clamps to -127; values kept exactly.
      {"ex10_subnormal", E4, Even, Ocp,
       {std::ldexp(1.0f, -130), std::ldexp(1.0f, -133), std::ldexp(3.0f, -134), 0}, 0x00,
       {0x20, 0x08, 0x0C, 0x00},
       {std::ldexp(1.0f, -130), std::ldexp(1.0f, -133), std::ldexp(3.0f, -134), 0}},
      // 11. all-zero blocks: 2^(-126-emax) clamped -> 0x00 for FP, 0x01 for MXINT8.
      {"ex11_zero_e4m3", E4, Even, Ocp, {0, 0, 0, 0}, 0x00, {0, 0, 0, 0}, {0, 0, 0, 0}},
      {"ex11_zero_int8", I8, Even, Ocp, {0, 0, 0, 0}, 0x01, {0, 0, 0, 0}, {0, 0, 0, 0}},
      // 13. log2 window: 0x437FFFFF has exponent field 7 -> s = -1; 511.99997 saturates to 448.
      {"ex13_log2_window", E4, Near, Ocp, {std::bit_cast<float>(0x437FFFFFu), 1, 3, -100}, 0x7E,
       {0x7E, 0x40, 0x4C, 0xF5}, {224, 1, 3, -104}},  // 2, 6, -208 at X = 1/2
  };
  for (const auto& c : cases) check_block(c);
}

TEST(MxWorkedExamples, Section1_10_Ex2_FullE4m3Block) {
  const std::vector<double> in = {
      -0.582733273506, -0.256973713636, 0.506033003330,  0.400039970875,  -0.437093466520,
      1.275019764900,  -2.123294353485, 1.514909625053,  -2.660086154938, -0.200791791081,
      -0.060985822231, -0.209203109145, 2.385987281799,  0.062245476991,  0.217003762722,
      -0.857734560966, 0.507945835590,  0.896152675152,  -0.751049160957, -0.488164335489,
      0.805381953716,  -0.172028362751, 0.271137863398,  -0.503807783127, 1.879478693008,
      -0.294227510691, 0.968807995319,  0.670037031174,  -0.871595799923, 0.304561793804,
      -0.567594051361, -1.265962004662};
  // P_i from the table; output = P_i * 2^-7; codes derived from E4M3 layout.
  const std::vector<int> p = {-72, -32, 64,  52,  -56, 160, -256, 192, -352, -26, -8,
                              -26, 320, 8,   28,  -112, 64,  112, -96, -64,  104, -22,
                              36,  -64, 240, -36, 128, 88,  -112, 40,  -72,  -160};
  const std::vector<uint8_t> codes = {
      0xE9, 0xE0, 0x68, 0x65, 0xE6, 0x72, 0xF8, 0x74, 0xFB, 0xDD, 0xD0, 0xDD, 0x7A, 0x50, 0x5E, 0xEE,
      0x68, 0x6E, 0xEC, 0xE8, 0x6D, 0xDB, 0x61, 0xE8, 0x77, 0xE1, 0x70, 0x6B, 0xEE, 0x62, 0xE9, 0xF2};
  for (Rounding r : {Rounding::Nearest, Rounding::Even}) {
    BlockCase c{"ex2_" + rounding_name(r), E4, r, Ocp, {}, 0x78, codes, {}};
    for (size_t i = 0; i < in.size(); ++i) {
      c.in.push_back(static_cast<float>(in[i]));
      c.out.push_back(std::ldexp(static_cast<float>(p[i]), -7));
    }
    check_block(c);
  }
}

TEST(MxWorkedExamples, Section1_10_Ex12_NanOrInfPoisonsBlock) {
  for (ElementType t : {E4, E5, E32, E23, F4, I8}) {
    for (float special : {NAN, INFINITY, -INFINITY}) {
      const std::vector<float> in = {special, 0, std::ldexp(1.0f, 127), 0};
      std::vector<uint8_t> codes(4);
      const uint8_t s = quantize_mx_block(t, in.data(), 4, codes.data(), Near, Ocp);
      EXPECT_EQ(s, 0xFF);
      std::vector<float> out(4);
      dequantize_mx_block(t, s, codes.data(), 4, out.data());
      for (float v : out) EXPECT_TRUE(std::isnan(v));
    }
  }
}

// §1.9: Trainium3 rule (2x the OCP scale) and RCEIL beside OCP, RNE elements.
TEST(MxWorkedExamples, Section1_9_ScaleRules) {
  const std::vector<float> a = {485, 475, 400, -450, k2m6, -k2m6};
  const std::vector<float> b = {300, 1, 0.01f, -0.002f};
  const std::vector<float> c = {60000, 1, -30000, 0.1f};
  const std::vector<float> d = {7.9f, 1, -3.3f, 0.5f, 0.2f};
  const std::vector<BlockCase> cases = {
      {"a_ocp", E4, Even, Ocp, a, 0x7F, {0x7E, 0x7E, 0x7C, 0xFE, 0x08, 0x88},
       {448, 448, 384, -448, k2m6, -k2m6}},
      {"a_trn3", E4, Even, Trn3, a, 0x80, {0x77, 0x77, 0x74, 0xF6, 0x04, 0x84},
       {480, 480, 384, -448, k2m6, -k2m6}},
      {"a_rceil", E4, Even, Rceil, a, 0x80, {0x77, 0x77, 0x74, 0xF6, 0x04, 0x84},
       {480, 480, 384, -448, k2m6, -k2m6}},
      {"b_ocp", E4, Even, Ocp, b, 0x7F, {0x79, 0x38, 0x05, 0x81},
       {288, 1, 0.009765625f, -0.001953125f}},
      {"b_trn3", E4, Even, Trn3, b, 0x80, {0x71, 0x30, 0x03, 0x81},
       {288, 1, 0.01171875f, -0.00390625f}},
      {"b_rceil", E4, Even, Rceil, b, 0x7F, {0x79, 0x38, 0x05, 0x81},
       {288, 1, 0.009765625f, -0.001953125f}},
      {"c_ocp", E5, Even, Ocp, c, 0x7F, {0x7B, 0x3C, 0xF7, 0x2E}, {57344, 1, -28672, 0.09375f}},
      {"c_trn3", E5, Even, Trn3, c, 0x80, {0x77, 0x38, 0xF3, 0x2A}, {57344, 1, -28672, 0.09375f}},
      {"c_rceil", E5, Even, Rceil, c, 0x80, {0x77, 0x38, 0xF3, 0x2A}, {57344, 1, -28672, 0.09375f}},
      {"d_ocp", F4, Even, Ocp, d, 0x7F, {0x7, 0x2, 0xD, 0x1, 0x0}, {6, 1, -3, 0.5f, 0}},
      {"d_trn3", F4, Even, Trn3, d, 0x80, {0x6, 0x1, 0xB, 0x0, 0x0}, {8, 1, -3, 0, 0}},
      {"d_rceil", F4, Even, Rceil, d, 0x80, {0x6, 0x1, 0xB, 0x0, 0x0}, {8, 1, -3, 0, 0}},
  };
  for (const auto& x : cases) check_block(x);
}

// §1.7: mixed MXFP4 x MXFP8-E4M3 block dot product, exact in fp32.
TEST(MxWorkedExamples, Section1_7_DotProduct) {
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x7, a[1] = 0xD, a[2] = 0x1, a[3] = 0x3;      // 6, -3, 0.5, 1.5
  b[0] = 0x39, b[1] = 0x40, b[2] = 0x98, b[3] = 0x7E;  // 1.125, 2, -0.0625, 448
  // sum = 6.75 - 6 - 0.03125 + 672 = 672.71875; times 2^-1 * 2^2.
  const float expected = 672.71875f * 0.5f * 4.0f;
  EXPECT_EQ(expected, 1345.4375f);
  EXPECT_EQ(mx_dot_block(F4, 0x7E, a.data(), E4, 0x81, b.data(), 32), expected);
  EXPECT_TRUE(std::isnan(mx_dot_block(F4, 0xFF, a.data(), E4, 0x81, b.data(), 32)));
}

// §1.8: NVFP4 single level (tensor scale 1), and OCP MXFP4 on the same 16 values.
TEST(MxWorkedExamples, Section1_8_Nvfp4) {
  std::vector<float> x;
  for (int i = 1; i <= 16; ++i) x.push_back(static_cast<float>(0.1 * i));
  QuantOptions o;
  o.format = Format::Nvfp4;
  o.nvfp4_tensor_scale = 1.0f;
  const QuantizedTensor q = quantize(x.data(), {16}, o);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_EQ(q.scales[0], 0x29);  // 0.28125 = 1.125 * 2^-2: exponent field 5, mantissa 1
  const std::vector<uint8_t> codes = {1, 1, 2, 3, 4, 4, 4, 5, 5, 6, 6, 6, 6, 6, 7, 7};
  EXPECT_EQ(q.codes, codes);
  const std::vector<float> deq = dequantize(q);
  const std::vector<float> fp4 = {0.5f, 0.5f, 1, 1.5f, 2, 2, 2, 3, 3, 4, 4, 4, 4, 4, 6, 6};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(deq[i], fp4[i] * 0.28125f) << i;
  // Rounding the scale up (cuDNN) gives the same scale here.
  o.scale_rule = ScaleRule::Rceil;
  EXPECT_EQ(quantize(x.data(), {16}, o).scales[0], 0x29);

  QuantOptions m;
  m.format = Format::Mxfp4E2m1;
  const QuantizedTensor qm = quantize(x.data(), {16}, m);
  EXPECT_EQ(qm.scales[0], 127 - 2);
  const std::vector<float> mx = {0.125f, 0.25f, 0.25f, 0.375f, 0.5f, 0.5f, 0.75f, 0.75f,
                                 1, 1, 1, 1, 1.5f, 1.5f, 1.5f, 1.5f};
  EXPECT_EQ(dequantize(qm), mx);
}

}  // namespace
}  // namespace xpusim::numerics
