// _ropecheck: the compiled half of the `ropecheck` Python package (pybind11). Every figure it
// returns comes from the same C++ the CLI runs — the 256-bit reference over a tensor
// (core/reference_tensor.h), the audit (audit/audit.h, through core/audit_input.h), the gate's
// whole run with the Python kernel as its in-process kernel (core/gate_run.h: the properties,
// fixtures, contract, baseline, shards and mutants of `ropecheck gate`) and the report
// renderers (reports/). ropecheck/__init__.py is the public API; this module is its engine. The GIL is
// released around every long C++ computation. Every argument is checked here (arguments.h,
// spec_dict.h) before it reaches the core, and every refusal — the module's or the core's,
// whatever the CLI exits 2 for — is a ropecheck.InputError (a ValueError) with the CLI's line.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "core/audit_input.h"
#include "core/contract_spelling.h"
#include "core/gate_run.h"
#include "core/reference_tensor.h"
#include "core/rope_inputs.h"
#include "io/io_error.h"
#include "io/json_file.h"
#include "io/output_paths.h"
#include "properties/kernel_properties.h"
#include "python/arguments.h"
#include "python/arrays.h"
#include "python/python_kernel.h"
#include "python/spec_dict.h"
#include "reports/audit_report.h"
#include "reports/gate_report.h"
#include "reports/report_text.h"
#include "spec/spec_reader.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "unknown"
#endif

namespace py = pybind11;
using namespace ropecheck;

