// call_checks: every reason a rope_call is refused, checked before any byte is touched, so an
// invalid call returns a status instead of reading or writing out of bounds. Internal.
#pragma once

#include "fast/rope_call.h"
#include "fast/status.h"

namespace ropecheck::fast::detail {

// Structural checks that hold for every kernel: sizes, pointers, alignment, aliasing.
status check_call(const rope_call& call);

bool is_in_place(const rope_tensor& t);

// True when two rows of the lattice offset + dt·token_stride + dh·head_stride (dt in
// [dt_lo, dt_hi], dh in [dh_lo, dh_hi], (dt, dh) != (0, 0) when exclude_origin) start less
// than row_length apart, i.e. overlap. Exact, O(min(#dt, #dh)). Exposed for tests.
bool lattice_rows_overlap(std::int64_t offset, std::int64_t dt_lo, std::int64_t dt_hi,
                          std::int64_t token_stride, std::int64_t dh_lo, std::int64_t dh_hi,
                          std::int64_t head_stride, std::int64_t row_length,
                          bool exclude_origin);

}  // namespace ropecheck::fast::detail
