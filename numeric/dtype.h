// dtype: the element types ropecheck reads, writes and computes in — one spelling for the
// whole codebase ("float32", "bfloat16", ...), matching numpy's names where numpy has one and
// PyTorch's for the 8-bit floats (torch.float8_e4m3fn, torch.float8_e5m2; numpy has none).
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>

namespace ropecheck {

enum class dtype { float64, float32, float16, bfloat16, int32, int64, float8_e4m3fn, float8_e5m2 };

constexpr std::string_view to_string(dtype t) {
  switch (t) {
    case dtype::float64: return "float64";
    case dtype::float32: return "float32";
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "bfloat16";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::float8_e4m3fn: return "float8_e4m3fn";
    case dtype::float8_e5m2: return "float8_e5m2";
  }
  return "?";
}

constexpr std::optional<dtype> parse_dtype(std::string_view name) {
  for (dtype t : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16, dtype::int32,
                  dtype::int64, dtype::float8_e4m3fn, dtype::float8_e5m2}) {
    if (name == to_string(t)) return t;
  }
  return std::nullopt;
}

constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::float64: case dtype::int64: return 8;
    case dtype::float32: case dtype::int32: return 4;
    case dtype::float16: case dtype::bfloat16: return 2;
    case dtype::float8_e4m3fn: case dtype::float8_e5m2: return 1;
  }
  return 0;
}

constexpr bool is_floating(dtype t) { return t != dtype::int32 && t != dtype::int64; }

// The 8-bit floats (OCP "OFP8 Formats for Deep Learning" v1.0, 2023; Micikevicius et al.,
// "FP8 Formats for Deep Learning", arXiv:2209.05433).
constexpr bool is_float8(dtype t) { return t == dtype::float8_e4m3fn || t == dtype::float8_e5m2; }

// An IEEE-style binary format: the one place each floating dtype's precision and exponent
// range are written (the ULP metric, the 16- and 8-bit codecs and the bounds all read them
// here). emax = 1 − emin and the largest finite value (2 − 2^(1−p))·2^emax for all of ours
// except float8_e4m3fn ("fn": finite, no infinities), which spends the all-ones exponent on
// normals too: emax = 8 (not 7) and only S.1111.111 is NaN, so its largest finite value is
// 1.75·2^8 = 448 where the IEEE rule would give 1.875·2^8.
struct float_format {
  int precision_bits;       // p, implicit bit included: the unit roundoff is 2^-p
  int min_normal_exponent;  // emin: the smallest normal is 2^emin
  bool has_infinity = true;       // false: no ±inf encodings (float8_e4m3fn)
  double finite_max_override = 0; // 0: the IEEE largest finite value (see max_finite())
  constexpr int max_exponent() const {
    return finite_max_override != 0 ? 1 - min_normal_exponent + 1 : 1 - min_normal_exponent;
  }
  // The largest finite value: what a saturating store writes for anything above it.
  constexpr double max_finite() const {
    if (finite_max_override != 0) return finite_max_override;
    // At run time one ldexp: the loops below are a store-to-load chain per doubling (~600
    // cycles for float32), which made max_finite half the cost of drawing a value.
    if (!std::is_constant_evaluated())
      return std::ldexp(2.0 - std::ldexp(1.0, 1 - precision_bits), max_exponent());
    double v = 1.0;
    for (int i = 1; i < precision_bits; ++i) v /= 2;  // 2^(1−p)
    v = 2.0 - v;
    for (int i = 0; i < max_exponent(); ++i) v *= 2;
    return v;
  }
};

inline constexpr float_format float64_format{53, -1022};
inline constexpr float_format float32_format{24, -126};
inline constexpr float_format float16_format{11, -14};
inline constexpr float_format bfloat16_format{8, -126};
// e4m3fn: bias 7, emin = −6, max 448, no infinities, NaN = S.1111.111.
inline constexpr float_format float8_e4m3fn_format{4, -6, false, 448.0};
// e5m2: bias 15, emin = −14, emax = 15, max 57344 = 1.75·2^15, ±inf and NaNs as IEEE.
inline constexpr float_format float8_e5m2_format{3, -14};

// Throws std::invalid_argument for the integer dtypes, which have no floating format.
constexpr float_format format_of(dtype t) {
  switch (t) {
    case dtype::float64: return float64_format;
    case dtype::float32: return float32_format;
    case dtype::float16: return float16_format;
    case dtype::bfloat16: return bfloat16_format;
    case dtype::float8_e4m3fn: return float8_e4m3fn_format;
    case dtype::float8_e5m2: return float8_e5m2_format;
    case dtype::int32:
    case dtype::int64: break;
  }
  throw std::invalid_argument("format_of: integer dtypes have no floating format");
}

// Significand precision p of a floating dtype (0 for the integer ones).
constexpr int precision_bits(dtype t) { return is_floating(t) ? format_of(t).precision_bits : 0; }

}  // namespace ropecheck
