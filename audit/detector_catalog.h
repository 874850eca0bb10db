// detector_catalog: the bugs the audit recognises by recomputing the reference the way the bug
// would (other pairing, shifted positions, positions ignored, one scale factor, another
// position-stream layout, the fp8 output scale multiplied or ignored, sin's sign flipped, cos and
// sin exchanged, positions wrapped by a short cache, other inverse frequencies — the exponent's
// convention —, a config field read wrong (config_neighbours.h: the base, the scaling and each
// of its parameters, the attention factor, the layer type's setup), a tail of pairs left wrong,
// the half-split partner taken over the whole head, and sin/cos range-reduced by a float32 2π),
// as data: adding a detector is one entry here and its function in detectors.cpp. A detector
// returns a finding
// (share = the fraction of sampled outputs the bug explains) only when the recomputation
// explains ≥ 99% of the sampled outputs within tolerance.
#pragma once

#include <optional>
#include <vector>

#include "audit/diagnosis_context.h"
#include "reports/audit_report.h"

namespace ropecheck::audit {

struct detector {
  const char* code;
  std::optional<reports::finding> (*detect)(const diagnosis_context&);
  // Also looked for on top of a low-precision recipe (diagnosis.cpp): the bugs real kernels
  // ship beside float32 angles or a 16-bit cache. (The others are wrong by far more than any
  // recipe's error, which a correct kernel's tolerance already shows.)
  bool under_recipes = false;
};

std::optional<reports::finding> detect_wrong_pairing(const diagnosis_context&);
std::optional<reports::finding> detect_position_offset(const diagnosis_context&);
std::optional<reports::finding> detect_positions_ignored(const diagnosis_context&);
std::optional<reports::finding> detect_magnitude_scale(const diagnosis_context&);
std::optional<reports::finding> detect_stream_layout(const diagnosis_context&);
std::optional<reports::finding> detect_output_scale(const diagnosis_context&);
std::optional<reports::finding> detect_inverse_rotation(const diagnosis_context&);
std::optional<reports::finding> detect_cos_sin_swapped(const diagnosis_context&);
std::optional<reports::finding> detect_positions_wrapped(const diagnosis_context&);
std::optional<reports::finding> detect_frequency_mismatch(const diagnosis_context&);
std::optional<reports::finding> detect_config_mismatch(const diagnosis_context&);
std::optional<reports::finding> detect_pair_tail(const diagnosis_context&);
std::optional<reports::finding> detect_partner_over_head_dim(const diagnosis_context&);
std::optional<reports::finding> detect_trig_range_reduction(const diagnosis_context&);

inline const std::vector<detector>& detectors() {
  static const std::vector<detector> all = {
      {"wrong_pairing", detect_wrong_pairing, true},
      {"wrong_pairing", detect_partner_over_head_dim},  // half-split under a partial rotary only
      {"position_offset", detect_position_offset, true},
      {"position_offset", detect_positions_ignored},
      {"magnitude_scale", detect_magnitude_scale, true},
      // After magnitude_scale: an attention factor dropped or squared is a scale first (the
      // bug model its mutants declare), its config field named next.
      {"config_mismatch", detect_config_mismatch, true},
      {"stream_layout", detect_stream_layout, true},  // position streams only
      {"output_scale_misapplied", detect_output_scale},  // fp8 with an output scale only
      {"inverse_rotation", detect_inverse_rotation},
      {"cos_sin_swapped", detect_cos_sin_swapped},
      {"positions_wrapped", detect_positions_wrapped},
      {"frequency_mismatch", detect_frequency_mismatch},
      {"pair_tail_wrong", detect_pair_tail},
      {"trig_range_reduction", detect_trig_range_reduction},
  };
  return all;
}

}  // namespace ropecheck::audit
