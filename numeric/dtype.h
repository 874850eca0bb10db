// dtype: the element types ropecheck reads, writes and computes in — one spelling for the
// whole codebase ("float32", "bfloat16", ...), matching numpy's names where numpy has one.
#pragma once

#include <cstddef>
#include <optional>
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

// Significand precision p (implicit bit included): the unit roundoff of a dtype is 2^-p.
constexpr int precision_bits(dtype t) {
  switch (t) {
    case dtype::float64: return 53;
    case dtype::float32: return 24;
    case dtype::float16: return 11;
    case dtype::bfloat16: return 8;
    default: return 0;
  }
}

}  // namespace ropecheck