namespace {

// The labels= dict: names of the inputs in messages and in the report's input fields (the CLI
// puts file names there), each a label_argument; any other key is refused, never ignored.
std::map<std::string, std::string> labels_argument(py::handle labels) {
  std::map<std::string, std::string> out;
  if (labels.is_none()) return out;
  if (!py::isinstance(labels, py::module_::import("collections.abc").attr("Mapping")))
    throw bad_input("labels", "is not a dict", python::shown(labels), python::type_note(labels));
  for (const py::handle key : labels) {
    const std::string name = python::text_argument(key, "labels key");
    if (name != "spec" && name != "x" && name != "positions" && name != "y")
      throw bad_input("labels", "has a key that is not \"spec\", \"x\", \"positions\" or \"y\"", name);
    out[name] = python::label_argument(labels[key], fmt::format("labels['{}']", name));
  }
  return out;
}

core::rope_input_paths input_names(const rope_spec& spec, const std::map<std::string, std::string>& labels) {
  const auto label = [&labels](const std::string& key, const std::string& otherwise) {
    const auto found = labels.find(key);
    return found == labels.end() ? otherwise : found->second;
  };
  core::rope_input_paths names;
  names.spec = label("spec", spec.source);
  names.x = label("x", "x");
  names.positions = label("positions", "positions");
  return names;
}

// A spec file read by load_spec keeps its path (as bytes) in this attribute of the Spec, so
// that write() never overwrites the config it was read from (io/output_paths.h).
constexpr const char* spec_file_attribute = "_file";

py::object load_spec(py::handle spec) {
  if (py::isinstance<rope_spec>(spec)) return py::reinterpret_borrow<py::object>(spec);
  if (py::isinstance(spec, py::module_::import("collections.abc").attr("Mapping")))
    return py::cast(parse_spec(python::json_from_python(spec, "spec"), "spec"));
  if (PyUnicode_Check(spec.ptr()) || PyBytes_Check(spec.ptr()) ||
      py::isinstance(spec, py::module_::import("os").attr("PathLike"))) {
    const std::filesystem::path file = python::path_argument(spec, "spec");
    py::object out = py::cast(read_spec(file));
    out.attr(spec_file_attribute) = py::bytes(file.string());
    return out;
  }
  throw bad_input("spec", "is not a dict, a path or a ropecheck.Spec", python::shown(spec),
                  python::type_note(spec));
}

std::vector<flagged_path> spec_inputs(py::handle spec) {
  if (!py::hasattr(spec, spec_file_attribute)) return {};
  return {{"spec", std::filesystem::path(std::string(py::bytes(spec.attr(spec_file_attribute))))}};
}

// write(json=…, markdown=…, html=…, junit=…): None is "not asked for"; every path is checked
// together, as the CLI checks its report flags, before anything is written.
reports::report_paths report_paths_argument(py::handle json, py::handle markdown, py::handle html, py::handle junit,
                                            const std::vector<flagged_path>& inputs) {
  const auto path = [](py::handle value, const char* name) {
    return value.is_none() ? std::string() : python::path_argument(value, name).string();
  };
  reports::report_paths paths{path(json, "json"), path(markdown, "markdown"), path(html, "html"), path(junit, "junit")};
  check_outputs({{"json", paths.json}, {"markdown", paths.markdown}, {"html", paths.html}, {"junit", paths.junit}},
                inputs);
  return paths;
}

// A Python str of bytes that may not be UTF-8 (a file name), as os.fsdecode gives it.
py::str fs_text(const std::string& bytes) {
  PyObject* text = PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

// Bad input — whatever the CLI exits 2 for — is a ropecheck.InputError (a ValueError) with the
// CLI's one line; SpecError (a spec the reader refuses) and FlagError (an argument's value) are
// its subclasses. A bug (std::logic_error but std::invalid_argument) stays pybind11's mapping.
void raise_as(PyObject* type, const char* what) {
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
  if (message == nullptr) return;  // the decode error is raised instead
  PyErr_SetObject(type, message);
  Py_DECREF(message);
}

// Properties whose contract is about memory a Python kernel never sees: the bridge
// (python_kernel.h) hands it fresh packed arrays and writes its results itself.
// Without serves={"position_streams": True} the bridge passes one position stream per token.
std::map<std::string, std::string> skipped_for_python(bool streams) {
  std::map<std::string, std::string> skipped = {
      {"in_place_equals_out_of_place",
       "a Python kernel returns new arrays; the bridge writes them in place or out of place itself"},
      {"layout_invariant",
       "the bridge gathers strided views into packed [tokens, heads, head_dim] arrays before the call"},
      {"rejects_invalid_calls",
       "the bridge refuses invalid calls before Python sees them; a Python kernel returns no status"},
      // Position streams (M-RoPE, 2-D vision), for a kernel that does not declare them.
      {"streams_equal_one_d", "the kernel does not declare position streams (serves[\"position_streams\"])"},
      {"streams_within_bound_of_reference", "the kernel does not declare position streams (serves[\"position_streams\"])"},
      {"streams_norm_preserved", "the kernel does not declare position streams (serves[\"position_streams\"])"},
      {"streams_layout_invariance", "the kernel does not declare position streams (serves[\"position_streams\"])"},
      // The fp8 output scale: the bridge passes none and refuses a call with one.
      {"output_scale_within_bound", "the bridge passes no fp8 output scale (calls with one are refused)"},
  };
  if (streams)
    for (const auto* name : {"streams_equal_one_d", "streams_within_bound_of_reference", "streams_norm_preserved",
                             "streams_layout_invariance"})
      skipped.erase(name);
  return skipped;
}

// Ctrl-C while the GIL is released: Python's C-level handler only records the signal. The long
// loops call this now and then (the audit's progress, the gate between checks): it takes the GIL
// and runs the Python handlers, whose exception (KeyboardInterrupt) ends the computation.
void check_signals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

struct gate_result {
  reports::gate_report report;
  std::vector<std::string> dtypes;  // the kernel's: its `skipped` are those of these dtypes
  std::vector<std::pair<std::string, std::string>> mutants_not_applicable;  // name, why
};

struct audit_result {
  reports::audit_report report;
  std::vector<flagged_path> inputs;  // the spec file, when the spec came from one
};

// gate(contract=…): what `ropecheck gate --contract` / `--contract-from` read, from Python —
// a str (a catalog name, a 'STAGE=CHOICE,…' recipe or a JSON file's path, read_contract), a
// bytes or os.PathLike path (the file), a dict as the file holds it, or one AuditReport (or a
// list of them, one per dtype): the recipe the audit found, as --contract-from reads it.
bounds::accuracy_contract contract_argument(py::handle value) {
  if (value.is_none()) return bounds::exact_contract();
  if (PyUnicode_Check(value.ptr())) return core::read_contract(python::text_argument(value, "contract"), {}, "contract");
  if (PyBytes_Check(value.ptr()) || py::isinstance(value, py::module_::import("os").attr("PathLike"))) {
    const std::string path = python::path_argument(value, "contract").string();
    return core::contract_of_json(read_json_file(path), path, " (" + path + ")");
  }
  if (py::isinstance(value, py::module_::import("collections.abc").attr("Mapping")))
    return core::contract_of_json(python::json_from_python(value, "contract"), "contract", "");
  std::vector<py::handle> audits;
  if (py::isinstance<audit_result>(value)) {
    audits.push_back(value);
  } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    for (const py::handle item : value) {
      if (!py::isinstance<audit_result>(item))
        throw bad_input("contract", "is a list with an item that is not an AuditReport", python::shown(item),
                        python::type_note(item));
      audits.push_back(item);
    }
    if (audits.empty()) throw bad_input("contract", "is an empty list of AuditReports", "[]");
  } else {
    throw bad_input("contract", "is not a contract name, a recipe, a path, a dict or an AuditReport",
                    python::shown(value), python::type_note(value));
  }
  std::vector<core::audit_json> reports;
  for (std::size_t i = 0; i < audits.size(); ++i) {
    nlohmann::json j = reports::to_json(audits[i].cast<const audit_result&>().report);
    const std::string source = audits.size() == 1 ? "contract" : fmt::format("contract[{}]", i);
    const nlohmann::json& inputs = j.value("inputs", nlohmann::json::object());
    const std::string y = inputs.is_object() && inputs.value("y", nlohmann::json()).is_string()
                              ? inputs["y"].get<std::string>() : std::string("y");
    reports.push_back({source, "of " + y, std::move(j)});
  }
  return core::contract_of_audit_json(reports, "contract");
}

// gate(serves=…): the calls the kernel serves (fast::kernel_domain, C ABI v3's declaration);
// None is every call. Each key is checked; one it does not know is refused, never ignored.
// "position_streams" (default False; `*streams`) says it takes positions [streams, tokens] and
// params["pair_streams"], as a C ABI v2 kernel takes position streams.
fast::kernel_domain serves_argument(py::handle value, bool* streams) {
  fast::kernel_domain d;
  *streams = false;
  if (value.is_none()) return d;
  if (!py::isinstance(value, py::module_::import("collections.abc").attr("Mapping")))
    throw bad_input("serves", "is not a dict", python::shown(value), python::type_note(value));
  struct flag_row {
    std::string_view key;
    bool fast::kernel_domain::*field;
  };
  static constexpr flag_row flags[] = {{"negative_positions", &fast::kernel_domain::negative_positions},
                                       {"inverse", &fast::kernel_domain::inverse},
                                       {"attention_factor", &fast::kernel_domain::attention_factor},
                                       {"partial_rotary", &fast::kernel_domain::partial_rotary},
                                       {"absent_tensor", &fast::kernel_domain::absent_tensor}};
  for (const py::handle key : value) {
    const std::string name = python::text_argument(key, "serves key");
    const std::string argument = fmt::format("serves['{}']", name);
    if (name == "max_position") {
      if (!value[key].is_none()) d.max_position = python::positive_int64_argument(value[key], argument);
      continue;
    }
    if (name == "position_streams") {
      *streams = python::bool_argument(value[key], argument);
      continue;
    }
    const auto row = std::find_if(std::begin(flags), std::end(flags), [&](const flag_row& r) { return r.key == name; });
    if (row == std::end(flags))
      throw bad_input("serves", "has a key that is not a part of a kernel's domain", name,
                      "keys: negative_positions, max_position, inverse, attention_factor, partial_rotary, "
                      "absent_tensor, position_streams");
    d.*(row->field) = python::bool_argument(value[key], argument);
  }
  return d;
}

// gate(shard=(i, n)): block i of n of every property's cases (--shard I/N); shard 0 also runs
// the fixtures and the mutants. None is the whole run, (0, 1).
std::pair<int, int> shard_argument(py::handle value) {
  if (value.is_none()) return {0, 1};
  if (!(PyTuple_Check(value.ptr()) || PyList_Check(value.ptr())) || py::len(value) != 2)
    throw bad_input("shard", "is not a pair (i, n)", python::shown(value), python::type_note(value));
  const py::sequence pair = py::reinterpret_borrow<py::sequence>(value);
  const std::int64_t n = python::positive_int64_argument(pair[1], "shard[1]");
  const py::object i_object = pair[0];
  if (PyBool_Check(i_object.ptr()) || !PyLong_Check(i_object.ptr()))
    throw bad_input("shard[0]", "is not an integer", python::shown(i_object), python::type_note(i_object));
  const long long i = i_object.cast<long long>();
  if (n > 1'000'000 || i < 0 || i >= n)
    throw bad_input("shard", "is not (i, n) with 0 <= i < n <= 1000000", python::shown(value));
  return {static_cast<int>(i), static_cast<int>(n)};
}

// gate(properties=…): None (all) or a list of kernel property names (--property).
std::vector<std::string> properties_argument(py::handle value) {
  if (value.is_none()) return {};
  if (PyUnicode_Check(value.ptr()) || !(PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())))
    throw bad_input("properties", "is not a list of property names", python::shown(value), python::type_note(value));
  std::vector<std::string> out;
  const auto all = properties::kernel_property_names();
  for (const py::handle item : value) {
    const std::string name = python::text_argument(item, "properties");
    if (std::find(all.begin(), all.end(), name) == all.end())
      throw bad_input("properties", "has an unknown kernel property", name,
                      "see ropecheck.kernel_property_names()");
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw bad_input("properties", "gives a property twice", name);
    out.push_back(name);
  }
  if (out.empty()) throw bad_input("properties", "is empty: the gate would check nothing", "[]", "None runs all");
  return out;
}

