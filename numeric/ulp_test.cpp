// Tests for numeric/ulp.h: the ulp is taken at the exact value, floored at the smallest
// subnormal, and every mismatch a distance cannot express maps to its own sentinel.
#include "numeric/ulp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

namespace ropecheck {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

TEST(ulp_of, is_the_spacing_above_the_exact_value) {
  EXPECT_EQ(ulp_of(1.0, dtype::float32), 0x1p-23);
  EXPECT_EQ(ulp_of(0.75, dtype::float32), 0x1p-24);
  EXPECT_EQ(ulp_of(-3.0, dtype::bfloat16), 0x1p-6);
  EXPECT_EQ(ulp_of(1.0, dtype::float16), 0x1p-10);
  EXPECT_EQ(ulp_of(1.0, dtype::float64), 0x1p-52);
  EXPECT_EQ(ulp_of(1.0L, float64_format), 0x1p-52L);
}

TEST(ulp_of, is_floored_at_the_smallest_subnormal) {
  EXPECT_EQ(ulp_of(0.0, dtype::float32), 0x1p-149);
  EXPECT_EQ(ulp_of(0x1p-140, dtype::float32), 0x1p-149);
  EXPECT_EQ(ulp_of(0.0, dtype::float16), 0x1p-24);
  EXPECT_EQ(ulp_of(0x1p-20, dtype::float16), 0x1p-24);
  EXPECT_EQ(ulp_of(0.0, dtype::bfloat16), 0x1p-133);
  EXPECT_EQ(ulp_of(0.0, dtype::float64), 0x1p-1074);
  EXPECT_EQ(ulp_of(std::numeric_limits<double>::denorm_min(), dtype::float64), 0x1p-1074);
}

// The bit-reading path for doubles agrees with the ilogb/ldexp definition in every binade,
// at the edges of each format's subnormal floor, and for zeros, subnormals and infinities.
TEST(ulp_of, bit_reading_path_equals_the_definition) {
  std::vector<double> values = {0.0, -0.0, inf, -inf, 0x1p-1074, 0x1p-1022, 0x1.8p-1023};
  for (int e = -1074; e <= 1023; ++e) {
    values.push_back(std::ldexp(1.0, e));
    values.push_back(-std::ldexp(1.75, std::min(e, 1022)));
    values.push_back(std::nextafter(std::ldexp(1.0, e), 0.0));
  }
  int checked = 0;
  for (const float_format f : {float64_format, float32_format, float16_format, bfloat16_format})
    for (const double v : values) {
      const double expected = ulp_detail::ulp_of_any(v, f);
      ASSERT_EQ(ulp_of(v, f), expected) << v << " p=" << f.precision_bits;
      ++checked;
    }
  EXPECT_GT(checked, 4 * 6000);
}

TEST(ulp_distance, ulp_is_taken_at_the_exact_value) {
  // Just below a power of two the spacing halves; measured at exact 1 that is half an ulp.
  EXPECT_EQ(ulp_distance(std::nextafter(1.0f, 0.0f), 1.0, dtype::float32), 0.5);
  EXPECT_EQ(ulp_distance(1.0f + 0x1p-23f, 1.0, dtype::float32), 1.0);
  // Swapping the roles moves the ulp: exact 1 - 2^-24 has ulp 2^-24.
  EXPECT_EQ(ulp_distance(1.0, 1.0 - 0x1p-24, dtype::float32), 1.0);
  EXPECT_EQ(ulp_distance(1.0, 1.0, dtype::float32), 0.0);
}

TEST(ulp_distance, is_symmetric_in_sign_and_direction) {
  EXPECT_EQ(ulp_distance(1.0 - 0x1p-23, 1.0, dtype::float32), 1.0);
  EXPECT_EQ(ulp_distance(-1.0 - 0x1p-23, -1.0, dtype::float32), 1.0);
  EXPECT_EQ(ulp_distance(-1.0 + 0x1p-23, -1.0, dtype::float32), 1.0);
  EXPECT_EQ(ulp_distance(3.0 + 0x1p-23, 3.0, dtype::float32), 0.5);  // ulp(3) = 2^-22
  EXPECT_EQ(ulp_distance(3.0 - 0x1p-23, 3.0, dtype::float32), 0.5);
}

TEST(ulp_distance, measures_fractional_ulps_against_an_exact_reference) {
  const double exact = 1.0 + 0x1p-30;  // not a float: the reference carries more bits
  EXPECT_DOUBLE_EQ(ulp_distance(1.0f, exact, dtype::float32), 0x1p-7);
  EXPECT_DOUBLE_EQ(ulp_distance(1.0L, 1.0L + 0x1p-60L, float64_format), 0x1p-8);
}

TEST(ulp_distance, subnormal_floor_keeps_tiny_exact_values_measurable) {
  EXPECT_EQ(ulp_distance(0x1p-149, 0.0, dtype::float32), 1.0);
  EXPECT_EQ(ulp_distance(0x1p-140 + 0x1p-149, 0x1p-140, dtype::float32), 1.0);
  EXPECT_EQ(ulp_distance(0x1p-24, 0.0, dtype::float16), 1.0);
  EXPECT_EQ(ulp_distance(0x1p-20 + 0x1p-24, 0x1p-20, dtype::float16), 1.0);
  EXPECT_EQ(ulp_distance(0x1p-25, 0.0, dtype::float16), 0.5);
  EXPECT_EQ(ulp_distance(-0x1p-133, 0.0, dtype::bfloat16), 1.0);
}

TEST(ulp_distance, narrow_formats_use_their_own_precision) {
  EXPECT_EQ(ulp_distance(1.0 + 0x1p-10, 1.0, dtype::float16), 1.0);
  EXPECT_EQ(ulp_distance(1.0 + 0x1p-11, 1.0, dtype::float16), 0.5);
  EXPECT_EQ(ulp_distance(1.0 + 0x1p-7, 1.0, dtype::bfloat16), 1.0);
  EXPECT_EQ(ulp_distance(1024.0 + 1.0, 1024.0, dtype::float16), 1.0);
  EXPECT_EQ(ulp_distance(std::nextafter(1.0, 2.0), 1.0, dtype::float64), 1.0);
  EXPECT_EQ(ulp_distance(std::nextafter(1.0, 0.0), 1.0, dtype::float64), 0.5);
}

// The branch-free inverse is exactly 1/ulp in every binade, zeros and subnormals included,
// for the formats that have one.
TEST(ulp_of, inverse_is_exact_for_float32_float16_bfloat16) {
  EXPECT_FALSE(ulp_detail::has_inverse_ulp(float64_format));
  int checked = 0;
  for (const float_format f : {float32_format, float16_format, bfloat16_format}) {
    ASSERT_TRUE(ulp_detail::has_inverse_ulp(f));
    for (int e = -1074; e <= 1023; ++e)
      for (const double v : {std::ldexp(1.0, e), -std::ldexp(1.5, std::min(e, 1022)),
                             std::nextafter(std::ldexp(1.0, e), 0.0), 0.0, -0.0}) {
        ASSERT_EQ(ulp_detail::inverse_ulp(v, f), 1 / ulp_detail::ulp_of_any(v, f)) << v;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 3 * 2098 * 5);
}

// The per-element entry point (a multiplication by 1/ulp built from bits) gives exactly the
// definition |computed − exact| / ulp(exact), saturated, and so does ulp_distance.
TEST(ulp_distance, finite_entry_point_equals_the_definition) {
  const double exact_values[] = {1.0, -0.75, 0x1p-140, 3e38, 0x1.fffffep-1, 1e-300, 0x1p-1070, 0.0};
  int checked = 0;
  for (const float_format f : {float64_format, float32_format, float16_format, bfloat16_format})
    for (const double exact : exact_values)
      for (const double computed : {exact, 0.5, -exact, exact * (1 + 0x1p-20),
                                    std::nextafter(exact, 1.0), 1e300, 0x1p-1074}) {
        if (computed == 0 && exact == 0) continue;  // the signed-zero sentinel's case
        const double definition = std::min(
            std::fabs(computed - exact) / ulp_detail::ulp_of_any(exact, f), ulp_distance_saturation);
        EXPECT_EQ(ulp_distance_of_finite(computed, exact, f), definition) << computed << " vs " << exact;
        EXPECT_EQ(ulp_distance(computed, exact, f), definition) << computed << " vs " << exact;
        EXPECT_EQ(ulp_distance_of_difference(std::fabs(computed - exact), exact, f), definition);
        ++checked;
      }
  EXPECT_EQ(checked, 4 * (8 * 7 - 3));  // per format, exact 0 skips 0, -0 and 0·(1 + 2^-20)
}

TEST(ulp_distance, nan_sentinel) {
  EXPECT_EQ(ulp_distance(nan, 1.0, dtype::float32), ulp_sentinel_nan_mismatch);
  EXPECT_EQ(ulp_distance(1.0, nan, dtype::float32), ulp_sentinel_nan_mismatch);
  EXPECT_EQ(ulp_distance(nan, inf, dtype::float32), ulp_sentinel_nan_mismatch);
  EXPECT_EQ(ulp_distance(nan, nan, dtype::float32), 0.0);
  EXPECT_EQ(ulp_distance(-nan, nan, dtype::float16), 0.0);
}

TEST(ulp_distance, infinity_sentinel) {
  EXPECT_EQ(ulp_distance(inf, inf, dtype::float32), 0.0);
  EXPECT_EQ(ulp_distance(-inf, -inf, dtype::float32), 0.0);
  EXPECT_EQ(ulp_distance(-inf, inf, dtype::float32), ulp_sentinel_infinity_mismatch);
  EXPECT_EQ(ulp_distance(1.0, inf, dtype::float32), ulp_sentinel_infinity_mismatch);
  EXPECT_EQ(ulp_distance(inf, 1.0, dtype::float32), ulp_sentinel_infinity_mismatch);
  EXPECT_EQ(ulp_distance(inf, std::numeric_limits<double>::max(), dtype::float64),
            ulp_sentinel_infinity_mismatch);
}

TEST(ulp_distance, overflow_to_infinity_is_correct_past_the_rounding_threshold) {
  EXPECT_EQ(ulp_distance(inf, 65520.0, dtype::float16), 0.0);
  EXPECT_EQ(ulp_distance(inf, 1e6, dtype::float16), 0.0);
  EXPECT_EQ(ulp_distance(-inf, -65520.0, dtype::float16), 0.0);
  EXPECT_EQ(ulp_distance(-inf, 65520.0, dtype::float16), ulp_sentinel_infinity_mismatch);
  EXPECT_EQ(ulp_distance(inf, 65519.0, dtype::float16), ulp_sentinel_infinity_mismatch);
  EXPECT_EQ(ulp_distance(inf, 0x1.ffffffp127, dtype::float32), 0.0);
  EXPECT_EQ(ulp_distance(inf, 0x1.fffffep127, dtype::float32), ulp_sentinel_infinity_mismatch);
  // A finite result where the exact value overflows is measured, not flagged.
  EXPECT_EQ(ulp_distance(65504.0, 65520.0, dtype::float16), 0.5);
}

TEST(ulp_distance, signed_zero_sentinel) {
  EXPECT_EQ(ulp_distance(-0.0, 0.0, dtype::float32), ulp_sentinel_signed_zero_mismatch);
  EXPECT_EQ(ulp_distance(0.0, -0.0, dtype::float32), ulp_sentinel_signed_zero_mismatch);
  EXPECT_EQ(ulp_distance(0.0, 0.0, dtype::float32), 0.0);
  EXPECT_EQ(ulp_distance(-0.0, -0.0, dtype::bfloat16), 0.0);
  // Only two zeros disagreeing in sign is a mismatch; -0 against a tiny positive is a distance.
  EXPECT_EQ(ulp_distance(-0.0, 0x1p-149, dtype::float32), 1.0);
}

TEST(ulp_distance, sentinels_are_distinct_named_and_above_every_genuine_distance) {
  const std::set<double> sentinels{ulp_sentinel_signed_zero_mismatch,
                                   ulp_sentinel_infinity_mismatch, ulp_sentinel_nan_mismatch};
  EXPECT_EQ(sentinels.size(), 3u);
  for (const double s : sentinels) {
    EXPECT_TRUE(is_ulp_sentinel(s));
    EXPECT_TRUE(ulp_sentinel_name(s).has_value());
    EXPECT_GT(s, ulp_distance_saturation);
  }
  EXPECT_EQ(*ulp_sentinel_name(ulp_sentinel_nan_mismatch), "NaN mismatch");
  EXPECT_FALSE(is_ulp_sentinel(0.5));
  EXPECT_FALSE(ulp_sentinel_name(ulp_distance_saturation).has_value());
  // A huge but genuine distance saturates instead of overflowing into a sentinel or inf.
  EXPECT_EQ(ulp_distance(1.0, 0.0, dtype::float64), ulp_distance_saturation);
  EXPECT_EQ(ulp_distance(std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(),
                         dtype::float64),
            ulp_distance_saturation);
}

TEST(ulp_distance, integer_dtypes_have_no_ulp) {
  EXPECT_THROW(format_of(dtype::int32), std::invalid_argument);
  EXPECT_THROW((void)ulp_distance(1.0, 1.0, dtype::int64), std::invalid_argument);
}

}  // namespace
}  // namespace ropecheck
