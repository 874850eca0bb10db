// cos_sin_polynomial: the constants of the fast kernels' double sin/cos (cos_sin.h), shared by
// the SIMD (cos_sin_simd.cpp) and portable (cos_sin.cpp) paths so both evaluate the same
// operations on the same numbers and agree bit for bit.
//
// Reduction by quarter turns, Cody–Waite with FMA (Muller, "Elementary Functions", §11.2):
//   k = nearest(x · 2/π),  r = fma(−k, π/2_hi, x) then fma(−k, π/2_lo, ·)
// π/2_hi + π/2_lo carries π/2 to ~107 bits and each product k·π/2_part is exact inside its
// FMA, so for |k| < 2^45 the reduction adds ≤ 2^-53·|r| + 2^-60 absolute.
// Polynomials: Taylor series on |r| ≤ π/4 (+ rounding slack), truncated where the next term is
// below 2^-53: sin r = r + r·z·S(z) to r^15 (next term ≤ (π/4)^17/17! = 4.6e-17), cos r = 1 + z·C(z)
// to r^16 (next term ≤ (π/4)^18/18! = 2.0e-18), z = r². Each coefficient ±1/n! is one
// correctly rounded division of exactly representable doubles.
#pragma once

namespace ropecheck::fast::detail::cos_sin_constants {

// Round-to-nearest of the real numbers (hex: exact doubles).
inline constexpr double two_over_pi = 0x1.45f306dc9c883p-1;
inline constexpr double half_pi_hi = 0x1.921fb54442d18p+0;
inline constexpr double half_pi_lo = 0x1.1a62633145c07p-54;

// Arguments at or beyond this magnitude give NaN (the quadrant count and each k·π/2_part must
// stay exact); kernel angles stay below 2^44 (cos_sin.h, rope_angles.h).
inline constexpr double reduction_limit = 0x1p45;

// S(z) = −1/3! + z·(1/5! − z·(… ± z/15!)),  C(z) = −1/2! + z·(1/4! − z·(… ± z/16!)): the Taylor
// coefficients of (sin r − r)/r³ and (cos r − 1)/r² in z = r², in Horner order (highest degree
// first). Both paths evaluate S and C from these arrays.
inline constexpr double sin_horner[] = {-1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                                        -1.0 / 39916800.0,      1.0 / 362880.0,
                                        -1.0 / 5040.0,          1.0 / 120.0,
                                        -1.0 / 6.0};
inline constexpr double cos_horner[] = {1.0 / 20922789888000.0, -1.0 / 87178291200.0,
                                        1.0 / 479001600.0,      -1.0 / 3628800.0,
                                        1.0 / 40320.0,          -1.0 / 720.0,
                                        1.0 / 24.0,             -1.0 / 2.0};

}  // namespace ropecheck::fast::detail::cos_sin_constants
