// cos_sin_table: the double tier's table — A·cos(m·θ_j) and A·sin(m·θ_j), each correctly
// rounded to double, for every distinct position m and frequency j — built with far fewer
// 266-bit MPFR sin/cos evaluations than entries.
//
// Positions are split as m = h·2^k + b (0 <= b < 2^k) and the angle addition formula
//   A·e^{i·m·θ} = (A·e^{i·h·2^k·θ}) · e^{i·b·θ}
// combines two anchors, each an MPFR value rounded to double-double, in double-double
// arithmetic (reference/double_double.h). The product is within 16·2^-106·A of the exact value
// (docs/double-tier.md, "Building the table"); an entry is taken from it only when every real
// within 2^-100·A of it rounds to the same double, so it IS the correctly rounded value, the
// double a direct 266-bit evaluation gives. Entries that fail that test (values within 2^-100·A
// of a rounding boundary, exact zeros) are computed directly with MPFR. k is chosen to
// minimise the number of anchors; sparse positions (k = 0) are all computed directly.
#pragma once

#include <cstdint>
#include <span>

#include "reference/double_tier.h"
#include "reference/real.h"

namespace ropecheck::reference {

// `positions` sorted and distinct; `out` holds positions.size() × theta.size() (cos, sin)
// pairs, entry (r, j) at out[(r·theta.size() + j)·2]. Uses up to `threads` threads.
cos_sin_table_stats fill_cos_sin_table(std::span<const std::int64_t> positions,
                                       std::span<const mp_real> theta, const mp_real& factor,
                                       std::span<double> out, int threads);

}  // namespace ropecheck::reference
