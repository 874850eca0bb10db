// dtype: the element types ropecheck reads, writes and computes in — one spelling for the
// whole codebase ("float32", "bfloat16", ...), matching numpy's names where numpy has one.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace ropecheck {

enum class dtype { float64, float32, float16, bfloat16, int32, int64 };

constexpr std::string_view to_string(dtype t) {
  switch (t) {
    case dtype::float64: return "float64";
    case dtype::float32: return "float32";
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "bfloat16";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
  }
  return "?";
}

constexpr std::optional<dtype> parse_dtype(std::string_view name) {
  for (dtype t : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16, dtype::int32,
                  dtype::int64}) {
    if (name == to_string(t)) return t;
  }
  return std::nullopt;
}

constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::float64: case dtype::int64: return 8;
    case dtype::float32: case dtype::int32: return 4;
    case dtype::float16: case dtype::bfloat16: return 2;
  }
  return 0;
}

constexpr bool is_floating(dtype t) { return t != dtype::int32 && t != dtype::int64; }

// An IEEE-style binary format: the one place each floating dtype's precision and exponent
// range are written (the ULP metric, the 16-bit codecs and the bounds all read them here).
// emax = 1 − emin for all of ours.
struct float_format {
  int precision_bits;       // p, implicit bit included: the unit roundoff is 2^-p
  int min_normal_exponent;  // emin: the smallest normal is 2^emin
  constexpr int max_exponent() const { return 1 - min_normal_exponent; }
};

inline constexpr float_format float64_format{53, -1022};
inline constexpr float_format float32_format{24, -126};
inline constexpr float_format float16_format{11, -14};
inline constexpr float_format bfloat16_format{8, -126};

// Throws std::invalid_argument for the integer dtypes, which have no floating format.
constexpr float_format format_of(dtype t) {
  switch (t) {
    case dtype::float64: return float64_format;
    case dtype::float32: return float32_format;
    case dtype::float16: return float16_format;
    case dtype::bfloat16: return bfloat16_format;
    case dtype::int32:
    case dtype::int64: break;
  }
  throw std::invalid_argument("format_of: integer dtypes have no floating format");
}

// Significand precision p of a floating dtype (0 for the integer ones).
constexpr int precision_bits(dtype t) { return is_floating(t) ? format_of(t).precision_bits : 0; }

}  // namespace ropecheck
