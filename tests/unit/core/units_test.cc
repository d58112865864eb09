#include <gtest/gtest.h>

#include <type_traits>

#include "xpusim/core/unit_parse.h"
#include "xpusim/core/units.h"

using namespace xpusim::core;

// Compile-time dimension checks: adding unlike quantities must not compile.
template <typename A, typename B>
concept Addable = requires(A a, B b) { a + b; };
static_assert(Addable<Seconds, Seconds>);
static_assert(!Addable<Seconds, Bytes>);
static_assert(!Addable<ByteRate, FlopRate>);
static_assert(std::is_same_v<decltype(bytes(1) / seconds(1)), ByteRate>);
static_assert(std::is_same_v<decltype(flops(1) / flops_per_second(1)), Seconds>);
static_assert(std::is_same_v<decltype(seconds(1) / seconds(1)), double>);
static_assert(std::is_same_v<decltype(watts(1) * seconds(1)), Joules>);

TEST(Units, ArithmeticComposesDimensions) {
  // time = bytes / bandwidth: 144 GiB at 4.9 TB/s.
  Seconds t = gib(144) / terabytes_per_second(4.9);
  EXPECT_NEAR(to_seconds(t), 144.0 * 1073741824.0 / 4.9e12, 1e-12);
  EXPECT_DOUBLE_EQ(to_joules(watts(1000) * seconds(2)), 2000.0);
  EXPECT_DOUBLE_EQ(to_dollars(dollars_per_hour(36) * hours(2)), 72.0);
}

struct ParseCase {
  const char* text;
  double base;  // expected value in base units
};

class ParseByteRate : public ::testing::TestWithParam<ParseCase> {};
TEST_P(ParseByteRate, ExactPrefixesAndBits) {
  auto r = parse_quantity<ByteRate>(GetParam().text);
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_DOUBLE_EQ(r->base(), GetParam().base) << GetParam().text;
}
INSTANTIATE_TEST_SUITE_P(
    Units, ParseByteRate,
    ::testing::Values(ParseCase{"4.9 TB/s", 4.9e12}, ParseCase{"2.56 TB/s", 2.56e12},
                      ParseCase{"200 Gb/s", 200e9 / 8},  // bits: divide by 8
                      ParseCase{"200 Gbps", 200e9 / 8}, ParseCase{"2048 GiB/s", 2048.0 * 1073741824.0},
                      ParseCase{"900 GB/s", 900e9}, ParseCase{"1.6 Tb/s", 1.6e12 / 8}));

TEST(UnitParse, SizesTimesPowerPrices) {
  EXPECT_DOUBLE_EQ(parse_quantity<Bytes>("144 GiB")->base(), 144.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_quantity<Bytes>("141 GB")->base(), 141e9);
  EXPECT_DOUBLE_EQ(parse_quantity<Bytes>("32 MiB")->base(), 32.0 * 1048576.0);
  EXPECT_NEAR(parse_quantity<Seconds>("1.2 us")->base(), 1.2e-6, 1e-18);
  EXPECT_NEAR(parse_quantity<Seconds>("1300 ns")->base(), 1.3e-6, 1e-18);
  // Durations of training runs (train --deadline): days as "d" or "day", with or without a space.
  EXPECT_DOUBLE_EQ(parse_quantity<Seconds>("30d")->base(), 30.0 * 86400.0);
  EXPECT_DOUBLE_EQ(parse_quantity<Seconds>("2.5 day")->base(), 2.5 * 86400.0);
  EXPECT_DOUBLE_EQ(parse_quantity<Seconds>("720h")->base(), 720.0 * 3600.0);
  EXPECT_DOUBLE_EQ(parse_quantity<Seconds>("2.5e6 s")->base(), 2.5e6);
  EXPECT_DOUBLE_EQ(parse_quantity<Watts>("1000 W")->base(), 1000.0);
  EXPECT_DOUBLE_EQ(parse_quantity<Watts>("1.4 kW")->base(), 1400.0);
  EXPECT_NEAR(parse_quantity<DollarRate>("$21.50/h")->base(), 21.5 / 3600.0, 1e-15);
  EXPECT_DOUBLE_EQ(parse_quantity<FlopRate>("2517 TFLOP/s")->base(), 2517e12);
  EXPECT_DOUBLE_EQ(parse_quantity<FlopRate>("989.4 TFLOPS")->base(), 989.4e12);
  EXPECT_DOUBLE_EQ(parse_quantity<Hertz>("2.4 GHz")->base(), 2.4e9);
}

TEST(UnitParse, NumberWithoutUnitIsAnError) {
  auto r = parse_quantity<ByteRate>("4.9");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("number without a unit"), std::string::npos) << r.error();
}

TEST(UnitParse, WrongDimensionNamesBoth) {
  auto r = parse_quantity<ByteRate>("144 GiB");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("a size in bytes, expected a bandwidth"), std::string::npos)
      << r.error();
}

TEST(UnitParse, UnknownUnit) {
  auto r = parse_quantity<Bytes>("3 parsecs");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("unknown unit 'parsecs'"), std::string::npos) << r.error();
}
