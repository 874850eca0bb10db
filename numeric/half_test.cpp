// Tests for numeric/half.h: exhaustive round trips over every 16-bit pattern, ties-to-even at
// every halfway point, the subnormal and overflow edges, and an independent reference for
// rounding from double (nearest neighbour chosen by comparing against exact midpoints).
#include "numeric/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ropecheck {
namespace {

// Compile-time use is part of the contract (kernels build constant tables with it).
static_assert(float_to_float16_bits(1.0f) == 0x3c00);
static_assert(float16_bits_to_float(0x3c00) == 1.0f);
static_assert(double_to_bfloat16_bits(1.0) == 0x3f80);
static_assert(bfloat16_bits_to_float(0x3f80) == 1.0f);

constexpr double infinity = std::numeric_limits<double>::infinity();

bool is_float16_nan(std::uint16_t bits) { return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff); }
bool is_float16_quiet_nan(std::uint16_t bits) { return is_float16_nan(bits) && (bits & 0x200); }
bool is_bfloat16_nan(std::uint16_t bits) { return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f); }
bool is_bfloat16_quiet_nan(std::uint16_t bits) { return is_bfloat16_nan(bits) && (bits & 0x40); }

// One 16-bit format, seen from the tests: its codec and where its positive finite values end.
struct codec16 {
  const char* name;
  float (*decode)(std::uint16_t);
  std::uint16_t (*encode_float)(float);
  std::uint16_t (*encode_double)(double);
  std::uint16_t max_finite_bits;
  std::uint16_t infinity_bits;
  bool (*is_nan)(std::uint16_t);
  bool (*is_quiet_nan)(std::uint16_t);
};

const codec16 float16_codec{.name = "float16",
                            .decode = float16_bits_to_float,
                            .encode_float = float_to_float16_bits,
                            .encode_double = double_to_float16_bits,
                            .max_finite_bits = 0x7bff,
                            .infinity_bits = 0x7c00,
                            .is_nan = is_float16_nan,
                            .is_quiet_nan = is_float16_quiet_nan};
const codec16 bfloat16_codec{.name = "bfloat16",
                             .decode = bfloat16_bits_to_float,
                             .encode_float = float_to_bfloat16_bits,
                             .encode_double = double_to_bfloat16_bits,
                             .max_finite_bits = 0x7f7f,
                             .infinity_bits = 0x7f80,
                             .is_nan = is_bfloat16_nan,
                             .is_quiet_nan = is_bfloat16_quiet_nan};

class half_codec_test : public ::testing::TestWithParam<codec16> {};

TEST_P(half_codec_test, every_pattern_round_trips_and_nan_stays_quiet_nan) {
  const codec16& c = GetParam();
  for (std::uint32_t i = 0; i <= 0xffff; ++i) {
    const auto bits = static_cast<std::uint16_t>(i);
    const float value = c.decode(bits);
    if (c.is_nan(bits)) {
      ASSERT_TRUE(std::isnan(value)) << c.name << " bits " << std::hex << i;
      ASSERT_TRUE(c.is_quiet_nan(c.encode_float(value))) << std::hex << i;
      ASSERT_TRUE(c.is_quiet_nan(c.encode_double(value))) << std::hex << i;
      ASSERT_EQ(c.encode_float(value) & 0x8000, bits & 0x8000) << "NaN sign, " << std::hex << i;
      continue;
    }
    ASSERT_FALSE(std::isnan(value)) << c.name << " bits " << std::hex << i;
    ASSERT_EQ(c.encode_float(value), bits) << c.name << " float path, bits " << std::hex << i;
    ASSERT_EQ(c.encode_double(value), bits) << c.name << " double path, bits " << std::hex << i;
  }
}

// Between each pair of adjacent finite values (all binades, subnormals, the subnormal/normal
// seam, both signs) the midpoint ties to the even pattern and its neighbours go their way.
TEST_P(half_codec_test, halfway_points_tie_to_even_and_neighbours_round_correctly) {
  const codec16& c = GetParam();
  for (std::uint16_t lower = 0; lower < c.max_finite_bits; ++lower) {
    const auto upper = static_cast<std::uint16_t>(lower + 1);
    const double lo = c.decode(lower);
    const double hi = c.decode(upper);
    const double mid = (lo + hi) / 2;  // exact: at most p + 1 significant bits
    const std::uint16_t even = (lower & 1) == 0 ? lower : upper;
    for (const double sign : {1.0, -1.0}) {
      const std::uint16_t sign_bit = sign < 0 ? 0x8000 : 0;
      const double m = sign * mid;
      ASSERT_EQ(c.encode_double(m), even | sign_bit) << c.name << " mid " << m;
      ASSERT_EQ(c.encode_float(static_cast<float>(m)), even | sign_bit) << c.name << " mid " << m;
      ASSERT_EQ(c.encode_double(std::nextafter(m, 0.0)), lower | sign_bit) << m;
      ASSERT_EQ(c.encode_double(std::nextafter(m, sign * infinity)), upper | sign_bit) << m;
      const float mf = static_cast<float>(m);
      ASSERT_EQ(c.encode_float(std::nextafter(mf, 0.0f)), lower | sign_bit) << m;
      ASSERT_EQ(c.encode_float(std::nextafter(mf, static_cast<float>(sign * infinity))),
                upper | sign_bit)
          << m;
    }
  }
}

