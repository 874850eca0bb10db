// fp8: bit-exact float8_e4m3fn and float8_e5m2 encode/decode (OCP "OFP8 Formats for Deep
// Learning" v1.0; arXiv:2209.05433), integer arithmetic only, constexpr — the 8-bit sibling of
// numeric/half.h, with the same single round to nearest, ties to even.
//
//   e4m3fn  S.EEEE.MMM  bias 7,  emin −6,  max 448 = S.1111.110, NaN = S.1111.111, no ±inf
//   e5m2    S.EEEEE.MM  bias 15, emin −14, max 57344 = S.11110.11, ±inf = S.11111.00, NaN else
//
// Overflow — what becomes of a value beyond the largest finite one — is a choice, and real
// pipelines make both:
//   fp8_overflow::saturate  |v| > max stores ±max; ±inf stores ±max; NaN stays NaN. This is the
//       cast of the pipelines that write rotated Q/K (or a KV cache) to fp8: vLLM's
//       scaled_vec_conversion (csrc/quantization/fp8/nvidia/quant_utils.cuh) and
//       TransformerEngine call __nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, ...), the PTX
//       cvt.rn.satfinite.{e4m3,e5m2}x2.f32. ropecheck's kernels store this way.
//   fp8_overflow::non_saturating  what PyTorch's `.to(torch.float8_e4m3fn)` does
//       (c10/util/Float8_e4m3fn.h, fp8e4m3fn_from_fp32_value): anything that rounds past 448
//       (|v| ≥ 464, the midpoint to the absent 480) becomes NaN 0x7F, e4m3fn having no
//       infinity; and `.to(torch.float8_e5m2)` (Float8_e5m2.h) rounds past 57344 to ±inf.
// NaN encodes as e4m3fn's only NaN S.1111.111, or for e5m2 as numeric/half.h does: the leading
// payload bit kept and the quiet bit (the top stored bit) set.
#pragma once

#include <bit>
#include <cstdint>

#include "numeric/dtype.h"

namespace ropecheck {

enum class fp8_overflow { saturate, non_saturating };

namespace fp8_detail {

struct format8 : float_format {
  std::uint8_t max_finite_bits;  // the magnitude bits of the largest finite value
  std::uint8_t nan_bits;         // magnitude bits of the canonical (quiet) NaN
};

inline constexpr format8 e4m3fn{float8_e4m3fn_format, 0x7e, 0x7f};
inline constexpr format8 e5m2{float8_e5m2_format, 0x7b, 0x7e};

constexpr format8 format8_of(dtype t) { return t == dtype::float8_e4m3fn ? e4m3fn : e5m2; }

// Rounds a double to an 8-bit format in one step (every float widens to double exactly, so a
// float goes through here and still rounds once).
constexpr std::uint8_t round_double_to(double value, format8 f, fp8_overflow overflow) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<std::uint8_t>((bits >> 56) & 0x80u);
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ffu);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  const int stored_bits = f.precision_bits - 1;
  const auto overflowed = static_cast<std::uint8_t>(
      sign | (overflow == fp8_overflow::saturate ? f.max_finite_bits
              : f.has_infinity                   ? f.max_finite_bits + 1  // the infinity
                                                 : f.nan_bits));

  if (biased_exponent == 0x7ff) {
    if (fraction != 0) {
      if (!f.has_infinity) return sign | f.nan_bits;
      const auto payload = static_cast<std::uint8_t>(fraction >> (52 - stored_bits));
      return static_cast<std::uint8_t>(sign | f.nan_bits | payload);
    }
    return overflowed;  // ±inf: saturates to ±max, or stays ±inf (e5m2) / NaN (e4m3fn)
  }
  if (biased_exponent == 0) return sign;  // double subnormals round to ±0

  const int exponent = biased_exponent - 1023;
  if (exponent > f.max_exponent() + 1) return overflowed;  // |v| ≥ 2^(emax+2): far past max
  const std::uint64_t significand = fraction | (std::uint64_t{1} << 52);

  int shift = 53 - f.precision_bits;
  if (exponent < f.min_normal_exponent) shift += f.min_normal_exponent - exponent;
  if (shift > 54) return sign;  // below half the smallest subnormal

  std::uint64_t kept = significand >> shift;
  const std::uint64_t remainder = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (kept & 1u) != 0)) ++kept;

  // As in numeric/half.h: the implicit bit in `kept` adds one to the exponent field, so a
  // rounding carry moves to the next binade by itself.
  std::uint64_t magnitude = kept;
  if (exponent >= f.min_normal_exponent) {
    magnitude += static_cast<std::uint64_t>(exponent - f.min_normal_exponent) << stored_bits;
  }
  if (magnitude > f.max_finite_bits) return overflowed;
  return static_cast<std::uint8_t>(sign | magnitude);
}

}  // namespace fp8_detail

// Bits of `value` rounded once (RNE) to float8_e4m3fn / float8_e5m2; `t` must be one of them.
constexpr std::uint8_t double_to_float8_bits(dtype t, double value,
                                             fp8_overflow overflow = fp8_overflow::saturate) {
  return fp8_detail::round_double_to(value, fp8_detail::format8_of(t), overflow);
}
constexpr std::uint8_t float_to_float8_bits(dtype t, float value,
                                            fp8_overflow overflow = fp8_overflow::saturate) {
  return double_to_float8_bits(t, static_cast<double>(value), overflow);
}

// Every fp8 value is exact in float. e5m2 is the top byte of a binary16; e4m3fn decodes by
// its fields (no infinity: exponent 1111 is a normal binade except the NaN S.1111.111).
constexpr float float8_bits_to_float(dtype t, std::uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const fp8_detail::format8 f = fp8_detail::format8_of(t);
  const int stored_bits = f.precision_bits - 1;
  const unsigned magnitude = bits & 0x7fu;
  const unsigned exponent_field = magnitude >> stored_bits;
  const unsigned mantissa = magnitude & ((1u << stored_bits) - 1);
  const std::uint32_t sign = negative ? 0x80000000u : 0u;
  if (magnitude > f.max_finite_bits) {
    if (!f.has_infinity || mantissa != 0) {
      // NaN: quiet, payload bits moved to the top of float's fraction.
      return std::bit_cast<float>(sign | 0x7fc00000u | (mantissa << (23 - stored_bits)));
    }
    return std::bit_cast<float>(sign | 0x7f800000u);
  }
  if (exponent_field == 0) {
    // Subnormal: mantissa · 2^(emin − p + 1), exact.
    float v = static_cast<float>(mantissa);
    for (int i = 0; i < f.precision_bits - 1 - f.min_normal_exponent; ++i) v *= 0.5f;
    return negative ? -v : v;
  }
  const std::uint32_t biased = exponent_field + static_cast<unsigned>(f.min_normal_exponent) - 1u + 127u;
  return std::bit_cast<float>(sign | (biased << 23) | (mantissa << (23 - stored_bits)));
}

}  // namespace ropecheck
