// fp8: bit-exact float8_e4m3fn and float8_e5m2 encode/decode (OCP "OFP8 Formats for Deep
// Learning" v1.0; arXiv:2209.05433), integer arithmetic only, constexpr — the 8-bit sibling of
// numeric/half.h, rounding once to nearest, ties to even, by the same encoder
// (numeric/narrow_rounding.h).
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
#include "numeric/narrow_rounding.h"

namespace ropecheck {

// The overflow choice above (numeric/narrow_rounding.h's overflow_rule).
using fp8_overflow = overflow_rule;

namespace fp8_detail {

using format8 = narrow_format<std::uint8_t>;

inline constexpr format8 e4m3fn{float8_e4m3fn_format, 0x7e, 0x7f};
inline constexpr format8 e5m2{float8_e5m2_format, 0x7b, 0x7e};

constexpr format8 format8_of(dtype t) { return t == dtype::float8_e4m3fn ? e4m3fn : e5m2; }

}  // namespace fp8_detail

// Bits of `value` rounded once (RNE) to float8_e4m3fn / float8_e5m2; `t` must be one of them.
constexpr std::uint8_t double_to_float8_bits(dtype t, double value,
                                             fp8_overflow overflow = fp8_overflow::saturate) {
  return round_double_to_narrow(value, fp8_detail::format8_of(t), overflow);
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
