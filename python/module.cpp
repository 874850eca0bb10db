// _ropecheck: the compiled half of the `ropecheck` Python package (pybind11). Every figure it
// returns comes from the same C++ the CLI runs — the 256-bit reference over a tensor
// (cli/reference_tensor.h), the audit (audit/audit.h, through cli/audit_input.h), the gate's
// properties and fixtures on one kernel (cli/gate_kernel.h) and the report renderers
// (reports/). ropecheck/__init__.py is the public API; this module is its engine. The GIL is
// released around every long C++ computation.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "cli/audit_input.h"
#include "cli/gate_kernel.h"
#include "cli/reference_tensor.h"
#include "cli/rope_inputs.h"
#include "cli/flag_values.h"
#include "io/io_error.h"
#include "mutants/mutant_registry.h"
#include "properties/kernel_properties.h"
#include "python/arrays.h"
#include "python/python_kernel.h"
#include "reports/audit_report.h"
#include "reports/gate_report.h"
#include "spec/spec_reader.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "unknown"
#endif

namespace py = pybind11;
using namespace ropecheck;

namespace {

// Array names in messages and in the report's input fields (the CLI puts file names there).
cli::rope_input_paths input_names(const rope_spec& spec, const py::dict& labels) {
  cli::rope_input_paths names;
  names.spec = labels.contains("spec") ? labels["spec"].cast<std::string>() : spec.source;
  names.x = labels.contains("x") ? labels["x"].cast<std::string>() : "x";
  names.positions = labels.contains("positions") ? labels["positions"].cast<std::string>() : "positions";
  return names;
}

reports::report_paths paths_of(const std::optional<std::string>& json, const std::optional<std::string>& markdown,
                               const std::optional<std::string>& html, const std::optional<std::string>& junit) {
  return {json.value_or(""), markdown.value_or(""), html.value_or(""), junit.value_or("")};
}

// Properties whose contract is about memory a Python kernel never sees: the bridge
// (python_kernel.h) hands it fresh packed arrays and writes its results itself.
std::map<std::string, std::string> skipped_for_python() {
  return {
      {"in_place_equals_out_of_place",
       "a Python kernel returns new arrays; the bridge writes them in place or out of place itself"},
      {"layout_invariant",
       "the bridge gathers strided views into packed [tokens, heads, head_dim] arrays before the call"},
      {"rejects_invalid_calls",
       "the bridge refuses invalid calls before Python sees them; a Python kernel returns no status"},
      // Position streams (M-RoPE, 2-D vision): the bridge passes one position per token.
      {"streams_equal_one_d", "the bridge passes one position stream per token"},
      {"streams_within_bound_of_reference", "the bridge passes one position stream per token"},
      {"streams_norm_preserved", "the bridge passes one position stream per token"},
      {"streams_layout_invariance", "the bridge passes one position stream per token"},
      // The fp8 output scale: the bridge passes none and refuses a call with one.
      {"output_scale_within_bound", "the bridge passes no fp8 output scale (calls with one are refused)"},
  };
}

struct gate_result {
  reports::gate_report report;
  std::vector<properties::property_result> skipped;
  std::vector<std::pair<std::string, std::string>> mutants_not_applicable;  // name, why
};

// gate(mutants=True): every mutant of mutants/ faces the checks the Python kernel faced (its
// dtypes and pairings, the same skipped properties); like `ropecheck gate --mutants`, the gate
// passes only if each is killed. A mutant is not applicable when its defect is in the frequency
// code (a Python kernel is handed θ_j computed by ropecheck) or when only a skipped property
// kills it (its bug is in memory handling the bridge does for a Python kernel) — run to find
// out, never assumed.
void gate_mutants(const fast::kernel_info& python_kernel, const cli::gate_kernel_settings& settings,
                  gate_result& result) {
  for (const mutants::mutant& m : mutants::mutant_registry()) {
    const std::string name(m.kernel.name);
    if (m.frequencies != nullptr) {
      result.mutants_not_applicable.emplace_back(
          name, "its defect is in the frequency code; a Python kernel is handed θ_j (params[\"inv_freq\"])");
      continue;
    }
    std::vector<dtype> dtypes;
    for (dtype t : python_kernel.dtypes)
      if (m.kernel.supports(t)) dtypes.push_back(t);
    std::vector<pairing> pairings;
    for (pairing p : python_kernel.pairings)
      if (m.kernel.supports(p)) pairings.push_back(p);
    if (dtypes.empty() || pairings.empty()) {
      result.mutants_not_applicable.emplace_back(name, "no dtype or pairing in common with the kernel");
      continue;
    }
    fast::kernel_info restricted = m.kernel;
    restricted.dtypes = dtypes;
    restricted.pairings = pairings;
    cli::gate_kernel_settings mutant_settings = settings;
    mutant_settings.skipped.clear();  // run them too, to tell "not applicable" from "survived"
    mutant_settings.between_checks = {};
    mutant_settings.replay_command = "ropecheck gate --mutant " + name;
    const cli::gate_kernel_result r = cli::gate_kernel(restricted, mutant_settings);
    reports::mutant_outcome outcome{name, std::string(m.imitates), false, {}, {}};
    bool killed_by_skipped = false;
    for (const auto& p : r.outcome.properties) {
      if (p.passed) continue;
      const std::string property = p.name.substr(0, p.name.find('/'));
      if (settings.skipped.count(property) != 0) {
        killed_by_skipped = true;
        continue;
      }
      outcome.killed_by.push_back(p.name);
      outcome.counterexamples.push_back(p.counterexample);
    }
    for (const auto& f : r.fixtures) {
      if (f.passed) continue;
      std::string fixture = f.name;
      if (const auto at = fixture.find("/" + name + "/"); at != std::string::npos)
        fixture.erase(at, name.size() + 1);
      outcome.killed_by.push_back(fixture);
      outcome.counterexamples.push_back(f.detail);
    }
    outcome.killed = !outcome.killed_by.empty();
    if (!outcome.killed && killed_by_skipped) {
      result.mutants_not_applicable.emplace_back(
          name, "only properties a Python kernel is not held to kill it (the bridge does what it gets wrong)");
      continue;
    }
    result.report.passed = result.report.passed && outcome.killed;
    result.report.mutants.push_back(std::move(outcome));
  }
}

}  // namespace

