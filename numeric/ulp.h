// ulp: the project's one ULP-error metric, in the SLEEF / glibc-libm-test style:
//   ulp(e)   = 2^(max(ilogb(e), emin) - p + 1)      taken at the EXACT value e, so it never
//              drops below the format's smallest subnormal 2^(emin - p + 1);
//   distance = |computed - exact| / ulp(exact).
// (Cf. SLEEF src/libm-tester/tester.c countULP, glibc math/libm-test-support.c ulp.)
// Because the ulp is taken at the exact value, a result just below a power of two measures
// half as many ulps as one just above it: nextafter(1.0f, 0) against exact 1 is 0.5 ulp.
//
// The exact value is passed as a double (or long double). That is enough: callers measuring
// float32 or narrower pass exact values from a higher-precision reference tier, and a double
// carries them to within 2^-53 relative — under 2^-29 float32 ulp. For float64 results pass
// the long double overload (x86-64: 64-bit significand, ~2^-11 ulp of uncertainty) or accept
// that a double "exact" value is itself only good to 0.5 ulp.
//
// Mismatches a distance cannot describe yield named sentinels. They are larger than every
// genuine distance (genuine ones saturate at ulp_distance_saturation), so max() over a batch
// surfaces them; use is_ulp_sentinel / ulp_sentinel_name to report them by name.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "numeric/dtype.h"

namespace ropecheck {

// The formats (float_format, format_of) are numeric/dtype.h's: one place for p and emin.

// Sentinels, ordered by severity. Powers of two so they print and compare exactly.
inline constexpr double ulp_distance_saturation = 0x1p1000;            // cap on real distances
inline constexpr double ulp_sentinel_signed_zero_mismatch = 0x1p1021;  // -0 vs +0 (either way)
inline constexpr double ulp_sentinel_infinity_mismatch = 0x1p1022;     // inf vs finite / -inf
inline constexpr double ulp_sentinel_nan_mismatch = 0x1p1023;          // NaN in exactly one

constexpr bool is_ulp_sentinel(double distance) {
  return distance == ulp_sentinel_signed_zero_mismatch ||
         distance == ulp_sentinel_infinity_mismatch || distance == ulp_sentinel_nan_mismatch;
}

constexpr std::optional<std::string_view> ulp_sentinel_name(double distance) {
  if (distance == ulp_sentinel_signed_zero_mismatch) return "signed-zero mismatch";
  if (distance == ulp_sentinel_infinity_mismatch) return "infinity mismatch";
  if (distance == ulp_sentinel_nan_mismatch) return "NaN mismatch";
  return std::nullopt;
}

namespace ulp_detail {

template <typename Real>
Real ulp_of_any(Real exact, float_format f) {
  // ilogb(0) is FP_ILOGB0 (very negative), which the subnormal floor absorbs.
  const int exponent =
      exact == 0 ? f.min_normal_exponent : std::max(std::ilogb(exact), f.min_normal_exponent);
  return std::ldexp(Real{1}, exponent - f.precision_bits + 1);
}

inline long double ulp_of(long double exact, float_format f) { return ulp_of_any(exact, f); }

// For a normal double the exponent is read from its bits: the same value as ilogb/ldexp
// without two libm calls per element in bulk checks.
inline double ulp_of(double exact, float_format f) {
  const auto bits = std::bit_cast<std::uint64_t>(exact);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0 || biased == 0x7ff) return ulp_of_any(exact, f);  // 0, subnormal, inf, NaN
  const int exponent = std::max(biased - 1023, f.min_normal_exponent) - f.precision_bits + 1;
  if (exponent < -1022) return std::ldexp(1.0, exponent);  // a subnormal power of two
  return std::bit_cast<double>(static_cast<std::uint64_t>(exponent + 1023) << 52);
}

// The distance once every sentinel case is excluded: both finite, not both zero.
template <typename Real>
double finite_distance(Real computed, Real exact, float_format f) {
  const Real distance = std::fabs(computed - exact) / ulp_detail::ulp_of(exact, f);
  return static_cast<double>(std::min(distance, static_cast<Real>(ulp_distance_saturation)));
}

// 1/ulp(exact) for a finite double, with no branch and no division (so loops over elements
// vectorize): the binade of |exact| (its exponent bits) floored at 2^emin, inverted by exponent
// arithmetic. Exact whenever the inverse is a normal double, which holds for every format with
// emin + 1023 >= p − 1: float32, float16, bfloat16 (not float64, whose tiny ulps have no
// double inverse).
constexpr bool has_inverse_ulp(float_format f) {
  return f.min_normal_exponent + 1023 >= f.precision_bits - 1;
}
inline double inverse_ulp(double exact, float_format f) {
  constexpr std::uint64_t exponent_bits = 0x7FF0000000000000u;
  const double binade = std::bit_cast<double>(std::bit_cast<std::uint64_t>(exact) & exponent_bits);
  const double floor = std::bit_cast<double>(static_cast<std::uint64_t>(f.min_normal_exponent + 1023) << 52);
  const auto floored = std::bit_cast<std::uint64_t>(std::max(binade, floor));
  // 2^(p−1−e) has biased exponent (p − 1 − e) + 1023 = 2045 + p − (e + 1023).
  return std::bit_cast<double>((static_cast<std::uint64_t>(2045 + f.precision_bits) << 52) - floored);
}

// For doubles, multiplying by 1/ulp (a power of two) rounds the same real number as dividing
// by ulp, so it gives the same value without a division per element; float64 divides.
inline double distance_of_difference(double difference, double exact, float_format f) {
  const double distance = has_inverse_ulp(f) ? difference * inverse_ulp(exact, f)
                                             : difference / ulp_detail::ulp_of(exact, f);
  return std::min(distance, ulp_distance_saturation);
}
inline double finite_distance(double computed, double exact, float_format f) {
  return distance_of_difference(std::fabs(computed - exact), exact, f);
}

template <typename Real>
double ulp_distance(Real computed, Real exact, float_format f) {
  const bool computed_nan = std::isnan(computed);
  const bool exact_nan = std::isnan(exact);
  if (computed_nan || exact_nan) return computed_nan == exact_nan ? 0.0 : ulp_sentinel_nan_mismatch;

  if (std::isinf(exact)) return computed == exact ? 0.0 : ulp_sentinel_infinity_mismatch;
  if (std::isinf(computed)) {
    // Overflowing to infinity is the correctly rounded answer once |exact| reaches the
    // round-to-nearest overflow threshold (2 - 2^-p) * 2^emax (65520 for float16).
    const Real threshold =
        std::ldexp(Real{2} - std::ldexp(Real{1}, -f.precision_bits), f.max_exponent());
    const bool overflow_is_correct =
        std::signbit(computed) == std::signbit(exact) && std::fabs(exact) >= threshold;
    return overflow_is_correct ? 0.0 : ulp_sentinel_infinity_mismatch;
  }

  if (computed == 0 && exact == 0) {
    return std::signbit(computed) == std::signbit(exact) ? 0.0 : ulp_sentinel_signed_zero_mismatch;
  }

  return finite_distance(computed, exact, f);
}

}  // namespace ulp_detail

