// rope_tensor: the 256-bit reference applied to a whole [rows, heads, head_dim] tensor, each head
// vector at its row's position, each output rounded once from 266 bits to the output type
// (float32 never goes through double: a double rounding could differ by one ulp). This is what
// `ropecheck reference` writes and what the Python module's `reference()` returns.
// Rows are split over the machine's cores; the forms themselves are the independent ones of
// rope_forms.h.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck::reference {

enum class reference_form { elementwise, complex, matrix };
enum class reference_output { float64, float32 };

struct tensor_shape {
  std::int64_t rows = 0;   // one position per row
  std::int64_t heads = 0;  // head vectors per row
};

// x: rows × heads × spec.head_dim values, row-major; positions: one per row, or with a stream
// layout (M-RoPE, 2-D vision) streams × rows, stream-major, rotated by the position-stream
// form (rope_forms.h rope_streams) whatever `form` says. Length-dependent
// scalings (dynamic NTK, LongRoPE) see max position + 1 unless the spec gives a sequence_length,
// as the double tier and the kernels do. Returns values exactly representable in `output`.
// `output_scale` σ (finite, > 0): each output is y/σ, divided at 266 bits before its one
// rounding — the value an fp8 store written with that scale approximates (fast/rope_call.h).
std::vector<double> rope_tensor(std::span<const double> x, tensor_shape shape,
                                std::span<const std::int64_t> positions, const rope_spec& spec,
                                reference_form form, reference_output output,
                                double output_scale = 1);

}  // namespace ropecheck::reference
