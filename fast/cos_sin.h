// cos_sin: the float cos/sin values every fast kernel rotates by, computed one way for both
// angle strategies (the cache stores exactly what on-the-fly computes, bit for bit).
//
// For position m and inverse frequency θ_j, per value (constants: cos_sin_polynomial.h):
//   hi = fl(m·θ_j), lo = fma(m, θ_j, −hi)        (two-product: hi + lo = m·θ_j exactly)
//   k = nearest(fl(hi·2/π)); r = fl(fma(−k, π/2_lo, fma(−k, π/2_hi, hi)) + lo)
//   (sin r, cos r) by Taylor polynomials in z = r² to r^15 and r^16; quadrant k mod 4
//   cos = float(fl(cos(m·θ_j)·factor)), sin = float(fl(sin(m·θ_j)·factor))   (one RNE rounding)
// The double stages are within a few 2^-53 (absolute) of the exact values, ~2^-28 below a
// float ulp, so each cos/sin is within ~1.03× of the correctly rounded float even at m = 2^24
// (the input-precision limit is θ_j's own rounding to double: |m|·θ_j·2^-53 rad). The
// peers' float(m)·float(θ) then sinf/cosf recipe instead loses ~1% at m = 131072.
// Why not a general sincos (SLEEF's: any |x| < 1e14, 3.5 ulp, ~1.9 ns per value here): the
// quarter-turn reduction above is exact enough for every angle below reduction_limit = 2^45
// and about three times cheaper, and no kernel angle reaches 2^45: positions are |m| <= 2^31
// (kernels.cpp, status out_of_range) and rope_angles::prepare refuses |θ_j| > 2^13
// (max_inverse_frequency, rope_angles.h), so |m·θ_j| <= 2^44. Beyond the limit, or for a
// non-finite m·θ_j, the value is NaN (fast/cos_sin_test.cpp checks both sides).
#pragma once

#include <cstdint>

namespace ropecheck::fast {

// Row i (at rows + i·2·pairs) gets cos of pairs 0..pairs-1 then sin of pairs 0..pairs-1 for
// positions[i]. A vector of values at a time on AVX2 / AVX-512 (Highway's dynamic dispatch,
// capped by use_simd_target, cos_sin_simd.cpp), else one at a time; every path performs the
// same operations and gives the same bits.
void fill_cos_sin_rows(const std::int64_t* positions, std::int64_t count, const double* theta,
                       std::int64_t pairs, double attention_factor, float* rows);

// The same values by the portable (scalar) path, whatever the CPU; for tests.
void fill_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                const double* theta, std::int64_t pairs,
                                double attention_factor, float* rows);

namespace detail {
struct sin_cos {
  double sin;
  double cos;
};
// sin and cos of the angle hi + lo in double, before the rows round them to float32: one value
// of the portable path (NaN at or beyond the reduction limit). The precise kernels' portable
// rows (precise_scalar.cpp) keep these doubles instead of rounding them.
sin_cos sin_cos_of(double hi, double lo);
}  // namespace detail

}  // namespace ropecheck::fast
