// half: bit-exact IEEE 754-2008 binary16 ("float16") and bfloat16 encode/decode, done with
// integer arithmetic so it needs no compiler _Float16/__bf16 support and is constexpr.
// Encoding rounds once, to nearest with ties to even (IEEE 754 §4.3.1), by the encoder every
// narrow format shares (numeric/narrow_rounding.h); overflow goes to ±inf, subnormals are
// produced exactly, NaN stays NaN (always quiet), signed zeros survive.
// bfloat16 is the top half of a binary32 (8 exponent bits, p = 8), as in TensorFlow/PyTorch.
#pragma once

#include <bit>
#include <cstdint>

#include "numeric/dtype.h"
#include "numeric/narrow_rounding.h"

namespace ropecheck {

namespace half_detail {

// The 16-bit formats for numeric/narrow_rounding.h: IEEE overflow to ±inf, NaN quiet.
inline constexpr narrow_format<std::uint16_t> binary16{float16_format, 0x7bff, 0x7e00};
inline constexpr narrow_format<std::uint16_t> bfloat16{bfloat16_format, 0x7f7f, 0x7fc0};

constexpr std::uint16_t round_double_to(double value, const narrow_format<std::uint16_t>& f) {
  return round_double_to_narrow(value, f, overflow_rule::non_saturating);
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
