// decimal_text: numbers given as text — command-line flags (core/flag_values.h, the bench
// programs) and environment values (RC_PARAMS, GTEST_SHARD_INDEX) — read by one rule: a plain
// decimal, checked, never wrapped, clamped or read in another base. Library parsers are looser
// in ways that turn a typo into another number: strtol reads 010 as 8 and 0x10 as 16, stream
// extraction reads ' 5' as 5 and -1 as 2^64 - 1, CLI11 clamps 2^64 to 2^63 - 1, strtod reads
// 0x1p3, inf and nan. An empty value is refused like any other.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "io/io_error.h"

namespace ropecheck {

// "0" or digits without a leading zero: no sign, space, base prefix, fraction or exponent.
// A leading zero is refused rather than read as decimal, since C (and CLI11) read it as octal.
constexpr bool plain_decimal_digits(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return false;
  for (const char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

// A decimal number: an optional '-', plain decimal digits (as above), an optional fraction
// ".digits" and an optional exponent "e[+-]digits" — no space, '+', hex float, inf or nan.
constexpr bool decimal_number_syntax(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - start;
  };
  const std::size_t whole_start = i;
  const std::size_t whole = digits();
  if (whole == 0 || (whole > 1 && text[whole_start] == '0')) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

// A plain decimal integer within min ... max (inclusive), else bad_input naming `flag`.
inline std::uint64_t decimal_integer_flag(std::string_view flag, std::string_view text,
                                          std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool digits = plain_decimal_digits(text);
  if (!digits || error != std::errc() || stop != end || value < min || value > max)
    throw bad_input(flag, fmt::format("is not an integer in {} ... {}{}", min, max,
                                      text.empty() ? " (it is empty)" : ""),
                    text, digits ? "" : "a plain decimal: digits only, no sign, space, leading zero, hex or exponent");
  return value;
}

inline constexpr std::string_view decimal_number_note =
    "a decimal number such as 0.5 or 1e-3: no space, leading zero, hex, inf or nan";

// A decimal number whose value is finite as a double (1e999 is refused, not read as
// infinity), else bad_input naming `flag` with `problem`.
inline double decimal_number_flag(std::string_view flag, std::string_view text,
                                  std::string_view problem = "is not a finite decimal number") {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (!decimal_number_syntax(text) || error != std::errc() || stop != end || !std::isfinite(value))
    throw bad_input(flag, fmt::format("{}{}", problem, text.empty() ? " (it is empty)" : ""), text,
                    decimal_number_note);
  return value;
}

// A decimal number, finite and > 0 (a tolerance, a ratio).
inline constexpr std::string_view positive_number_problem = "is not a finite number > 0";
inline double positive_number_flag(std::string_view flag, std::string_view text) {
  const double value = decimal_number_flag(flag, text, positive_number_problem);
  if (!(value > 0)) throw bad_input(flag, positive_number_problem, text, decimal_number_note);
  return value;
}

// A decimal number read as the float32 nearest it, refused unless that float is finite and
// > 0 (so neither 0, a negative, inf, nan nor a value outside float32's range).
inline constexpr std::string_view positive_float32_problem = "is not a number > 0 within float32's finite range";
inline float positive_float32_flag(std::string_view flag, std::string_view text) {
  const float value = static_cast<float>(decimal_number_flag(flag, text, positive_float32_problem));
  if (!(std::isfinite(value) && value > 0)) throw bad_input(flag, positive_float32_problem, text, decimal_number_note);
  return value;
}

}  // namespace ropecheck
