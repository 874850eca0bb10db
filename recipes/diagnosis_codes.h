// diagnosis_codes: the one list of the audit's diagnosis codes — the JSON `diagnosis[].code` of
// an audit report (docs/report-schema.md) — with what each means and where it comes from:
//   - a recipe stage (recipe_catalog.h): the error a low-precision choice at that stage makes,
//     found by the recipe search (audit/recipe_search.h) and bounded in docs/error-bounds.md §17;
//   - a bug model: a structural defect the audit recognises by recomputing the reference the way
//     the bug would (audit/detector_catalog.h), which mutants (mutants/mutant_registry.cpp)
//     reproduce and the gate kills;
//   - the residue: what remains after every cause (output_rounding, unexplained);
//   - a finding about the data, which does not by itself change the verdict's cause.
// The recipe search takes its stages' meanings from here; detectors, mutants and docs/cli.md
// spell the same codes, and cli/diagnosis_catalog_test holds them to this list: a code outside
// it, a recipe stage never searched, a bug model with no detector or no mutant, or a code the
// docs do not explain fails there.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

namespace ropecheck::recipes {

enum class diagnosis_kind { recipe_stage, bug_model, residue, data };

struct diagnosis_code {
  std::string_view code;
  diagnosis_kind kind;
  std::string_view meaning;  // one phrase, as docs and messages use it
};

inline const std::vector<diagnosis_code>& diagnosis_codes() {
  using enum diagnosis_kind;
  static const std::vector<diagnosis_code> all = {
      // Recipe stages, in the order the search tries them.
      {"position_precision", recipe_stage, "positions rounded to a low-precision type before m·θ_j"},
      {"angle_precision", recipe_stage, "the angle m·θ_j rounded to float32 before cos/sin"},
      {"low_precision_inverse_frequencies", recipe_stage,
       "inverse frequencies θ_j computed or kept in low precision"},
      {"low_precision_trig_cache", recipe_stage, "cos/sin evaluated or kept in low precision"},
      {"low_precision_arithmetic", recipe_stage, "products and sums of the rotation rounded to a 16-bit type"},
      {"output_store", recipe_stage, "outputs stored by truncation or with subnormal results flushed to zero"},
      // Bug models.
      {"wrong_pairing", bug_model, "the other pairing (adjacent vs half-split), or the half-split partner over the whole head"},
      {"position_offset", bug_model, "positions shifted by a constant, or ignored"},
      {"magnitude_scale", bug_model, "every output scaled by one factor"},
      {"stream_layout", bug_model, "another position-stream layout: sections or streams in another order"},
      {"output_scale_misapplied", bug_model, "the fp8 output scale multiplied instead of divided, or ignored"},
      {"inverse_rotation", bug_model, "the rotation by −m·θ_j (sin's sign flipped)"},
      {"cos_sin_swapped", bug_model, "cos and sin exchanged"},
      {"positions_wrapped", bug_model, "positions wrapped by a cache of 2^k rows"},
      {"frequency_mismatch", bug_model, "other inverse frequencies: another exponent convention"},
      {"config_mismatch", bug_model, "a config field read wrong: the base, the scaling or one of its parameters, "
                                     "the attention factor, or another layer type's setup"},
      {"pair_tail_wrong", bug_model, "a tail of pairs left wrong (a vector loop's remainder)"},
      {"trig_range_reduction", bug_model, "sin/cos range-reduced by a float32 2π"},
      // The residue.
      {"output_rounding", residue, "the one rounding of the output to its dtype, after every other cause"},
      {"unexplained", residue, "error that no recipe stage and no bug model reproduces"},
      // Findings about the data.
      {"non_finite", data, "NaN or infinity in the input or the output"},
      {"passthrough_modified", data, "coordinates past rotary_dim that the kernel should have copied were changed"},
      {"position_outside_context", data, "negative positions, or positions at or past max_position_embeddings"},
  };
  return all;
}

// The entry for `code`, or nullptr.
inline const diagnosis_code* find_diagnosis_code(std::string_view code) {
  const auto& all = diagnosis_codes();
  const auto it = std::find_if(all.begin(), all.end(), [&](const diagnosis_code& d) { return d.code == code; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace ropecheck::recipes
