// half: bit-exact IEEE 754-2008 binary16 ("float16") and bfloat16 encode/decode, done with
// integer arithmetic so it needs no compiler _Float16/__bf16 support and is constexpr.
// Encoding rounds once, to nearest with ties to even (IEEE 754 §4.3.1); overflow goes to
// ±inf, subnormals are produced exactly, NaN stays NaN (always quiet), signed zeros survive.
// bfloat16 is the top half of a binary32 (8 exponent bits, p = 8), as in TensorFlow/PyTorch.
#pragma once

#include <bit>
#include <cstdint>

#include "numeric/dtype.h"

namespace ropecheck {

namespace half_detail {

// A 16-bit target format: its precision and exponent range (numeric/dtype.h's float_format)
// and the bit patterns the encoder needs.
struct format16 : float_format {
  std::uint16_t infinity_bits;  // exponent all ones, significand zero
  std::uint16_t quiet_bit;      // most significant stored significand bit
};

inline constexpr format16 binary16{float16_format, 0x7c00, 0x0200};
inline constexpr format16 bfloat16{bfloat16_format, 0x7f80, 0x0040};

// Rounds a double to a 16-bit format in one step. Every float widens to double exactly, so
// the float entry points go through here too and still round only once.
constexpr std::uint16_t round_double_to(double value, format16 f) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000u);
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ffu);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  const int stored_bits = f.precision_bits - 1;

  if (biased_exponent == 0x7ff) {
    if (fraction == 0) return sign | f.infinity_bits;
    // Keep the leading payload bits (what hardware converters do) and force quiet.
    const auto payload = static_cast<std::uint16_t>(fraction >> (52 - stored_bits));
    return sign | f.infinity_bits | f.quiet_bit | payload;
  }
  // Double subnormals (< 2^-1022) are far below half the smallest 16-bit subnormal: ±0.
  if (biased_exponent == 0) return sign;

  const int exponent = biased_exponent - 1023;
  const std::uint64_t significand = fraction | (std::uint64_t{1} << 52);  // 53 bits
  if (exponent > f.max_exponent()) return sign | f.infinity_bits;

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
  if (exponent >= f.min_normal_exponent) {
    magnitude += static_cast<std::uint64_t>(exponent - f.min_normal_exponent) << stored_bits;
  }
  if (magnitude >= f.infinity_bits) return sign | f.infinity_bits;
  return sign | static_cast<std::uint16_t>(magnitude);
}

}  // namespace half_detail

constexpr std::uint16_t double_to_float16_bits(double value) {
  return half_detail::round_double_to(value, half_detail::binary16);
}

constexpr std::uint16_t double_to_bfloat16_bits(double value) {
  return half_detail::round_double_to(value, half_detail::bfloat16);
}

constexpr std::uint16_t float_to_float16_bits(float value) {
  return double_to_float16_bits(static_cast<double>(value));
}

constexpr std::uint16_t float_to_bfloat16_bits(float value) {
  return double_to_bfloat16_bits(static_cast<double>(value));
}

// Every binary16 value is exactly representable as a float; NaN payloads move bit for bit.
constexpr float float16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t fraction = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (fraction << 13));
  if (exponent == 0) {
    // Subnormal: fraction * 2^-24, exact in float (at most 10 significant bits).
    const float magnitude = static_cast<float>(fraction) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

constexpr float bfloat16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace ropecheck
