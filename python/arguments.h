// arguments: the Python entry points' arguments, read as strictly as the CLI reads its flags
// (core/flag_values.h). Python hands over any object, so each reader checks the type as well as
// the value; every refusal is a bad_input naming the argument and the value (Python:
// ropecheck.FlagError, a ropecheck.InputError, a ValueError), never a pybind11 cast error, a
// silent float() or int() conversion, or a value passed on to break a report later:
//   * text (labels, names, choices) must be a str that UTF-8 can hold (no lone surrogate), and
//     labels hold no control character: they are printed in one-line messages and in Markdown
//     and JUnit reports;
//   * numbers are int or float (numpy scalars too), never bool or str;
//   * a path is a str, bytes or os.PathLike (os.fsencode: a non-UTF-8 name is kept byte for
//     byte), neither empty nor holding a NUL byte.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck::python {

// `value` as UTF-8; refused unless it is a str without lone surrogates.
std::string text_argument(pybind11::handle value, std::string_view name);
// The same, also refused when empty or holding a control character (C0, DEL, C1).
std::string label_argument(pybind11::handle value, std::string_view name);
// One of `choices`.
std::string choice_argument(pybind11::handle value, std::string_view name,
                            std::span<const std::string_view> choices);
std::string choice_argument(pybind11::handle value, std::string_view name,
                            std::initializer_list<std::string_view> choices);
// A str (one choice) or a list or tuple of choices; refused when empty.
std::vector<std::string> choices_argument(pybind11::handle value, std::string_view name,
                                          std::span<const std::string_view> choices);
std::vector<std::string> choices_argument(pybind11::handle value, std::string_view name,
                                          std::initializer_list<std::string_view> choices);
bool bool_argument(pybind11::handle value, std::string_view name);
// An int in 0 ... 2^64 - 1 (a seed).
std::uint64_t uint64_argument(pybind11::handle value, std::string_view name);
// An int in 1 ... 2^63 - 1 (a maximum position).
std::int64_t positive_int64_argument(pybind11::handle value, std::string_view name);
// An int or float, as a double (an int beyond double's range is refused).
double number_argument(pybind11::handle value, std::string_view name);
// None, or a finite number > 0.
std::optional<double> tolerance_argument(pybind11::handle value, std::string_view name);
// An fp8 output scale: a number whose float32 is finite and > 0 (core::output_scale_value).
float output_scale_argument(pybind11::handle value, std::string_view name);
// A file path (str, bytes, os.PathLike), not empty, without NUL bytes.
std::filesystem::path path_argument(pybind11::handle value, std::string_view name);

// `value` as one line for a message: a str as itself (lone surrogates as \udXXX), anything else
// as its repr.
std::string shown(pybind11::handle value);
// "a float", "an int": the note of a refusal for a value of the wrong type.
std::string type_note(pybind11::handle value);

}  // namespace ropecheck::python