PYBIND11_MODULE(_ropecheck, m) {
  m.doc() = "ropecheck's C++ core (use the `ropecheck` package, not this module)";
  m.attr("__version__") = ROPECHECK_VERSION;
  // Bad input is a ValueError whose message names the input, the field and the value.
  py::register_exception<io_error>(m, "InputError", PyExc_ValueError);
  py::register_exception<spec_error>(m, "SpecError", PyExc_ValueError);
  py::register_exception<bad_input>(m, "FlagError", PyExc_ValueError);

  py::class_<rope_spec>(m, "Spec")
      .def_readonly("head_dim", &rope_spec::head_dim)
      .def_readonly("rotary_dim", &rope_spec::rotary_dim)
      .def_readonly("base", &rope_spec::base)
      .def_readonly("source", &rope_spec::source)
      .def_property_readonly("pairing", [](const rope_spec& s) { return std::string(to_string(s.pair)); })
      .def_property_readonly("scaling", [](const rope_spec& s) { return std::string(to_string(type_of(s.scaling))); })
      // The layers the config says apply no RoPE (Llama 4 NoPE, Cohere2 full attention; rope_spec.h),
      // and the sentence that says how; the layer chosen with the spec's "layer" key, or None.
      .def_property_readonly("layers_without_rope", [](const rope_spec& s) { return s.without_rope.indices; })
      .def_property_readonly("layers_without_rope_rule", [](const rope_spec& s) { return describe(s.without_rope); })
      .def_readonly("layer", &rope_spec::layer)
      .def("__repr__", [](const rope_spec& s) {
        return fmt::format("Spec(head_dim={}, rotary_dim={}, base={}, pairing='{}', scaling='{}', source='{}'{})",
                           s.head_dim, s.rotary_dim, s.base, to_string(s.pair), to_string(type_of(s.scaling)), s.source,
                           s.without_rope.any() ? fmt::format(", {}", describe(s.without_rope)) : "");
      });
  m.def("spec_from_json", [](const std::string& text, const std::string& source) {
    return parse_spec(nlohmann::json::parse(text), source);
  }, py::arg("text"), py::arg("source"));
  m.def("spec_from_file", [](const std::string& path) { return read_spec(path); }, py::arg("path"));

  m.def("reference", [](const rope_spec& spec, const py::array& x, const std::string& x_dtype,
                        const py::array& positions, const std::string& positions_dtype,
                        const std::string& form, const std::string& out_dtype, double output_scale) {
    const float scale = cli::output_scale_value("output_scale", output_scale);
    const auto names = input_names(spec, py::dict());
    const auto out = parse_dtype(out_dtype);
    if (!out) throw std::invalid_argument(fmt::format("out_dtype: '{}' is not float64 or float32", out_dtype));
    tensor xt = python::tensor_from_array(x, x_dtype, "x");
    const tensor pt = python::tensor_from_array(positions, positions_dtype, "positions");
    tensor y;
    {
      py::gil_scoped_release release;
      const cli::rope_inputs in = cli::make_rope_inputs(spec, std::move(xt), pt, names);
      y = cli::reference_tensor(in, names.x, form, *out, scale);
    }
    return python::array_from_tensor(y);
  });

  py::class_<reports::audit_report>(m, "AuditReport")
      .def_readonly("passed", &reports::audit_report::passed)
      .def("to_json", [](const reports::audit_report& r) { return reports::to_json(r).dump(2) + "\n"; })
      .def("render_terminal", [](const reports::audit_report& r) { return reports::render_terminal(r); })
      .def("write", [](const reports::audit_report& r, const std::optional<std::string>& json,
                       const std::optional<std::string>& markdown, const std::optional<std::string>& html,
                       const std::optional<std::string>& junit) {
        reports::write_report_files(r, paths_of(json, markdown, html, junit));
      }, py::arg("json") = py::none(), py::arg("markdown") = py::none(), py::arg("html") = py::none(),
         py::arg("junit") = py::none());

  m.def("audit", [](const rope_spec& spec, const py::array& x, const std::string& x_dtype,
                    const py::array& positions, const std::string& positions_dtype,
                    const py::array& y, const std::string& y_dtype, std::optional<std::string> judged,
                    std::optional<double> tolerance, const py::dict& labels, double output_scale) {
    const float scale = cli::output_scale_value("output_scale", output_scale);
    const auto names = input_names(spec, labels);
    const std::string y_name = labels.contains("y") ? labels["y"].cast<std::string>() : "y";
    std::optional<dtype> judged_type;
    if (judged) {
      judged_type = parse_dtype(*judged);
      if (!judged_type || !is_floating(*judged_type) || *judged_type == dtype::float64)
        throw std::invalid_argument(fmt::format(
            "dtype: '{}' is not float32, float16, bfloat16, float8_e4m3fn or float8_e5m2", *judged));
    }
    tensor xt = python::tensor_from_array(x, x_dtype, names.x);
    const tensor pt = python::tensor_from_array(positions, positions_dtype, names.positions);
    tensor yt = python::tensor_from_array(y, y_dtype, y_name);
    py::gil_scoped_release release;
    cli::rope_inputs in = cli::make_rope_inputs(spec, std::move(xt), pt, names);
    const audit::audit_input input =
        cli::make_audit_input(std::move(in), std::move(yt), names, y_name, judged_type, tolerance, scale);
    reports::audit_report report = audit::run_audit(input);
    report.tool_version = ROPECHECK_VERSION;
    return report;
  });

  py::class_<gate_result>(m, "GateReport")
      .def_property_readonly("passed", [](const gate_result& g) { return g.report.passed; })
      .def("to_json", [](const gate_result& g) { return reports::to_json(g.report).dump(2) + "\n"; })
      .def("render_terminal", [](const gate_result& g) { return reports::render_terminal(g.report); })
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
        for (const auto& s : g.skipped) {
          py::dict d;
          d["property"] = s.name;
          d["dtype"] = s.dtype;
          d["reason"] = s.detail.substr(s.detail.find(": ") + 2);
          out.append(d);
        }
        return out;
      })
      .def("write", [](const gate_result& g, const std::optional<std::string>& json,
                       const std::optional<std::string>& markdown, const std::optional<std::string>& html,
                       const std::optional<std::string>& junit) {
        reports::write_report_files(g.report, paths_of(json, markdown, html, junit));
      }, py::arg("json") = py::none(), py::arg("markdown") = py::none(), py::arg("html") = py::none(),
         py::arg("junit") = py::none());

  m.def("gate", [](py::object adapter, const std::string& name, const std::string& description,
                   const std::vector<std::string>& dtype_names, const std::vector<std::string>& pairing_names,
                   const std::string& profile, std::uint64_t seed, const std::string& replay,
                   bool with_mutants) {
    std::vector<dtype> dtypes;
    for (const auto& d : dtype_names) {
      const auto t = parse_dtype(d);
      if (!t || (*t != dtype::float32 && *t != dtype::float16 && *t != dtype::bfloat16 && !is_float8(*t)))
        throw std::invalid_argument(fmt::format(
            "dtypes: '{}' is not float32, float16, bfloat16, float8_e4m3fn or float8_e5m2", d));
      dtypes.push_back(*t);
    }
    std::vector<pairing> pairings;
    for (const auto& p : pairing_names) {
      if (p != "half" && p != "adjacent")
        throw std::invalid_argument(fmt::format("pairings: '{}' is not \"half\" or \"adjacent\"", p));
      pairings.push_back(p == "half" ? pairing::half_split : pairing::adjacent);
    }
    if (profile != "quick" && profile != "deep")
      throw std::invalid_argument(fmt::format("profile: '{}' is not \"quick\" or \"deep\"", profile));
    auto kernel = std::make_unique<python::python_kernel>(std::move(adapter), name, description,
                                                          std::move(dtypes), std::move(pairings));
    cli::gate_kernel_settings settings;
    settings.level = profile == "deep" ? properties::profile::deep : properties::profile::quick;
    settings.seed = seed;
    settings.replay_command = replay;
    settings.skipped = skipped_for_python();
    settings.between_checks = [k = kernel.get()] { k->stop_if_raised(); };
    gate_result result;
    result.report.tool_version = ROPECHECK_VERSION;
    result.report.profile = profile;
    result.report.seed = seed;
    try {
      py::gil_scoped_release release;
      cli::gate_kernel_result r = cli::gate_kernel(kernel->info(), settings);
      result.report.passed = r.outcome.passed;
      result.report.kernels.push_back(std::move(r.outcome));
      result.report.fixtures = std::move(r.fixtures);
      result.skipped = std::move(r.skipped);
      if (with_mutants) gate_mutants(kernel->info(), settings, result);
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
