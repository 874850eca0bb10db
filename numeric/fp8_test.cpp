// Tests for numeric/fp8.h. Expected values come from the OCP OFP8 v1.0 tables (max 448 and
// 57344, smallest subnormals 2^-9 and 2^-16, the NaN and infinity encodings) and from an
// independent rounding reference: every finite fp8 value listed from the spec's field formula
// ((−1)^S · 2^(E−bias) · 1.M, or 2^(1−bias) · 0.M for E = 0), and a double rounded by picking
// the nearest listed value (ties to the even bit pattern), not by the shift arithmetic under test.
#include "numeric/fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numeric/storage_element.h"

namespace ropecheck {
namespace {

static_assert(double_to_float8_bits(dtype::float8_e4m3fn, 1.0) == 0x38);
static_assert(float8_bits_to_float(dtype::float8_e5m2, 0x3c) == 1.0f);
static_assert(float8_e4m3fn_format.max_finite() == 448.0);
static_assert(float8_e5m2_format.max_finite() == 57344.0);
static_assert(float16_format.max_finite() == 65504.0);

constexpr double inf = std::numeric_limits<double>::infinity();

struct listed {
  double value;
  std::uint8_t bits;
};

// Positive finite values of a format from its field definition (spec tables, not fp8.h).
std::vector<listed> positive_values(int exponent_bits, int mantissa_bits, bool e4m3fn) {
  std::vector<listed> out;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  for (unsigned b = 0; b < 0x80u; ++b) {
    const unsigned e = b >> mantissa_bits;
    const unsigned m = b & ((1u << mantissa_bits) - 1);
    const unsigned all_ones = (1u << exponent_bits) - 1;
    if (e == all_ones && (!e4m3fn || m == (1u << mantissa_bits) - 1)) continue;  // inf/NaN
    const double frac = static_cast<double>(m) / (1 << mantissa_bits);
    const double v = e == 0 ? std::ldexp(frac, 1 - bias)
                            : std::ldexp(1 + frac, static_cast<int>(e) - bias);
    out.push_back({v, static_cast<std::uint8_t>(b)});
  }
  return out;
}

// Nearest listed value to |x|, ties to the even bit pattern; beyond max: saturate.
std::uint8_t nearest(const std::vector<listed>& values, double x) {
  const double a = std::fabs(x);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  listed best = values.front();
  for (const listed& v : values) {
    const double d = std::fabs(v.value - a);
    const double bd = std::fabs(best.value - a);
    if (d < bd || (d == bd && (v.bits & 1) == 0)) best = v;
  }
  return static_cast<std::uint8_t>(sign | best.bits);
}

struct case8 {
  dtype t;
  int exponent_bits, mantissa_bits;
  bool e4m3fn;
};
const case8 formats[] = {{dtype::float8_e4m3fn, 4, 3, true}, {dtype::float8_e5m2, 5, 2, false}};

TEST(Fp8, SpecConstants) {
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e4m3fn, 0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(float8_bits_to_float(dtype::float8_e4m3fn, 0x7f)));
  EXPECT_TRUE(std::isnan(float8_bits_to_float(dtype::float8_e4m3fn, 0xff)));
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e4m3fn, 0x78), 256.0f);  // exponent 1111 is normal
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e4m3fn, 0x01), 0x1p-9f);
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e4m3fn, 0x08), 0x1p-6f);
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e5m2, 0x7b), 57344.0f);
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e5m2, 0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e5m2, 0xfc), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(float8_bits_to_float(dtype::float8_e5m2, 0x7d)));
  EXPECT_EQ(float8_bits_to_float(dtype::float8_e5m2, 0x01), 0x1p-16f);
  EXPECT_TRUE(std::signbit(float8_bits_to_float(dtype::float8_e5m2, 0x80)));
}

TEST(Fp8, EveryPatternRoundTrips) {
  for (const case8& c : formats) {
    for (unsigned b = 0; b < 256; ++b) {
      const auto bits = static_cast<std::uint8_t>(b);
      const float v = float8_bits_to_float(c.t, bits);
      if (std::isnan(v)) continue;
      if (std::isinf(v)) {  // e5m2's ±inf: kept by the non-saturating cast only
        EXPECT_EQ(float_to_float8_bits(c.t, v), bits - 1) << to_string(c.t) << " " << b;
        EXPECT_EQ(float_to_float8_bits(c.t, v, fp8_overflow::non_saturating), bits);
        continue;
      }
      EXPECT_EQ(float_to_float8_bits(c.t, v), bits) << to_string(c.t) << " " << b;
      EXPECT_EQ(float_to_float8_bits(c.t, v, fp8_overflow::non_saturating), bits);
    }
  }
}

