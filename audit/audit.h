// audit: how accurate a third-party RoPE output is, from the tensors it produced, and why.
// Every output is compared with the double tier (reference/double_tier.h: cos/sin at 266 bits
// once per distinct (position, frequency), rotation in double) by the judging loop
// (judging_loop.h); the diagnosis (diagnosis.h) then recomputes a sample the way known bugs
// would (detector_catalog.h) and under every recipe of roundings (recipe.h, recipe_catalog.h),
// names the recipe that reproduces Y and attributes the error to its stages (forensics.h).
// run_audit is the in-process entry point (the CLI, the benchmarks and bindings call it); it
// parses nothing and prints nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bounds/accuracy_contracts.h"
#include "io/tensor.h"
#include "numeric/dtype.h"
#include "reports/audit_report.h"
#include "spec/rope_spec.h"

namespace ropecheck::audit {

struct audit_input {
  rope_spec spec;
  tensor x;                             // [rows, heads, head_dim] data (any leading shape)
  tensor y;                             // same shape: the audited output
  std::int64_t tokens_per_sequence = 0; // to report (batch, token) of a row
  std::int64_t heads = 0;
  std::vector<std::int64_t> positions;  // one per row (batch × tokens); stream 0 with streams
  // With the spec's stream layout (M-RoPE, 2-D vision): streams × rows, stream-major; the rows
  // are judged at these (positions above is its first stream, what reports show).
  std::vector<std::int64_t> stream_positions;
  dtype judged = dtype::float32;        // the output dtype y is judged as
  std::optional<double> tolerance_units;  // override: units of 2^-24 × pair norm
  // --contract: the recipe whose derived error is allowed on top of a correct kernel's bound
  // (bounds/accuracy_contracts.h, as the gate's); none: exact. Not with tolerance_units.
  std::optional<bounds::accuracy_contract> contract;
  // fp8 written with a per-call output scale σ (fast/rope_call.h): y holds round(y_exact / σ),
  // judged against sat(y_exact / σ) within bounds::scaled_output_bound's terms (§19).
  float output_scale = 1.0f;
  std::string spec_file, x_file, positions_file, y_file;  // for the report
  // Threads of the judging loop (judging_loop.h; 0: every core). The report is the same for any.
  int threads = 0;
  // A config with one RoPE setup per layer type (Gemma 3's sliding and full attention): the
  // setups of the other layer types, which the diagnosis tries as a config mistake
  // (config_neighbours.h). Empty otherwise.
  std::vector<rope_spec> other_layer_types;
};

// `progress(done, total)` is called now and then with rows done.
reports::audit_report run_audit(
    const audit_input& input,
    const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace ropecheck::audit
