// narrow_rounding: the one encoder of a double into a narrow binary format — float16, bfloat16
// (numeric/half.h), float8_e4m3fn and float8_e5m2 (numeric/fp8.h) — rounding once, to nearest
// with ties to even (IEEE 754-2019 §4.3.1), in integer arithmetic, constexpr. A format is its
// float_format (numeric/dtype.h: precision, exponent range, whether it has ±inf) and three bit
// patterns; what becomes of a value beyond the largest finite one is the caller's choice
// (overflow_rule). Every float widens to double exactly, so a float rounds through here once too.
//
// The format's fields, from its most significant bit: sign, exponent, stored significand
// (p − 1 bits); the magnitude is the bits below the sign. With ±inf, the largest finite value
// is the magnitude just below the infinity and NaN has the all-ones exponent with a nonzero
// significand; without (float8_e4m3fn), only the magnitude above the largest finite is NaN.
#pragma once

#include <bit>
#include <cstdint>

#include "numeric/dtype.h"

namespace ropecheck {

// Beyond the largest finite value (after rounding), and for ±inf:
//   saturate        stores ±max (NaN stays NaN): CUDA's __NV_SATFINITE casts (numeric/fp8.h);
//   non_saturating  stores ±inf, or NaN in a format without infinities: IEEE 754's overflow
//                   under round to nearest (§7.4), PyTorch's .to(float8_e4m3fn / float8_e5m2).
enum class overflow_rule { saturate, non_saturating };

template <class Bits>
struct narrow_format : float_format {
  Bits max_finite_bits;  // the magnitude bits of the largest finite value
  Bits nan_bits;         // the magnitude bits of the canonical quiet NaN; with ±inf, the
                         // infinity's (max_finite_bits + 1) with the top stored bit set
};

template <class Bits>
constexpr Bits round_double_to_narrow(double value, const narrow_format<Bits>& f, overflow_rule overflow) {
  constexpr int width = 8 * sizeof(Bits);
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<Bits>((bits >> (64 - width)) & (std::uint64_t{1} << (width - 1)));
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ffu);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  const int stored_bits = f.precision_bits - 1;
  const auto overflowed = static_cast<Bits>(
      sign | (overflow == overflow_rule::saturate ? f.max_finite_bits
              : f.has_infinity                    ? f.max_finite_bits + 1  // the infinity
                                                  : f.nan_bits));

  if (biased_exponent == 0x7ff) {
    if (fraction == 0) return overflowed;  // ±inf: ±inf, or ±max when saturating, or NaN
    if (!f.has_infinity) return static_cast<Bits>(sign | f.nan_bits);  // its only NaN
    // Keep the leading payload bits (what hardware converters do) and force quiet.
    const auto payload = static_cast<Bits>(fraction >> (52 - stored_bits));
    return static_cast<Bits>(sign | f.nan_bits | payload);
  }
  // Double subnormals (< 2^-1022) are far below half the smallest narrow subnormal: ±0.
  if (biased_exponent == 0) return sign;

  const int exponent = biased_exponent - 1023;
  // |v| ≥ 2^(emax+2) is past the largest finite value whatever the rounding (and past what the
  // magnitude arithmetic below needs to hold).
  if (exponent > f.max_exponent() + 1) return overflowed;
  const std::uint64_t significand = fraction | (std::uint64_t{1} << 52);  // 53 bits

  // Right shift that leaves p bits for normals and fewer for subnormals (fixed quantum).
  int shift = 53 - f.precision_bits;
  if (exponent < f.min_normal_exponent) shift += f.min_normal_exponent - exponent;
  if (shift > 54) return sign;  // below half the smallest subnormal: rounds to zero

  std::uint64_t kept = significand >> shift;
  const std::uint64_t remainder = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (kept & 1u) != 0)) ++kept;

  // `kept` still carries the implicit bit, which adds 1 to the exponent field; a rounding
  // carry out of the significand therefore bumps the exponent for free (and a subnormal that
  // rounds up to 2^(p-1) becomes the smallest normal).
  std::uint64_t magnitude = kept;
  if (exponent >= f.min_normal_exponent)
    magnitude += static_cast<std::uint64_t>(exponent - f.min_normal_exponent) << stored_bits;
  if (magnitude > f.max_finite_bits) return overflowed;
  return static_cast<Bits>(sign | magnitude);
}

}  // namespace ropecheck