// A name for a kernel given without name=: its __name__ (or its type's), made a valid kernel
// name ("<lambda>" becomes "_lambda_").
std::string default_kernel_name(py::handle kernel) {
  py::object name = py::getattr(kernel, "__name__", py::none());
  if (!PyUnicode_Check(name.ptr())) name = py::handle(reinterpret_cast<PyObject*>(Py_TYPE(kernel.ptr()))).attr("__name__");
  std::string out = python::shown(name);
  for (char& c : out)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
      c = '_';
  out.resize(std::min(out.size(), core::max_kernel_name_length));
  return out.empty() ? std::string("kernel") : out;
}

// The first line of the kernel's docstring, with control characters as spaces.
std::string kernel_description(py::handle kernel) {
  const py::object doc = py::getattr(kernel, "__doc__", py::none());
  if (!PyUnicode_Check(doc.ptr())) return {};
  const py::list lines = doc.attr("strip")().attr("splitlines")();
  std::string out = lines.empty() ? std::string() : python::shown(lines[0]);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

// gate()'s arguments, checked as the CLI checks the gate's flags, as a dict of plain values.
py::dict gate_arguments(py::handle kernel, py::handle dtypes, py::handle pairings, py::handle profile,
                        py::handle seed, py::handle mutants, py::handle tensor_type, py::handle name,
                        py::handle timeout, py::handle contract, py::handle max_position, py::handle positions,
                        py::handle properties_, py::handle serves, py::handle baseline, py::handle shard) {
  if (!PyCallable_Check(kernel.ptr()))
    throw bad_input("kernel", "is not callable", python::shown(kernel), python::type_note(kernel));
  py::dict out;
  static constexpr auto storage_names = names_of(storage_dtypes);  // numeric/dtype.h's catalog
  const auto dtype_names = python::choices_argument(dtypes, "dtypes", storage_names);
  out["dtypes"] = dtype_names;
  out["pairings"] = python::choices_argument(pairings, "pairings", {"half", "adjacent"});
  out["profile"] = python::choice_argument(profile, "profile", {"quick", "deep"});
  out["seed"] = seed.is_none() ? properties::default_seed : python::uint64_argument(seed, "seed");
  out["mutants"] = python::bool_argument(mutants, "mutants");
  const std::string tensors = python::choice_argument(tensor_type, "tensor_type", {"numpy", "torch"});
  if (tensors == "numpy" && std::find(dtype_names.begin(), dtype_names.end(), "bfloat16") != dtype_names.end())
    throw bad_input("dtypes", "bfloat16 needs tensor_type=\"torch\"", "bfloat16", "NumPy has no bfloat16");
  out["tensor_type"] = tensors;
  if (name.is_none()) {
    out["name"] = default_kernel_name(kernel);
  } else {
    const std::string given = python::label_argument(name, "name");
    core::check_kernel_name("name", given);
    out["name"] = given;
  }
  out["description"] = kernel_description(kernel);
  // None (no limit) or seconds per kernel call, enforced with SIGALRM (ropecheck/_bridge.py),
  // whose Python handler only the main thread can install.
  const std::optional<double> seconds = python::tolerance_argument(timeout, "timeout");
  if (seconds) {
    const py::module_ threading = py::module_::import("threading");
    if (!threading.attr("current_thread")().is(threading.attr("main_thread")()))
      throw bad_input("timeout", "needs the main thread", python::shown(timeout),
                      "it is enforced with a SIGALRM handler, which only the main thread can install");
  }
  out["timeout"] = seconds ? py::cast(*seconds) : py::none();
  // The contract, read now (a bad one is refused before the kernel is called), kept whole.
  const bounds::accuracy_contract c = contract_argument(contract);
  out["contract_name"] = c.name;
  out["contract"] = py::cast(c);
  out["max_position"] = max_position.is_none() ? std::int64_t{0}
                                               : python::positive_int64_argument(max_position, "max_position");
  out["positions"] = python::choice_argument(positions, "positions", {"all", "nonnegative"});
  out["properties"] = properties_argument(properties_);
  bool streams = false;
  out["serves"] = py::cast(serves_argument(serves, &streams));
  out["streams"] = streams;
  out["shard"] = shard_argument(shard);
  // The baseline, read now (a bad file is refused before the kernel is called): a saved gate
  // report's path, checked as --baseline's, or a GateReport of this session.
  if (baseline.is_none()) {
    out["baseline"] = py::none();
    out["baseline_name"] = "";
  } else if (py::isinstance<gate_result>(baseline)) {
    out["baseline"] = py::cast(baseline.cast<const gate_result&>().report);
    out["baseline_name"] = "baseline (a GateReport)";
  } else if (PyUnicode_Check(baseline.ptr()) || PyBytes_Check(baseline.ptr()) ||
             py::isinstance(baseline, py::module_::import("os").attr("PathLike"))) {
    const std::string path = python::path_argument(baseline, "baseline").string();
    out["baseline"] = py::cast(core::read_gate_baseline(path));
    out["baseline_name"] = path;
  } else {
    throw bad_input("baseline", "is not a path or a GateReport", python::shown(baseline), python::type_note(baseline));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_ropecheck, m) {
  m.doc() = "ropecheck's C++ core (use the `ropecheck` package, not this module)";
  m.attr("__version__") = ROPECHECK_VERSION;
  // Kept for the life of the process, as pybind11's own registered exceptions are.
  static PyObject* const input_error = PyErr_NewException("ropecheck.InputError", PyExc_ValueError, nullptr);
  static PyObject* const spec_error_type = PyErr_NewException("ropecheck.SpecError", input_error, nullptr);
  static PyObject* const flag_error = PyErr_NewException("ropecheck.FlagError", input_error, nullptr);
  if (input_error == nullptr || spec_error_type == nullptr || flag_error == nullptr) throw py::error_already_set();
  m.attr("InputError") = py::handle(input_error);
  m.attr("SpecError") = py::handle(spec_error_type);
  m.attr("FlagError") = py::handle(flag_error);
  // numeric/dtype.h's catalog, which the pure-Python layer reads instead of spelling it again:
  // the storage dtypes (gate's dtypes, audit's dtype), those held as raw bits, the 8-bit floats.
  m.attr("storage_dtypes") = py::tuple(py::cast(ropecheck::dtype_names(storage_dtypes)));
  m.attr("raw_bits_dtypes") = py::tuple(py::cast(ropecheck::dtype_names(raw_bits_dtypes)));
  m.attr("float8_dtypes") = py::tuple(py::cast(ropecheck::dtype_names(storage_dtypes_of_width<1>)));
  py::register_local_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (value_error, cast_error, ...): its translator
    } catch (const spec_error& e) {
      raise_as(spec_error_type, e.what());
    } catch (const bad_input& e) {
      raise_as(flag_error, e.what());
    } catch (const std::invalid_argument& e) {  // the reference's refusal, a request cli/ refuses
      raise_as(input_error, e.what());
    } catch (const std::logic_error&) {
      throw;
    } catch (const std::runtime_error& e) {  // io_error and every other exit-2 error of the CLI
      raise_as(input_error, e.what());
    }
  });

  py::class_<rope_spec>(m, "Spec", py::dynamic_attr())
      .def_readonly("head_dim", &rope_spec::head_dim)
      .def_readonly("rotary_dim", &rope_spec::rotary_dim)
      .def_readonly("base", &rope_spec::base)
      .def_property_readonly("source", [](const rope_spec& s) { return fs_text(s.source); })
      .def_property_readonly("pairing", [](const rope_spec& s) { return std::string(to_string(s.pair)); })
      .def_property_readonly("scaling", [](const rope_spec& s) { return std::string(to_string(type_of(s.scaling))); })
      // The layers the config says apply no RoPE (Llama 4 NoPE, Cohere2 full attention; rope_spec.h),
      // and the sentence that says how; the layer chosen with the spec's "layer" key, or None.
      .def_property_readonly("layers_without_rope", [](const rope_spec& s) { return s.without_rope.indices; })
      .def_property_readonly("layers_without_rope_rule", [](const rope_spec& s) { return describe(s.without_rope); })
      .def_readonly("layer", &rope_spec::layer)
      .def("__repr__", [](const rope_spec& s) {
        return fmt::format("Spec(head_dim={}, rotary_dim={}, base={}, pairing='{}', scaling='{}', source='{}'{})",
                           s.head_dim, s.rotary_dim, s.base, to_string(s.pair), to_string(type_of(s.scaling)),
                           printable(s.source, 4096),
                           s.without_rope.any() ? fmt::format(", {}", describe(s.without_rope)) : "");
      });
  // A dict, a path (str, bytes, os.PathLike) or a Spec (returned as is).
  m.def("load_spec", [](py::handle spec) { return load_spec(spec); }, py::arg("spec"));

  m.def("reference", [](py::handle spec_argument, const py::array& x, const std::string& x_dtype,
                        const py::array& positions, const std::string& positions_dtype, py::handle form_argument,
                        py::handle out_dtype_argument, py::handle output_scale) {
    const rope_spec spec = load_spec(spec_argument).cast<rope_spec>();
    const std::string form = python::choice_argument(form_argument, "form", {"elementwise", "complex", "matrix"});
    const dtype out = *parse_dtype(python::choice_argument(out_dtype_argument, "out_dtype", {"float64", "float32"}));
    const float scale = python::output_scale_argument(output_scale, "output_scale");
    const auto names = input_names(spec, {});
    tensor xt = python::tensor_from_array(x, x_dtype, "x");
    const tensor pt = python::tensor_from_array(positions, positions_dtype, "positions");
    tensor y;
    {
      py::gil_scoped_release release;
      const core::rope_inputs in = core::make_rope_inputs(spec, std::move(xt), pt, names);
      y = core::reference_tensor(in, names.x, form, out, scale);
    }
    return python::array_from_tensor(y);
  });

  py::class_<audit_result>(m, "AuditReport")
      .def_property_readonly("passed", [](const audit_result& r) { return r.report.passed; })
      .def("to_json", [](const audit_result& r) { return reports::json_text(reports::to_json(r.report)); })
      .def("render_terminal", [](const audit_result& r) { return reports::valid_utf8(reports::render_terminal(r.report)); })
      .def("write", [](const audit_result& r, py::handle json, py::handle markdown, py::handle html, py::handle junit) {
        reports::write_report_files(r.report, report_paths_argument(json, markdown, html, junit, r.inputs));
      }, py::arg("json") = py::none(), py::arg("markdown") = py::none(), py::arg("html") = py::none(),
         py::arg("junit") = py::none());

  m.def("audit", [](py::handle spec_argument, const py::array& x, const std::string& x_dtype,
                    const py::array& positions, const std::string& positions_dtype,
                    const py::array& y, const std::string& y_dtype, py::handle judged,
                    py::handle tolerance_argument, py::handle labels_argument_, py::handle output_scale,
                    py::handle contract_value) {
    const py::object spec_object = load_spec(spec_argument);
    const rope_spec spec = spec_object.cast<rope_spec>();
    const float scale = python::output_scale_argument(output_scale, "output_scale");
    const std::optional<double> tolerance = python::tolerance_argument(tolerance_argument, "tolerance");
    // contract= as gate() takes it (`ropecheck audit --contract`); not with tolerance=.
    std::optional<bounds::accuracy_contract> contract;
    if (!contract_value.is_none()) {
      if (tolerance)
        throw bad_input("tolerance", "is not allowed with contract=: the contract sets the tolerance",
                        fmt::format("{}", *tolerance));
      contract = contract_argument(contract_value);
    }
    const auto labels = labels_argument(labels_argument_);
    const auto names = input_names(spec, labels);
    const std::string y_name = labels.count("y") != 0 ? labels.at("y") : "y";
    std::optional<dtype> judged_type;
    if (!judged.is_none())
      judged_type = parse_dtype(python::choice_argument(judged, "dtype", names_of(storage_dtypes)));
    tensor xt = python::tensor_from_array(x, x_dtype, names.x);
    const tensor pt = python::tensor_from_array(positions, positions_dtype, names.positions);
    tensor yt = python::tensor_from_array(y, y_dtype, y_name);
    audit_result result;
    result.inputs = spec_inputs(spec_object);
    py::gil_scoped_release release;
    core::rope_inputs in = core::make_rope_inputs(spec, std::move(xt), pt, names);
    const audit::audit_input input =
        core::make_audit_input(std::move(in), std::move(yt), names, y_name, judged_type, tolerance, scale);
    audit::audit_input contracted = input;
    contracted.contract = std::move(contract);
    result.report = audit::run_audit(contracted, [](std::int64_t, std::int64_t) { check_signals(); });
    result.report.tool_version = ROPECHECK_VERSION;
    return result;
  });

  // Opaque: gate_arguments' checked contract and domain, handed back to gate.
  py::class_<bounds::accuracy_contract>(m, "_Contract");
  py::class_<fast::kernel_domain>(m, "_KernelDomain");
  py::class_<reports::gate_report>(m, "_GateBaseline");

  py::class_<gate_result>(m, "GateReport")
      .def_property_readonly("passed", [](const gate_result& g) { return g.report.passed; })
      .def("to_json", [](const gate_result& g) { return reports::json_text(reports::to_json(g.report)); })
      .def("render_terminal", [](const gate_result& g) { return reports::valid_utf8(reports::render_terminal(g.report)); })
      .def_property_readonly("mutants_not_applicable", [](const gate_result& g) {
        py::list out;
        for (const auto& [name, reason] : g.mutants_not_applicable) {
          py::dict d;
          d["name"] = name;
          d["reason"] = reason;
          out.append(d);
        }
        return out;
      })
      .def_property_readonly("skipped", [](const gate_result& g) {
        py::list out;
        // The properties skipped on the kernel's own dtypes, with the reason (the report lists
        // the other dtypes as skipped too, as the CLI's does).
        for (const auto& k : g.report.kernels)
          for (const auto& p : k.properties) {
            const std::string dtype = p.name.substr(p.name.find('/') + 1);
            if (p.status != "skipped" || std::find(g.dtypes.begin(), g.dtypes.end(), dtype) == g.dtypes.end())
              continue;
            py::dict d;
            d["property"] = p.name.substr(0, p.name.find('/'));
            d["dtype"] = dtype;
            d["reason"] = p.detail.substr(p.detail.find(": ") + 2);
            out.append(d);
          }
        return out;
      })
      .def("write", [](const gate_result& g, py::handle json, py::handle markdown, py::handle html, py::handle junit) {
        reports::write_report_files(g.report, report_paths_argument(json, markdown, html, junit, {}));
      }, py::arg("json") = py::none(), py::arg("markdown") = py::none(), py::arg("html") = py::none(),
         py::arg("junit") = py::none());

  m.def("gate_arguments", &gate_arguments, py::arg("kernel"), py::arg("dtypes"), py::arg("pairings"),
        py::arg("profile"), py::arg("seed"), py::arg("mutants"), py::arg("tensor_type"), py::arg("name"),
        py::arg("timeout") = py::none(), py::arg("contract") = py::none(), py::arg("max_position") = py::none(),
        py::arg("positions") = "all", py::arg("properties") = py::none(), py::arg("serves") = py::none(),
        py::arg("baseline") = py::none(), py::arg("shard") = py::none());

  // Called with gate_arguments' values (ropecheck.gate): `ropecheck gate`'s run
  // (core::run_gate_outcome) with the Python kernel as its one in-process kernel.
  m.def("gate", [](py::object adapter, const std::string& replay, const py::dict& a) {
    std::vector<dtype> dtypes;
    for (const auto& d : a["dtypes"].cast<std::vector<std::string>>()) {
      const auto t = parse_dtype(d);
      if (!t) throw std::logic_error("gate: dtypes not checked by gate_arguments");
      dtypes.push_back(*t);
    }
    std::vector<pairing> pairings;
    for (const auto& p : a["pairings"].cast<std::vector<std::string>>())
      pairings.push_back(p == "half" ? pairing::half_split : pairing::adjacent);
    const bool streams = a["streams"].cast<bool>();
    auto kernel = std::make_unique<python::python_kernel>(
        std::move(adapter), a["name"].cast<std::string>(), a["description"].cast<std::string>(), std::move(dtypes),
        std::move(pairings), a["serves"].cast<fast::kernel_domain>(), streams);
    // An empty dtype or pairing list is refused by the run (core/gate_run.cpp): a pass over nothing.
    const bounds::accuracy_contract& contract = a["contract"].cast<const bounds::accuracy_contract&>();
    const py::object baseline = a["baseline"];
    core::gate_options o;
    o.in_process_kernels = {&kernel->info()};
    o.profile = a["profile"].cast<std::string>();
    o.seed = a["seed"].cast<std::uint64_t>();
    o.contract = contract.name;
    o.contract_value = &contract;
    o.max_position = a["max_position"].cast<std::int64_t>();
    o.positions = a["positions"].cast<std::string>();
    o.properties = a["properties"].cast<std::vector<std::string>>();
    o.mutants = a["mutants"].cast<bool>();
    std::tie(o.shard_index, o.shard_count) = a["shard"].cast<std::pair<int, int>>();
    o.baseline_report = baseline.is_none() ? nullptr : &baseline.cast<const reports::gate_report&>();
    o.baseline_name = a["baseline_name"].cast<std::string>();
    o.in_process_skipped = skipped_for_python(streams);
    o.in_process_replay = replay;
    o.before_check = [k = kernel.get()](std::string_view check) {
      k->set_check(check);
      k->stop_if_raised();
      check_signals();
    };
    gate_result result;
    result.dtypes = a["dtypes"].cast<std::vector<std::string>>();
    try {
      py::gil_scoped_release release;
      core::gate_run_outcome r = core::run_gate_outcome(o);
      result.report = std::move(r.report);
      result.mutants_not_applicable = std::move(r.mutants_not_applicable);
    } catch (const python::python_kernel::kernel_raised&) {
      kernel->rethrow_pending();
    }
    kernel->rethrow_pending();  // raised during the last check
    return result;
  });

  m.def("kernel_property_names", [] {
    std::vector<std::string> names;
    for (auto n : properties::kernel_property_names()) names.emplace_back(n);
    return names;
  });
  m.def("default_seed", [] { return properties::default_seed; });
}
