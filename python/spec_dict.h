// spec_dict: a spec given as a Python dict (a config.json loaded with json.load, or built by
// hand), turned into the JSON document the spec reader reads (spec/spec_reader.h) under the
// rules io/json_file.h applies to a config.json file, so a dict and the same file give the
// same spec or the same one-line refusal. A dict is converted directly, never through
// json.dumps text (which writes inf and nan as Infinity and NaN, JSON cannot hold them, and
// recurses without a limit). Refused, each as an io_error naming the source, the field path
// (rope_scaling.factor, mrope_section[2]) and the value:
//   * a float that is inf (1e999 in Python) or nan, an int beyond double's range;
//   * nesting deeper than json_max_depth (a self-containing dict included);
//   * a key that is not a str, text with a lone surrogate (UTF-8 cannot hold it);
//   * a value that is not a dict (or other Mapping), list, tuple, str, int, float, bool or None.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>
#include <string_view>

namespace ropecheck::python {

nlohmann::json json_from_python(pybind11::handle value, std::string_view source);

}  // namespace ropecheck::python
