// Tests for numeric/pair_error.h: relative to the input pair's norm, the zero-norm
// convention, non-finite results, and the unit conversions.
#include "numeric/pair_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ropecheck {
namespace {

TEST(pair_error, is_relative_to_the_input_pair_norm) {
  // ||(3, 4)|| = 5.
  EXPECT_EQ(pair_error(1.0 + 5 * 0x1p-24, 1.0, 3.0, 4.0), 0x1p-24);
  EXPECT_EQ(pair_error(1.0 - 5 * 0x1p-24, 1.0, -3.0, 4.0), 0x1p-24);
  EXPECT_EQ(pair_error(2.0, 2.0, 3.0, 4.0), 0.0);
}

TEST(pair_error, stays_small_when_the_output_cancels) {
  // y_exact = 0 from a large input pair: the norm keeps the error meaningful where an
  // element-wise relative or ulp error would blow up.
  EXPECT_EQ(pair_error(0x1p-20, 0.0, 0x1p4, 0.0), 0x1p-24);
}

TEST(pair_error, pair_version_takes_the_worse_coordinate) {
  EXPECT_EQ(pair_error(1.0 + 5 * 0x1p-24, 2.0 - 10 * 0x1p-24, 1.0, 2.0, 3.0, 4.0), 0x1p-23);
  EXPECT_EQ(pair_error(1.0, 2.0, 1.0, 2.0, 3.0, 4.0), 0.0);
}

TEST(pair_error, zero_norm_pair_uses_the_absolute_error) {
  EXPECT_EQ(pair_error(0.0, 0.0, 0.0, 0.0), 0.0);
  EXPECT_EQ(pair_error(-0.0, 0.0, 0.0, -0.0), 0.0);
  EXPECT_EQ(pair_error(0x1p-30, 0.0, 0.0, 0.0), 0x1p-30);
}

TEST(pair_error, extreme_norms_neither_overflow_nor_underflow) {
  EXPECT_EQ(pair_error(0x1p1000 + 0x1p977, 0x1p1000, 0x1p1000, 0.0), 0x1p-23);
  EXPECT_EQ(pair_error(0x1p-1000 + 0x1p-1023, 0x1p-1000, 0.0, 0x1p-1000), 0x1p-23);
}

TEST(pair_error, non_finite_result_is_infinitely_wrong) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(pair_error(std::numeric_limits<double>::quiet_NaN(), 1.0, 3.0, 4.0), inf);
  EXPECT_EQ(pair_error(inf, 1.0, 3.0, 4.0), inf);
  EXPECT_EQ(pair_error(-inf, 1.0, 0.0, 0.0), inf);
}

TEST(pair_error, unit_conversions) {
  EXPECT_EQ(in_units_of_2_pow_minus_24(0x1p-24), 1.0);
  EXPECT_EQ(in_units_of_2_pow_minus_24(0x1p-20), 16.0);
  EXPECT_EQ(in_unit_roundoffs(0x1p-24, dtype::float32), 1.0);
  EXPECT_EQ(in_unit_roundoffs(0x1p-53, dtype::float64), 1.0);
  EXPECT_EQ(in_unit_roundoffs(0x1p-10, dtype::float16), 2.0);
  EXPECT_EQ(in_unit_roundoffs(0x1p-8, dtype::bfloat16), 1.0);
  EXPECT_TRUE(std::isnan(in_unit_roundoffs(1.0, dtype::int32)));
}

}  // namespace
}  // namespace ropecheck
