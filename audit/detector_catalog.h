// detector_catalog: the bugs the audit recognises by recomputing the reference the way the bug
// would (other pairing, shifted positions, positions ignored, one scale factor, another
// position-stream layout, the fp8 output scale multiplied or ignored), as data: adding
// a detector is one entry here and its function in detectors.cpp. A detector returns a finding
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
};

std::optional<reports::finding> detect_wrong_pairing(const diagnosis_context&);
std::optional<reports::finding> detect_position_offset(const diagnosis_context&);
std::optional<reports::finding> detect_positions_ignored(const diagnosis_context&);
std::optional<reports::finding> detect_magnitude_scale(const diagnosis_context&);
std::optional<reports::finding> detect_stream_layout(const diagnosis_context&);
std::optional<reports::finding> detect_output_scale(const diagnosis_context&);

inline const std::vector<detector>& detectors() {
  static const std::vector<detector> all = {
      {"wrong_pairing", detect_wrong_pairing},
      {"position_offset", detect_position_offset},
      {"position_offset", detect_positions_ignored},
      {"magnitude_scale", detect_magnitude_scale},
      {"stream_layout", detect_stream_layout},  // position streams only
      {"output_scale_misapplied", detect_output_scale},  // fp8 with an output scale only
  };
  return all;
}

}  // namespace ropecheck::audit