// ulp(exact) in the given format (see the banner for the definition).
inline double ulp_of(double exact, float_format f) { return ulp_detail::ulp_of(exact, f); }
inline long double ulp_of(long double exact, float_format f) {
  return ulp_detail::ulp_of(exact, f);
}
inline double ulp_of(double exact, dtype t) { return ulp_of(exact, format_of(t)); }

// ulp_distance for callers that know both values are finite and not both zero (never a
// sentinel): the same value without the sentinel tests, for per-element loops.
inline double ulp_distance_of_finite(double computed, double exact, float_format f) {
  return ulp_detail::finite_distance(computed, exact, f);
}
// The same from |computed − exact|, for loops that already have it.
inline double ulp_distance_of_difference(double difference, double exact, float_format f) {
  return ulp_detail::distance_of_difference(difference, exact, f);
}

// |computed - exact| / ulp(exact), or one of the sentinels above.
inline double ulp_distance(double computed, double exact, float_format f) {
  return ulp_detail::ulp_distance(computed, exact, f);
}
inline double ulp_distance(long double computed, long double exact, float_format f) {
  return ulp_detail::ulp_distance(computed, exact, f);
}
inline double ulp_distance(double computed, double exact, dtype t) {
  return ulp_distance(computed, exact, format_of(t));
}
inline double ulp_distance(long double computed, long double exact, dtype t) {
  return ulp_distance(computed, exact, format_of(t));
}

}  // namespace ropecheck
