// judged_case: one kernel call and the judgement of its outputs as a property saw them — the
// call's inputs (shape, θ_j and A exactly as the kernel got them, positions, Q, K) and, for each
// judged output, the oracle's value, the bound that applied and the kernel's output — so that the
// worst case and the shrunk counterexample of a failure can be run again exactly, outside the
// property (`gate --cases-out DIR` writes them, `ropecheck replay CASE.json` runs them). The
// error is |y − y_exact| (NaN: infinite), the form every accuracy property measures
// (kernel_properties_accuracy.cpp); the file format is in docs/report-schema.md, "Judged case
// files". Every number is a hex float, so that nothing is rounded on the way.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fast/kernels.h"
#include "numeric/dtype.h"
#include "spec/rope_spec.h"

namespace ropecheck::properties {

// |computed − exact|, a NaN output counted as an infinite error.
inline double output_error(double computed, double exact) {
  const double e = std::fabs(computed - exact);
  return std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
}

struct judged_output {
  bool key = false;  // K (else Q)
  std::int64_t token = 0;
  int head = 0;
  int index = 0;     // coordinate within the head
  int pair = 0;      // j
  // −1: the measure is the output y[index] itself; else the pair's norm ‖(y[index], y[partner])‖
  // (norm_preserved), whose reference is A·‖(x_a, x_b)‖.
  int partner = -1;
  double reference = 0;  // the oracle's value (fp8: clamped to the format's range, as judged)
  double bound = 0;      // what the error was held to (oracle and contract terms included)
  double kernel = 0;     // the kernel's measure: its output, or its output pair's norm
  double error() const { return output_error(kernel, reference); }
  double over_bound() const { return error() / bound; }
};

struct judged_case {
  std::string property;  // filled by check_kernel_property
  dtype storage = dtype::float32;
  pairing pair = pairing::half_split;
  int head_dim = 2;
  int rotary_dim = 2;
  double base = 10000;
  std::string scaling;                 // the rope_scaling as text ("none", "yarn factor=…")
  std::vector<double> theta;           // θ_j as the kernel got them
  double attention_factor = 1;         // A as the kernel got it
  std::vector<std::int64_t> positions;
  int q_heads = 0;
  int k_heads = 0;
  std::vector<double> q;  // packed [tokens, q_heads, head_dim], exact in the storage dtype
  std::vector<double> k;  // packed [tokens, k_heads, head_dim]
  std::string bound_source;  // one line: which bound the outputs were held to
  std::vector<judged_output> outputs;
};

// The case as a JSON file's text ("role": "worst" or "counterexample").
std::string judged_case_json(const judged_case& c, const std::string& kernel, const std::string& role);

// Reads a judged case file's JSON (io/json_file.h read it); throws io_error naming `file` and
// the field. `kernel` receives the kernel the case names.
judged_case read_judged_case(const nlohmann::json& j, const std::string& file, std::string& kernel);

// The kernel's measures for the case's judged outputs, in their order: the call made again as
// the property made it (the same buffers' layout, angles prepared for the same positions).
// Throws std::runtime_error when the kernel refuses the call.
std::vector<double> rerun_judged_case(const fast::kernel_info& kernel, const judged_case& c);

}  // namespace ropecheck::properties
