// audit_input: the checked spec, X, positions and Y of one audit, assembled into
// audit::audit_input — the one path from inputs to the audit for `ropecheck audit` (files) and
// `ropecheck.audit` (python/, arrays in memory).
#pragma once

#include <optional>
#include <string>

#include "audit/audit.h"
#include "core/rope_inputs.h"
#include "io/tensor.h"
#include "numeric/dtype.h"

namespace ropecheck::core {

// Throws io_error when Y's shape is not X's or Y is not floating, std::invalid_argument for a
// tolerance that is not a positive number of units. `paths` and `y_name` name the inputs in
// messages and in the report; `judged` defaults to Y's dtype.
audit::audit_input make_audit_input(rope_inputs in, tensor y, const rope_input_paths& paths,
                                    const std::string& y_name, std::optional<dtype> judged,
                                    std::optional<double> tolerance, float output_scale = 1.0f);

}  // namespace ropecheck::core
