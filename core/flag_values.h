// flag_values: numeric flag values checked the way docs/cli.md promises — every numeric flag is
// a plain decimal (io/decimal_text.h), and an empty, malformed or out-of-range value is exit 2
// naming the flag and the value, never wrapped, clamped or read in another base (CLI11 would
// read --seed -1 as 2^64 - 1, --max-position 010 as 8, 0x10 as 16, ' 5' as 5, 2^64 as
// 2^63 - 1, and '' as no flag). cli/decimal_options.h registers flags through these.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "io/decimal_text.h"
#include "io/io_error.h"

namespace ropecheck::core {

using ropecheck::decimal_integer_flag;
using ropecheck::decimal_number_flag;
using ropecheck::plain_decimal_digits;
using ropecheck::positive_number_flag;

// A seed: 0 ... 2^64 - 1.
inline std::uint64_t parse_uint64_flag(std::string_view flag, std::string_view text) {
  return decimal_integer_flag(flag, text, 0, std::numeric_limits<std::uint64_t>::max());
}

// A tolerance given as a number (the Python bindings' tolerance=): finite and > 0.
inline double positive_finite_flag(std::string_view flag, double value) {
  if (!(std::isfinite(value) && value > 0))
    throw bad_input(flag, positive_number_problem, fmt::format("{}", value));
  return value;
}

// --output-scale S: the per-call fp8 output scale (fast/rope_call.h), a decimal number read as
// the float32 nearest it (pipelines keep their scales in float32); refused unless that float is
// finite and > 0 (so neither 0, a negative, inf, nan nor a value outside float32's range).
inline constexpr std::string_view output_scale_problem = positive_float32_problem;
inline float output_scale_flag(std::string_view flag, std::string_view text) {
  return positive_float32_flag(flag, text);
}
// The same for a value given as a number (the Python bindings' output_scale=).
inline float output_scale_value(std::string_view flag, double value) {
  const float scale = static_cast<float>(value);
  if (!(std::isfinite(scale) && scale > 0)) throw bad_input(flag, output_scale_problem, fmt::format("{}", value));
  return scale;
}

}  // namespace ropecheck::core
