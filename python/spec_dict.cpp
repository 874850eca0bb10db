// A spec dict as a JSON document (spec_dict.h).
#include "python/spec_dict.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "io/io_error.h"
#include "io/json_file.h"
#include "python/arguments.h"

namespace py = pybind11;

namespace ropecheck::python {
namespace {

using json = nlohmann::json;

constexpr std::string_view not_json_problem = "is not a JSON value (a dict, list, str, int, float, bool or None)";

class converter {
 public:
  explicit converter(std::string_view source)
      : source_(source),
        mapping_(py::module_::import("collections.abc").attr("Mapping")),
        real_(py::module_::import("numbers").attr("Real")) {}

  // `depth`: the containers `value` is inside (io/json_file.cpp counts the same way).
  json convert(py::handle value, const std::string& path, int depth) const {
    PyObject* p = value.ptr();
    if (value.is_none()) return json(nullptr);
    if (PyBool_Check(p)) return json(p == Py_True);
    if (PyLong_Check(p) || (PyIndex_Check(p) && !PyFloat_Check(p))) return integer(value, path);
    if (PyFloat_Check(p) || py::isinstance(value, real_)) return real(value, path);
    if (PyUnicode_Check(p)) return json(text(value, path));
    const bool mapping = py::isinstance(value, mapping_);
    if (mapping || py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      if (depth >= json_max_depth)
        throw io_error(source_, field(path), "nested too deeply", fmt::format("depth {}", depth + 1),
                       fmt::format("limit {}", json_max_depth));
      return mapping ? object(value, path, depth) : array(value, path, depth);
    }
    throw io_error(source_, field(path), not_json_problem, shown(value), type_note(value));
  }

 private:
  static std::string field(const std::string& path) {
    return path.empty() ? std::string("document") : fmt::format("field '{}'", path);
  }

  json integer(py::handle value, const std::string& path) const {
    const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    if (!index) {  // a NumPy array has __index__ but is no int
      PyErr_Clear();
      throw io_error(source_, field(path), not_json_problem, shown(value), type_note(value));
    }
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow == 0) return json(static_cast<json::number_integer_t>(n));
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred()))
        return json(static_cast<json::number_unsigned_t>(u));
      PyErr_Clear();
    }
    // Past 64 bits: a JSON parser reads such a literal as a double, as this does.
    const double d = PyLong_AsDouble(index.ptr());
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw io_error(source_, field(path), "number out of range", shown(value), "beyond the largest finite double");
    }
    return json(d);
  }

  json real(py::handle value, const std::string& path) const {
    const double d = PyFloat_AsDouble(value.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    if (std::isnan(d)) throw io_error(source_, field(path), "is not a number", shown(value), "JSON has no NaN");
    if (std::isinf(d))
      throw io_error(source_, field(path), "number out of range", shown(value), "beyond the largest finite double");
    return json(d);
  }

  std::string text(py::handle value, const std::string& path) const {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
    if (data == nullptr) {
      PyErr_Clear();
      throw io_error(source_, field(path), "is not text UTF-8 can hold (it has a lone surrogate)", shown(value));
    }
    return std::string(data, static_cast<std::size_t>(size));
  }

  json object(py::handle value, const std::string& path, int depth) const {
    json out = json::object();
    const py::object items = value.attr("items")();
    for (const py::handle item : items) {
      const auto pair = py::reinterpret_borrow<py::tuple>(item);
      const py::object key = pair[0];
      if (!PyUnicode_Check(key.ptr()))
        throw io_error(source_, field(path), "has a key that is not a str", shown(key),
                       type_note(key));
      std::string name = text(key, path);
      std::string child = path.empty() ? name : path + "." + name;
      out[name] = convert(pair[1], child, depth + 1);
    }
    return out;
  }

  json array(py::handle value, const std::string& path, int depth) const {
    json out = json::array();
    for (const py::handle item : value) out.push_back(convert(item, fmt::format("{}[{}]", path, out.size()), depth + 1));
    return out;
  }

  std::string_view source_;
  py::object mapping_;
  py::object real_;
};

}  // namespace

json json_from_python(py::handle value, std::string_view source) {
  return converter(source).convert(value, "", 0);
}

}  // namespace ropecheck::python
