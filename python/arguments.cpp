// The Python entry points' arguments, checked (arguments.h).
#include "python/arguments.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/flag_values.h"
#include "io/io_error.h"

namespace py = pybind11;

namespace ropecheck::python {

std::string type_note(py::handle value) {
  const std::string_view type = Py_TYPE(value.ptr())->tp_name;
  const bool vowel = !type.empty() && std::string_view("aeiouAEIOU").find(type.front()) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", type);
}

namespace {

// "\"a\", \"b\" or \"c\"".
std::string alternatives(std::span<const std::string_view> choices) {
  std::string out;
  std::size_t i = 0;
  for (const std::string_view c : choices) {
    if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
    out += fmt::format("\"{}\"", c);
    ++i;
  }
  return out;
}

// C0 controls, DEL and C1 controls (U+0080 ... U+009F, UTF-8 C2 80 ... C2 9F).
bool has_control_character(std::string_view utf8) {
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x20 || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < utf8.size()) {
      const auto next = static_cast<unsigned char>(utf8[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return true;
    }
  }
  return false;
}

bool is_real_number(py::handle value) {
  if (PyBool_Check(value.ptr())) return false;
  if (PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr())) return true;
  // numpy scalars (float32, int64, ...) register with numbers.Real.
  return py::isinstance(value, py::module_::import("numbers").attr("Real"));
}

}  // namespace

std::string shown(py::handle value) {
  try {
    const py::object text = PyUnicode_Check(value.ptr()) ? py::reinterpret_borrow<py::object>(value)
                                                         : py::object(py::repr(value));
    return std::string(py::bytes(text.attr("encode")("utf-8", "backslashreplace")));
  } catch (py::error_already_set&) {  // a repr that raises, an int too long to print
    return fmt::format("<{}>", type_note(value));
  }
}

std::string text_argument(py::handle value, std::string_view name) {
  if (!PyUnicode_Check(value.ptr())) throw bad_input(name, "is not a str", shown(value), type_note(value));
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    throw bad_input(name, "is not text UTF-8 can hold (it has a lone surrogate)", shown(value));
  }
  return std::string(data, static_cast<std::size_t>(size));
}

std::string label_argument(py::handle value, std::string_view name) {
  std::string text = text_argument(value, name);
  if (text.empty()) throw bad_input(name, "is empty", text);
  if (has_control_character(text))
    throw bad_input(name, "contains a control character", text,
                    "it is printed in one-line messages and in report tables");
  return text;
}

std::string choice_argument(py::handle value, std::string_view name,
                            std::initializer_list<std::string_view> choices) {
  return choice_argument(value, name, std::span<const std::string_view>(choices.begin(), choices.size()));
}

std::vector<std::string> choices_argument(py::handle value, std::string_view name,
                                          std::initializer_list<std::string_view> choices) {
  return choices_argument(value, name, std::span<const std::string_view>(choices.begin(), choices.size()));
}

std::string choice_argument(py::handle value, std::string_view name, std::span<const std::string_view> choices) {
  std::string text = text_argument(value, name);
  for (const std::string_view c : choices)
    if (text == c) return text;
  throw bad_input(name, fmt::format("is not {}", alternatives(choices)), text);
}

std::vector<std::string> choices_argument(py::handle value, std::string_view name,
                                          std::span<const std::string_view> choices) {
  if (PyUnicode_Check(value.ptr())) return {choice_argument(value, name, choices)};
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw bad_input(name, "is not a str or a list of them", shown(value), type_note(value));
  std::vector<std::string> out;
  for (const py::handle item : value) {
    std::string chosen = choice_argument(item, fmt::format("{}[{}]", name, out.size()), choices);
    for (const std::string& earlier : out)
      if (earlier == chosen) throw bad_input(name, "names a value twice", chosen);
    out.push_back(std::move(chosen));
  }
  if (out.empty())
    throw bad_input(name, "is empty: the run would check nothing", shown(value),
                    fmt::format("give at least one of {}", alternatives(choices)));
  return out;
}

bool bool_argument(py::handle value, std::string_view name) {
  if (!PyBool_Check(value.ptr())) throw bad_input(name, "is not True or False", shown(value), type_note(value));
  return value.ptr() == Py_True;
}

std::uint64_t uint64_argument(py::handle value, std::string_view name) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    // 1.5, 1e3: refused with the CLI's line for the same text; a str is refused as one.
    if (!PyUnicode_Check(value.ptr()) && !PyBool_Check(value.ptr())) core::parse_uint64_flag(name, shown(value));
    throw bad_input(name, "is not an int", shown(value), type_note(value));
  }
  const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) {  // an array of several elements has __index__ but is no int
    PyErr_Clear();
    throw bad_input(name, "is not an int", shown(value), type_note(value));
  }
  const unsigned long long n = PyLong_AsUnsignedLongLong(index.ptr());
  if (n == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();  // negative or past 2^64 - 1: refused as the CLI refuses its text
    core::parse_uint64_flag(name, shown(index));
    throw bad_input(name, "is not an int in 0 ... 18446744073709551615", shown(index));
  }
  return n;
}

std::int64_t positive_int64_argument(py::handle value, std::string_view name) {
  const std::uint64_t n = uint64_argument(value, name);
  if (n == 0 || n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw bad_input(name, "is not an int in 1 ... 9223372036854775807", shown(value));
  return static_cast<std::int64_t>(n);
}

double number_argument(py::handle value, std::string_view name) {
  if (!is_real_number(value)) throw bad_input(name, "is not a number", shown(value), type_note(value));
  const double d = PyFloat_AsDouble(value.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
    PyErr_Clear();  // an int past double's range: infinite, refused by the caller's rule
    const int negative = PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_LT);
    if (negative < 0) throw py::error_already_set();
    return negative != 0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return d;
}

std::optional<double> tolerance_argument(py::handle value, std::string_view name) {
  if (value.is_none()) return std::nullopt;
  return core::positive_finite_flag(name, number_argument(value, name));
}

float output_scale_argument(py::handle value, std::string_view name) {
  return core::output_scale_value(name, number_argument(value, name));
}

std::filesystem::path path_argument(py::handle value, std::string_view name) {
  const py::module_ os = py::module_::import("os");
  if (!PyUnicode_Check(value.ptr()) && !PyBytes_Check(value.ptr()) && !py::isinstance(value, os.attr("PathLike")))
    throw bad_input(name, "is not a path (a str, bytes or os.PathLike)", shown(value), type_note(value));
  std::string bytes;
  try {
    bytes = std::string(py::bytes(os.attr("fsencode")(value)));
  } catch (py::error_already_set& e) {  // a lone surrogate; an __fspath__ returning no str
    if (!e.matches(PyExc_UnicodeError) && !e.matches(PyExc_TypeError)) throw;
    throw bad_input(name, "is not a file name (os.fsencode refuses it)", shown(value));
  }
  if (bytes.empty()) throw bad_input(name, "is empty: a file name is needed", bytes);
  if (bytes.find('\0') != std::string::npos)
    throw bad_input(name, "contains a NUL byte, which no file name can hold", bytes);
  return std::filesystem::path(bytes);
}

}  // namespace ropecheck::python
