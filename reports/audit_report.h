// audit_report: the model of what `ropecheck audit` measured on a third-party RoPE output, and
// its renderings (terminal, Markdown, JSON, JUnit XML, HTML with inline SVG plots). The JSON
// schema is documented in docs/report-schema.md; `ropecheck report` reads it back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reports/gate_report.h"

namespace ropecheck::reports {

struct worst_element {
  std::int64_t batch = 0, token = 0, head = 0, dim = 0, position = 0;
  double value = 0;     // what the audited output holds
  double expected = 0;  // the reference (double tier)
  double error = 0;     // |value − expected|
  double allowed = 0;   // the tolerance applied to this very output, all terms summed
};

// The terms of the tolerance every output is judged by (a pass on tiny inputs
// is explained by the absolute term, which must be visible):
//   allowed = relative_units·2^-24·A‖pair‖ (+ the derived bound's angle terms)
//             + absolute + oracle_units·2^-24·A‖pair‖ (+ half the dtype's spacing at the output)
struct tolerance_terms {
  bool derived = true;               // the derived bound (bounds/error_bounds.h), not --tolerance
  double absolute = 0;               // per output: float32 underflow (2^-149), 0 with --tolerance
  double oracle_units = 0;           // the double tier's own error
  bool store_half_spacing = false;   // 16-bit judged dtypes: the final rounding
  // --contract: the recipe whose derived error widens the bound (empty: exact), and how
  // (bounds::contract_derivation).
  std::string contract;
  std::string contract_derivation;
};

// Errors in one position bucket ([2^k, 2^(k+1)) of |position|, or exactly 0) or frequency.
struct error_bucket {
  std::string label;             // "0", "[1, 2)", "[1024, 2048)", or the frequency index
  std::int64_t first = 0;        // smallest position (or frequency index) in the bucket
  std::int64_t last = 0;         // largest
  std::int64_t outputs = 0;      // outputs measured
  double max_units = 0;          // worst norm-relative pair error, units of 2^-24
};

struct finding {
  std::string code;     // stable: angle_precision, wrong_pairing, position_offset, ...
  std::string message;  // one sentence with the supporting figures
  double share = 0;     // the share of the error this cause explains, 0…1 (0: not an error share)
  std::string evidence; // the recomputation that supports it, with its figures
};

// The rounding pipeline that reproduces Y best (audit/recipe.h): one value per stage.
struct recipe_fit {
  bool fitted = false;                 // false: no rotated output was sampled
  std::string positions;               // exact, float32, float16, bfloat16
  std::string inverse_frequencies;     // "pow float64", "repeated_product float32", …
  std::string angle;                   // float64, float32
  std::string trig;                    // where cos/sin are computed: float64, float32
  std::string trig_cache;              // what they are kept in: float64, float32, float16, bfloat16
  std::string cache_rounding;          // nearest_even, truncation
  std::string attention_factor;        // in_cache, after_cache
  std::string arithmetic;              // float64, float32_fma, float32, float16, bfloat16
  std::string output_store;            // nearest_even, truncation, flush_subnormals
  std::string output;                  // the output dtype (one final rounding)
  double bit_exact = 0;                // fraction of sampled outputs the recipe matches bit for bit
  double residual_units = 0;           // mean |Y − Y_recipe| / pair norm, units of 2^-24
  // The stages that differ from a correct kernel's, as `gate --contract` spells them
  // ("angle=float32,trig=float32"; "exact" when none does).
  std::string as_contract;
};

// One stage's share of the error: positions, inverse_frequencies, angle, trig_cache,
// arithmetic, output_rounding (what a correct kernel of the output dtype has) or unexplained.
struct attribution_entry {
  std::string stage;
  double share = 0;   // 0…1; the entries sum to 1
  double units = 0;   // mean |error| it accounts for, per pair norm, units of 2^-24
};

struct audit_report {
  std::string tool_version;
  std::string spec, x, positions, y;  // input files
  std::string dtype;                  // the judged output dtype
  // fp8 with a per-call output scale σ (--output-scale, fast::rope_call::output_scale): Y was
  // judged as round(y_exact / σ). 1 when unscaled (and for every non-fp8 dtype).
  double output_scale = 1;
  bool passed = true;
  double tolerance_units = 0;         // the largest allowed error the verdict used, units of 2^-24
                                      // × pair norm (+ the output's half-spacing for 16-bit dtypes)
  tolerance_terms tolerance;          // every term of it
  std::int64_t outputs = 0;           // rotated outputs measured
  std::int64_t outputs_beyond_tolerance = 0;
  double max_abs_error = 0;
  double max_rel_pair_error = 0;      // max |y − y_exact| / ‖(x_a, x_b)‖
  double max_rel_pair_error_units = 0;        // … in units of 2^-24
  double max_rel_pair_error_dtype_units = 0;  // … in units of the dtype's unit roundoff
  double ulp_max = 0, ulp_mean = 0;   // over outputs that do not cancel
  std::int64_t ulp_outputs = 0;
  std::int64_t passthrough_checked = 0, passthrough_modified = 0;
  std::int64_t non_finite = 0;
  worst_element worst;
  std::vector<error_bucket> by_position;
  std::vector<error_bucket> by_frequency;
  // max_units[frequency index][position bucket], the buckets of by_position (heatmap).
  std::vector<std::vector<double>> by_frequency_and_position;
  std::vector<finding> diagnosis;      // ordered by share: the first is the main cause
  recipe_fit recipe;
  std::vector<attribution_entry> attribution;
};

nlohmann::json to_json(const audit_report& report);
// The recipe object of the audit's and identify's JSON: one field per stage of the catalog
// (recipes/recipe_catalog.h), the output dtype and the fit's figures; null when not fitted.
nlohmann::json to_json(const recipe_fit& recipe);
// "positions exact, inverse frequencies pow float64, …": the recipe for a reader.
std::string recipe_text(const recipe_fit& recipe);
audit_report audit_report_from_json(const nlohmann::json& j);  // std::invalid_argument

std::string render_terminal(const audit_report& report);
std::string render_markdown(const audit_report& report);
std::string render_junit(const audit_report& report);
std::string render_html(const audit_report& report);

void write_report_files(const audit_report& report, const report_paths& paths);

}  // namespace ropecheck::reports
