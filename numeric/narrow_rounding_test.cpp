// Tests for numeric/narrow_rounding.h beyond what half_test.cpp and fp8_test.cpp check through
// the dtype entry points: float16 against an independent encoder, the compiler's _Float16
// conversion (IEEE 754 binary16, round to nearest even: GCC's libgcc __truncsfhf2 or the F16C
// instruction), over float32 inputs strided through the whole float16 range and past it; and
// the overflow rule on a 16-bit format, where half.h only uses non_saturating.
#include "numeric/narrow_rounding.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "numeric/half.h"

namespace ropecheck {
namespace {

#ifdef __FLT16_MAX__
// Every float32 from 2^-26 (below half the smallest float16 subnormal) to 2^17 (past the
// overflow threshold 65520), both signs, with a stride prime to every power of two so that
// each low mantissa pattern near the rounding bit turns up; plus every float whose low 13 bits
// (those float16 drops) are a tie, just past one, or just below one.
TEST(NarrowRounding, Float16MatchesTheCompilersConversion) {
  const auto lo = std::bit_cast<std::uint32_t>(0x1p-26f);
  const auto hi = std::bit_cast<std::uint32_t>(0x1p17f);
  std::int64_t checked = 0;
  const auto check = [&](std::uint32_t bits) {
    for (const std::uint32_t sign : {0u, 0x80000000u}) {
      const float f = std::bit_cast<float>(bits | sign);
      const auto expected = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
      ASSERT_EQ(float_to_float16_bits(f), expected) << std::hexfloat << f;
      ++checked;
    }
  };
  for (std::uint32_t bits = lo; bits < hi; bits += 251) check(bits);
  for (std::uint32_t top = lo >> 13; top < hi >> 13; ++top)
    for (const std::uint32_t low : {0x0fffu, 0x1000u, 0x1001u}) check(top << 13 | low);
  EXPECT_GT(checked, 3'000'000);
}
#endif

// The same binary16 fields under the other overflow rule: ±max for ±inf and past max.
TEST(NarrowRounding, SaturatingRuleOnASixteenBitFormat) {
  constexpr narrow_format<std::uint16_t> binary16{float16_format, 0x7bff, 0x7e00};
  constexpr auto sat = overflow_rule::saturate;
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(round_double_to_narrow(inf, binary16, sat), 0x7bff);
  EXPECT_EQ(round_double_to_narrow(-inf, binary16, sat), 0xfbff);
  EXPECT_EQ(round_double_to_narrow(65520.0, binary16, sat), 0x7bff);  // the tie past 65504
  EXPECT_EQ(round_double_to_narrow(65519.0, binary16, sat), 0x7bff);
  EXPECT_EQ(round_double_to_narrow(65520.0, binary16, overflow_rule::non_saturating), 0x7c00);
  EXPECT_EQ(round_double_to_narrow(std::nan(""), binary16, sat) & 0x7e00, 0x7e00);  // NaN stays NaN
}

}  // namespace
}  // namespace ropecheck