TEST_P(half_codec_test, specials_keep_their_identity) {
  const codec16& c = GetParam();
  EXPECT_EQ(c.encode_double(0.0), 0x0000);
  EXPECT_EQ(c.encode_double(-0.0), 0x8000);
  EXPECT_EQ(c.encode_float(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(c.decode(0x8000)));
  EXPECT_EQ(c.encode_double(infinity), c.infinity_bits);
  EXPECT_EQ(c.encode_double(-infinity), c.infinity_bits | 0x8000);
  EXPECT_EQ(c.decode(c.infinity_bits), static_cast<float>(infinity));
  EXPECT_TRUE(c.is_quiet_nan(c.encode_double(std::numeric_limits<double>::quiet_NaN())));
  // A signalling NaN whose payload sits entirely in bits the 16-bit format drops must not
  // collapse to the infinity pattern.
  const double signalling = std::bit_cast<double>(std::uint64_t{0x7ff0000000000001});
  EXPECT_TRUE(c.is_quiet_nan(c.encode_double(signalling)));
  EXPECT_TRUE(c.is_quiet_nan(c.encode_double(-signalling)));
  // Double subnormals and other tiny values flush to a zero of the right sign.
  EXPECT_EQ(c.encode_double(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(c.encode_double(-1e-300), 0x8000);
  EXPECT_EQ(c.encode_double(std::numeric_limits<double>::max()), c.infinity_bits);
  EXPECT_EQ(c.encode_double(-std::numeric_limits<double>::max()), c.infinity_bits | 0x8000);
}

// Independent reference: locate the neighbours among the decoded patterns (monotone in the
// bit pattern for non-negative values) and decide by comparing with the exact midpoint.
std::uint16_t reference_round(const codec16& c, double x) {
  static thread_local std::vector<double> table;
  static thread_local const codec16* table_codec = nullptr;
  if (table_codec != &c) {
    table.clear();
    for (std::uint32_t b = 0; b <= c.max_finite_bits; ++b) {
      table.push_back(c.decode(static_cast<std::uint16_t>(b)));
    }
    // The value one step past the largest finite, which the overflow rule compares against.
    const double top = table.back();
    table.push_back(top + (top - table[table.size() - 2]));
    table_codec = &c;
  }
  const std::uint16_t sign_bit = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  const auto it = std::upper_bound(table.begin(), table.end(), a);
  if (it == table.end()) return sign_bit | c.infinity_bits;
  const auto upper = static_cast<std::uint16_t>(it - table.begin());
  const auto lower = static_cast<std::uint16_t>(upper - 1);
  const double mid = (table[lower] + table[upper]) / 2;
  const std::uint16_t even = (lower & 1) == 0 ? lower : upper;
  std::uint16_t result = a < mid ? lower : a > mid ? upper : even;
  if (result > c.max_finite_bits) result = c.infinity_bits;  // the step past the top is inf
  return sign_bit | result;
}

TEST_P(half_codec_test, random_doubles_match_midpoint_reference) {
  const codec16& c = GetParam();
  const bool is_bf16 = c.max_finite_bits == 0x7f7f;
  const int min_exponent = is_bf16 ? -140 : -30;
  const int max_exponent = is_bf16 ? 130 : 17;
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<int> exponent(min_exponent, max_exponent);
  std::uniform_int_distribution<std::uint64_t> fraction(0, (std::uint64_t{1} << 52) - 1);
  std::uniform_int_distribution<int> low_bits(0, 3);
  for (int i = 0; i < 300000; ++i) {
    std::uint64_t f = fraction(rng);
    // Bias some samples towards exact ties and near-ties, which pure random bits rarely hit.
    if (low_bits(rng) == 0) f &= ~((std::uint64_t{1} << 40) - 1);
    const auto biased = static_cast<std::uint64_t>(exponent(rng) + 1023);
    const std::uint64_t sign = (i & 1) ? std::uint64_t{1} << 63 : 0;
    const double x = std::bit_cast<double>(sign | (biased << 52) | f);
    ASSERT_EQ(c.encode_double(x), reference_round(c, x)) << c.name << " x=" << x;
    const float xf = static_cast<float>(x);
    ASSERT_EQ(c.encode_float(xf), reference_round(c, xf)) << c.name << " xf=" << xf;
  }
}

INSTANTIATE_TEST_SUITE_P(formats, half_codec_test, ::testing::Values(float16_codec, bfloat16_codec),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(float16, known_values_decode) {
  EXPECT_EQ(float16_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(float16_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(float16_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(float16_bits_to_float(0x0400), 0x1p-14f);  // smallest normal
  EXPECT_EQ(float16_bits_to_float(0x0001), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(float16_bits_to_float(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(float16_bits_to_float(0x3555), 0x1.554p-2f);
}

TEST(float16, overflow_threshold) {
  // 65520 is the midpoint between 65504 (odd significand) and 2^16: ties to even = overflow.
  EXPECT_EQ(double_to_float16_bits(65520.0), 0x7c00);
  EXPECT_EQ(float_to_float16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(double_to_float16_bits(-65520.0), 0xfc00);
  EXPECT_EQ(double_to_float16_bits(65519.99), 0x7bff);
  EXPECT_EQ(float_to_float16_bits(65519.99f), 0x7bff);
  EXPECT_EQ(double_to_float16_bits(std::nextafter(65520.0, 0.0)), 0x7bff);
  EXPECT_EQ(double_to_float16_bits(65504.0), 0x7bff);
  EXPECT_EQ(double_to_float16_bits(1e6), 0x7c00);
}

TEST(float16, subnormal_boundary) {
  EXPECT_EQ(double_to_float16_bits(0x1p-25), 0x0000);  // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(double_to_float16_bits(std::nextafter(0x1p-25, 1.0)), 0x0001);
  EXPECT_EQ(double_to_float16_bits(-std::nextafter(0x1p-25, 1.0)), 0x8001);
  EXPECT_EQ(double_to_float16_bits(0x1.8p-24), 0x0002);    // tie between 1 and 2 quanta
  EXPECT_EQ(double_to_float16_bits(0x1.4p-23), 0x0002);    // 2.5 quanta: tie, 2 is even
  EXPECT_EQ(double_to_float16_bits(0x1.ffcp-15), 0x0400);  // 1023.5 quanta: tie -> min normal
  EXPECT_EQ(double_to_float16_bits(0x1.ffp-15), 0x03fe);
}

TEST(bfloat16, known_values_and_edges) {
  EXPECT_EQ(bfloat16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16_bits_to_float(0x7f7f), 0x1.fep127f);
  EXPECT_EQ(bfloat16_bits_to_float(0x0001), 0x1p-133f);
  EXPECT_EQ(double_to_bfloat16_bits(0x1.ffp127), 0x7f80);  // tie above max finite: overflow
  EXPECT_EQ(double_to_bfloat16_bits(std::nextafter(0x1.ffp127, 0.0)), 0x7f7f);
  EXPECT_EQ(float_to_bfloat16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(double_to_bfloat16_bits(0x1p-134), 0x0000);  // half the smallest subnormal
  EXPECT_EQ(double_to_bfloat16_bits(std::nextafter(0x1p-134, 1.0)), 0x0001);
  EXPECT_EQ(double_to_bfloat16_bits(0x1.01p0), 0x3f80);  // tie, 1.0 is even
  EXPECT_EQ(double_to_bfloat16_bits(0x1.03p0), 0x3f82);  // tie, rounds up to even
}

// Why double_to_* exists: rounding double -> float -> half rounds twice, and the first
// rounding can land exactly on a half-way point that the second then breaks the wrong way.
TEST(double_rounding, direct_conversion_differs_from_going_through_float) {
  const double just_above_tie_fp16 = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(static_cast<float>(just_above_tie_fp16), 1.0f + 0x1p-11f);  // lands on the tie
  EXPECT_EQ(float_to_float16_bits(static_cast<float>(just_above_tie_fp16)), 0x3c00);
  EXPECT_EQ(double_to_float16_bits(just_above_tie_fp16), 0x3c01);  // correctly rounded

  const double just_above_tie_bf16 = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(float_to_bfloat16_bits(static_cast<float>(just_above_tie_bf16)), 0x3f80);
  EXPECT_EQ(double_to_bfloat16_bits(just_above_tie_bf16), 0x3f81);
}

}  // namespace
}  // namespace ropecheck
