// The double tier's error bound (docs/double-tier.md): cos and sin of m·θ_j correctly rounded to
// double (× A, the attention factor, at 266 bits, then rounded once), the rotation done in
// double. Every rotated output is within 3·2^-53·A·‖(x_a, x_b)‖ of exact. reference/ implements
// the tier; the audit, the properties and the fixtures add this to the bounds they check
// against it, so it lives here, where none of them has to include the others.
#pragma once

namespace ropecheck::bounds {

// Bound on |y_double − y_exact| / (A·‖(x_a, x_b)‖) for every rotated output of the double tier.
inline constexpr double double_tier_pair_error_bound = 0x3p-53;  // 3·2^-53

}  // namespace ropecheck::bounds