TEST(Fp8, DecodeMatchesTheFieldFormula) {
  for (const case8& c : formats) {
    for (const listed& v : positive_values(c.exponent_bits, c.mantissa_bits, c.e4m3fn)) {
      EXPECT_EQ(float8_bits_to_float(c.t, v.bits), v.value);
      EXPECT_EQ(float8_bits_to_float(c.t, static_cast<std::uint8_t>(v.bits | 0x80)), -v.value);
    }
  }
}

// Every midpoint between neighbours, a hair either side of it, and random doubles in range.
TEST(Fp8, RoundsToNearestEvenLikeTheIndependentReference) {
  std::mt19937_64 rng(8);
  for (const case8& c : formats) {
    const auto values = positive_values(c.exponent_bits, c.mantissa_bits, c.e4m3fn);
    std::vector<double> probes;
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
      const double mid = (values[i].value + values[i + 1].value) / 2;
      probes.insert(probes.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, inf)});
    }
    std::uniform_real_distribution<double> u(0, values.back().value);
    for (int i = 0; i < 20000; ++i) probes.push_back(u(rng));
    std::uniform_real_distribution<double> tiny(0, values[9].value);
    for (int i = 0; i < 2000; ++i) probes.push_back(tiny(rng));
    for (const double p : probes) {
      for (const double x : {p, -p}) {
        ASSERT_EQ(double_to_float8_bits(c.t, x), nearest(values, x)) << to_string(c.t) << " " << x;
      }
    }
  }
}

TEST(Fp8, SaturatingStoresMaxBeyondMaxAndForInfinity) {
  for (const double x : {448.0, 464.0, 465.0, 480.0, 1e6, inf}) {
    EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, x), 0x7e) << x;
    EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, -x), 0xfe) << x;
  }
  for (const double x : {57344.0, 61440.0, 65536.0, 1e300, inf}) {
    EXPECT_EQ(double_to_float8_bits(dtype::float8_e5m2, x), 0x7b) << x;
    EXPECT_EQ(double_to_float8_bits(dtype::float8_e5m2, -x), 0xfb) << x;
  }
  EXPECT_EQ(round_to_storage(dtype::float8_e4m3fn, 1000.0), 448.0);
  EXPECT_EQ(round_to_storage(dtype::float8_e5m2, -1e9), -57344.0);
}

// PyTorch's .to(float8): e4m3fn rounds past 448 to NaN (464 is the tie, it stays 448), e5m2
// rounds past 57344 to ±inf (61440 is the tie to the even 65536 = inf).
TEST(Fp8, NonSaturatingOverflowsAsPyTorchDoes) {
  constexpr auto ns = fp8_overflow::non_saturating;
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, 464.0, ns), 0x7e);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, 465.0, ns), 0x7f);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, -1e6, ns), 0xff);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, inf, ns), 0x7f);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e5m2, 61439.0, ns), 0x7b);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e5m2, 61440.0, ns), 0x7c);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e5m2, -inf, ns), 0xfc);
}

TEST(Fp8, NanStaysNanAndZeroKeepsItsSign) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, nan), 0x7f);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, -nan), 0xff);
  EXPECT_TRUE(std::isnan(float8_bits_to_float(dtype::float8_e5m2, double_to_float8_bits(dtype::float8_e5m2, nan))));
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e5m2, -0.0), 0x80);
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, 0x1p-11), 0x00);        // < half of 2^-9
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, 0x1.0001p-10), 0x01);   // > half of 2^-9
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, 0x1p-10), 0x00);        // tie to even 0
  EXPECT_EQ(double_to_float8_bits(dtype::float8_e4m3fn, 3 * 0x1p-10), 0x02);    // tie to even 2
}

TEST(Fp8, StorageElementRoundTrip) {
  for (const case8& c : formats) {
    std::byte b[4]{};  // room for any dtype: the compiler sees every branch of the store
    store_storage_element(c.t, b, 0.3f);
    EXPECT_EQ(load_storage_element(c.t, b), round_to_storage(c.t, 0.3f));
    EXPECT_EQ(b[1], std::byte{0});
    EXPECT_EQ(size_of(c.t), 1u);
    EXPECT_EQ(parse_dtype(to_string(c.t)), c.t);
  }
}

}  // namespace
}  // namespace ropecheck
