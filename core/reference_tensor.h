// reference_tensor: the 256-bit reference applied to every head vector of X at its row's
// position, each output rounded once from 256 bits to the output dtype — what
// `ropecheck reference` writes and `ropecheck.reference` (python/) returns.
#pragma once

#include <string_view>

#include "core/rope_inputs.h"
#include "io/tensor.h"
#include "numeric/dtype.h"

namespace ropecheck::core {

// `form`: elementwise | complex | matrix (reference/rope_forms.h); `out`: float64 | float32.
// Throws std::invalid_argument naming the form or dtype, io_error for a non-finite X element.
// `output_scale`: each output y/σ (reference/rope_tensor.h), what `--output-scale` asks for.
tensor reference_tensor(const rope_inputs& in, std::string_view x_name, std::string_view form,
                        dtype out, double output_scale = 1);

}  // namespace ropecheck::core
