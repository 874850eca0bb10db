// audit: how accurate a third-party RoPE output is, from the tensors it produced. Every output
// is compared with the double tier (reference/double_tier.h: cos/sin at 266 bits once per
// distinct (position, frequency), rotation in double), and the error is explained by findings
// that the data support — each one tested by recomputing the reference the way the suspected
// bug would have (other pairing, shifted positions, a scale factor, cos/sin rounded to 16 bits)
// or by the shape of the error profile (growth in proportion to position).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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
  std::vector<std::int64_t> positions;  // one per row (batch × tokens)
  dtype judged = dtype::float32;        // the output dtype y is judged as
  std::optional<double> tolerance_units;  // override: units of 2^-24 × pair norm
  std::string spec_file, x_file, positions_file, y_file;  // for the report
};

// `progress(done, total)` is called now and then with rows done.
reports::audit_report run_audit(
    const audit_input& input,
    const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace ropecheck::audit
