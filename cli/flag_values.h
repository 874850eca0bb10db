// flag_values: numeric flag values checked the way the README promises — an out-of-range or
// malformed value is exit 2 naming the flag and the value, never wrapped or clamped (CLI11
// would read --seed -1 as 2^64 - 1 and --tolerance inf as infinity).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "io/io_error.h"

namespace ropecheck::cli {

// Decimal digits only (no sign, no hex, no exponent), within 0 ... 2^64 - 1.
inline std::uint64_t parse_uint64_flag(std::string_view flag, std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (!digits || error != std::errc() || stop != end)
    throw bad_input(flag, "is not an integer in 0 ... 18446744073709551615", text);
  return value;
}

// A tolerance: finite and > 0.
inline double positive_finite_flag(std::string_view flag, double value) {
  if (!(std::isfinite(value) && value > 0))
    throw bad_input(flag, "is not a finite number > 0", fmt::format("{}", value));
  return value;
}

// --output-scale S: the per-call fp8 output scale (fast/rope_call.h), a decimal number read as
// the float32 nearest it (pipelines keep their scales in float32); refused unless that float is
// finite and > 0 (so neither 0, a negative, inf, nan nor a value outside float32's range).
inline constexpr std::string_view output_scale_problem = "is not a number > 0 within float32's finite range";
inline float output_scale_flag(std::string_view flag, std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const float scale = static_cast<float>(value);
  if (text.empty() || error != std::errc() || stop != end || !(std::isfinite(scale) && scale > 0))
    throw bad_input(flag, output_scale_problem, text);
  return scale;
}
// The same for a value given as a number (the Python bindings' output_scale=).
inline float output_scale_value(std::string_view flag, double value) {
  const float scale = static_cast<float>(value);
  if (!(std::isfinite(scale) && scale > 0)) throw bad_input(flag, output_scale_problem, fmt::format("{}", value));
  return scale;
}

}  // namespace ropecheck::cli
