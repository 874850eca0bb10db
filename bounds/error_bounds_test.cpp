// error_bounds.h §16: the rounding coefficients at an attention factor A are the suprema they
// claim. At A = 1 they are §2's 2.5 and §3's 2.5732; for other A a dense scan of the angle
// (the model's own h⁻ steps, with points just short of every jump, where the suprema live)
// never exceeds them and comes within 10^-6 of them, so they are neither unsound nor loose.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "bounds/error_bounds.h"

namespace ropecheck::bounds {
namespace {

struct suprema {
  double output = 0;
  double pair = 0;
};

// §2: √(g_C² + (g_S + S)²) + 1 and §3: √(g_C² + g_S²) + S + 1 with g(v) = h⁻(A·v)/A, maximized
// over S on a grid of 2^18 points plus points within 2^-30 of each jump (from the side where
// the step is still high).
suprema scan(double a) {
  std::vector<double> sines;
  constexpr int grid = 1 << 18;
  for (int i = 0; i <= grid; ++i) sines.push_back(static_cast<double>(i) / grid);
  sines.push_back(1 - 0x1p-30);
  for (int k = -40; k <= 3; ++k) {
    const double t = std::ldexp(1.0, k) / a;
    if (!(t > 0 && t < 1)) continue;
    sines.push_back(t * (1 - 0x1p-30));                                 // S just below a jump
    const double c = t * (1 + 0x1p-30);                                 // C just above a jump
    if (c < 1) sines.push_back(std::sqrt((1 - c) * (1 + c)));
  }
  suprema best;
  for (double s : sines) {
    const double c = std::sqrt(std::max(0.0, (1 - s) * (1 + s)));
    const double g_s = power_of_two_below(a * s) / a, g_c = power_of_two_below(a * c) / a;
    best.output = std::max(best.output, std::hypot(g_c, g_s + s) + 1);
    best.pair = std::max(best.pair, std::hypot(g_c, g_s) + s + 1);
  }
  return best;
}

TEST(error_bounds, attention_scale_at_one_is_the_plain_coefficients) {
  const attention_scale one = attention_scale_for(1);
  EXPECT_EQ(one.factor, 1);
  EXPECT_EQ(one.output_coefficient, fused_output_coefficient);
  EXPECT_LE(one.pair_coefficient, fused_pair_coefficient);
  EXPECT_GT(one.pair_coefficient, fused_pair_coefficient - 1e-4);
  EXPECT_EQ(attention_factor_rounding(one), 0);
}

TEST(error_bounds, attention_scale_coefficients_are_the_suprema) {
  // Published and generated A: YaRN 0.1·ln s + 1 (s = 4, 40), LongRoPE √(1 + ln 32/ln 4096),
  // mscale-like values, powers of two, and A just above and below a power of two.
  for (double a : {1.0, 1.1386294361119891, 1.3688879454113936, 1.1902380714238083, 0.7071067811865476,
                   0.5, 2.0, 4.0, 0.25, 1 + 0x1p-20, 1 - 0x1p-20, 2 + 0x1p-19, 1.25, 3.3, 0.3}) {
    const attention_scale scale = attention_scale_for(a);
    const suprema seen = scan(a);
    EXPECT_LE(seen.output, scale.output_coefficient) << a;
    EXPECT_LE(seen.pair, scale.pair_coefficient) << a;
    EXPECT_GT(seen.output, scale.output_coefficient - 1e-6) << a;
    EXPECT_GT(seen.pair, scale.pair_coefficient - 1e-6) << a;
    EXPECT_GE(scale.output_coefficient, 2) << a;
    EXPECT_LT(scale.output_coefficient, 3) << a;
    EXPECT_LT(scale.pair_coefficient, 3) << a;
  }
  // Scaling the plain bound by A would not be sound: just above 1, A·sin φ → A rounds with
  // half an ulp of [1, 2), twice that of sin φ → 1⁻.
  EXPECT_GT(attention_scale_for(1 + 0x1p-20).output_coefficient, 2.99);
  EXPECT_GT(attention_scale_for(1.1386294361119891).output_coefficient, 2.8);
}

// §19: the division fl(ŷ/σ) in float32 moves ŷ/σ by at most output_scale_division(σ, |ŷ|):
// measured on random float32 ŷ (normal and subnormal quotients alike) and scales, the exact
// quotient taken in long double (64-bit significand: |error| ≤ 2^-64 relative, far below u).
// A power-of-two σ divides exactly while the quotient is normal. σ = 1 is output_bound.
TEST(error_bounds, output_scale_division_bounds_the_float32_division) {
  std::uint64_t state = 7;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  int rounded = 0;
  for (int i = 0; i < 200000; ++i) {
    const float y = std::ldexp(static_cast<float>((next() >> 40) | 1) / 16777216.0f,
                               static_cast<int>(next() >> 58) - 40 - (i % 2) * 90);
    const float sigma = i % 3 == 0 ? std::ldexp(1.0f, static_cast<int>(next() >> 60) - 8)
                                   : static_cast<float>(std::exp2((static_cast<double>(next() >> 11) / 0x1p53) * 16 - 8));
    const long double exact = static_cast<long double>(y) / static_cast<long double>(sigma);
    const double error = static_cast<double>(std::fabs(static_cast<long double>(y / sigma) - exact));
    rounded += error > 0;
    ASSERT_LE(error, output_scale_division(sigma, std::fabs(y))) << y << " / " << sigma;
    if (is_power_of_two(sigma) && std::fabs(exact) >= 0x1p-126L) {
      ASSERT_EQ(error, 0) << y << " / " << sigma;
    }
  }
  EXPECT_GT(rounded, 10000) << "general scales must round the quotient";
  const attention_scale a = attention_scale_for(1);
  EXPECT_EQ(scaled_output_bound(dtype::float8_e4m3fn, 3, 1000, 0.01, 2.5, 1, a),
            output_bound(dtype::float8_e4m3fn, 3, 1000, 0.01, 2.5, a));
  EXPECT_TRUE(is_power_of_two(0.125) && is_power_of_two(1) && !is_power_of_two(3) && !is_power_of_two(0));
}

}  // namespace
}  // namespace ropecheck::bounds
