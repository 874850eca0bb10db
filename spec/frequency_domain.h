// frequency_domain: the inverse frequencies a spec may define for ropecheck to judge RoPE by it.
// The fast kernels' cos/sin reduction (fast/rope_angles.h) and the derived error bounds
// (docs/error-bounds.md §1: |m·θ_j| <= 2^31·2^13) cover |θ_j| <= 2^13 radians per position;
// past it a kernel's tolerance is not derived, and a scaling factor near 0 (linear 1e-300) would
// make it infinite. Real models have θ_j <= 1 (θ_0 = base^0, scaled down).
#pragma once

namespace ropecheck {

inline constexpr double max_inverse_frequency = 0x1p13;

}  // namespace ropecheck
