// decimal_options: numeric flags declared once, the way every subcommand reads them — the value
// is taken as text and converted by core/flag_values.h (a plain decimal, checked, never clamped;
// empty is refused), so no numeric flag goes through CLI11's own conversion, which reads 010 as
// 8, 0x10 as 16, ' 5' as 5, clamps 2^64 to 2^63 - 1 and takes '' as no flag. A bad value is
// exit 2 naming the flag before the subcommand runs (the exception leaves CLI11's parse).
#pragma once

#include <CLI/CLI.hpp>

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/flag_values.h"

namespace ropecheck::cli {

using namespace ropecheck::core;  // the checked conversions (core/flag_values.h)

// An integer flag within min ... max (min >= 0: no numeric flag takes a sign), into a T or a
// std::optional<T>; `target` keeps its value when the flag is not given.
template <class Target, std::integral T>
CLI::Option* add_decimal_option(CLI::App& cmd, const std::string& name, Target& target, T min, T max,
                                const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          name,
          [&target, name, min, max](const std::string& text) {
            target = static_cast<T>(decimal_integer_flag(name, text, static_cast<std::uint64_t>(min),
                                                         static_cast<std::uint64_t>(max)));
          },
          help)
      ->type_name("INT");
}

// A number flag that must be finite and > 0 (a tolerance).
inline CLI::Option* add_positive_number_option(CLI::App& cmd, const std::string& name,
                                               std::optional<double>& target, const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          name, [&target, name](const std::string& text) { target = positive_number_flag(name, text); },
          help)
      ->type_name("NUMBER");
}

// --output-scale S (fp8): a number > 0 read as the nearest float32 (flag_values.h).
inline CLI::Option* add_output_scale_option(CLI::App& cmd, std::optional<float>& target,
                                            const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          "--output-scale",
          [&target](const std::string& text) { target = output_scale_flag("--output-scale", text); },
          help)
      ->type_name("S");
}

}  // namespace ropecheck::cli
