// error_bounds: the a-priori error bounds of the fast kernels, as formulas. Derived in
// docs/error-bounds.md from the operation list every kernel documents (fast/rotation.h,
// fast/cos_sin.h): cos/sin of m·θ_j computed in double and rounded once to float32, one rounded
// product, one FMA, one RNE store. The property suite and the CLI gate both call these and only
// these; a tolerance that is not here is not used.
//
// Notation (docs/error-bounds.md §1): u = 2^-24, r = ‖(x_a, x_b)‖ the INPUT pair's norm, m the
// position, θ_j the pair's inverse frequency as the kernel received it (the double nearest the
// real θ_j), y an output the kernel stored.
#pragma once

#include <cmath>
#include <cstdint>

#include "numeric/dtype.h"
#include "numeric/ulp.h"
#include "reference/double_tier.h"

namespace ropecheck::properties::bounds {

inline constexpr double float32_unit_roundoff = 0x1p-24;  // u

// §2. sup, over the rotation angle and the direction of (x_a, x_b), of the first-order error of
// ONE output, in units of u·r: cos/sin rounding (≤ u·2^⌊log₂|c|⌋ each) + the rounded product
// (≤ u·|x_b·s|) + the FMA (≤ u·|y|). The sup is attained as (x_a, x_b) → (0, 1), sin → 1⁻.
inline constexpr double fused_output_coefficient = 2.5;

// §2, the same without FMA (a·c rounded too): 1 + √(3/2 + √2) = 2.70711…, rounded up. For
// reference only: every registered kernel fuses (fast/rotation.h) and the gate holds every
// kernel to the fused contract.
inline constexpr double unfused_output_coefficient = 2.7072;

// §3. sup of ‖(ŷ_a, ŷ_b) − (y_a, y_b)‖ in units of u·r: √(h(c)² + h(s)²) + |s| + 1 with
// h(v) = 2^⌊log₂|v|⌋, maximal at cos → ½⁺ (2.57313…), rounded up.
inline constexpr double fused_pair_coefficient = 2.5732;

// §4. The double-precision cos/sin stage before the float32 rounding (fast/cos_sin.h): the
// quarter-turn reduction (≤ 2.4·2^-53 in r) and the polynomials (≤ 1.7·2^-53), or for
// |hi| ≥ 2^45 SLEEF's sincos_u35 (≤ 3.5 ulp) and its first-order correction for lo (≤ 1.5 ulp):
// ≤ 5·2^-53 per value, ≤ √2·5·2^-53 < 2^-50 for the pair as a vector; times r. The fallback's
// truncation, lo²/2 with |lo| ≤ |m|·θ_j·2^-53, is added by double_stage_truncation().
inline constexpr double cos_sin_double_stage = 0x1p-50;

// §4. Every second-order term (products of two u-sized relative errors, at most 4u² = 2^-46)
// and the ≤ 2^-52 relative error of evaluating a norm with hypot in double, with room to spare.
inline constexpr double higher_order_slack = 0x1p-44;

// §5. Gradual underflow: each float32 rounding may add an absolute error of half the smallest
// subnormal, 2^-150, which no relative term covers. Two roundings (product, FMA) per output.
inline constexpr double float32_underflow_per_output = 0x1p-149;

// §4. Angle error of a θ_j rounded to double: |m·θ_j − m·θ̃_j| ≤ |m|·θ_j·2^-53 (θ_j < 2, so
// this is exact enough in double). A rotation by a perturbed angle moves the pair by r·|Δφ|.
inline double frequency_angle_error(std::int64_t position, double theta) {
  return std::fabs(static_cast<double>(position)) * theta * 0x1p-53;
}

// §4. cos(hi + lo) ≈ cos hi − lo·sin hi drops lo²/2 per value; √2 of that for the pair.
inline double double_stage_truncation(std::int64_t position, double theta) {
  const double lo = frequency_angle_error(position, theta);  // |lo| ≤ ulp(hi)/2 ≤ |m|·θ_j·2^-53
  return lo * lo;
}

// The part of working_output_bound proportional to the pair norm: one value per (m, θ_j), which
// bulk checkers compute once and reuse for every head.
inline double working_output_relative(std::int64_t position, double theta) {
  return fused_output_coefficient * float32_unit_roundoff + higher_order_slack +
         cos_sin_double_stage + double_stage_truncation(position, theta) +
         frequency_angle_error(position, theta);
}

// Bound on |ŷ − y| for one output in float32 working precision, before the store.
inline double working_output_bound(double pair_norm, std::int64_t position, double theta) {
  return working_output_relative(position, theta) * pair_norm + float32_underflow_per_output;
}

// Bound on ‖ŷ − y‖₂ for the pair as a vector in float32 working precision, before the store.
inline double working_pair_bound(double pair_norm, std::int64_t position, double theta) {
  const double relative = fused_pair_coefficient * float32_unit_roundoff + higher_order_slack +
                          cos_sin_double_stage + double_stage_truncation(position, theta) +
                          frequency_angle_error(position, theta);
  return relative * pair_norm + std::sqrt(2.0) * float32_underflow_per_output;
}

// §6. The store: float32 outputs are stored as computed; float16/bfloat16 outputs are rounded
// once (RNE) from the float32 value, which moves them by at most half the spacing of the format
// next to the stored value: ulp_of(y)/2 (numeric/ulp.h takes the ulp in y's binade, the larger
// of the two gaps next to y, and never below the smallest subnormal).
inline double store_half_spacing(dtype storage, double stored) {
  if (storage == dtype::float32 || !std::isfinite(stored)) return 0;
  return ulp_of(stored, storage) / 2;
}

// The kernel contract checked by the properties: |y − y_exact| for one stored output.
inline double output_bound(dtype storage, double pair_norm, std::int64_t position, double theta,
                           double stored) {
  return working_output_bound(pair_norm, position, theta) + store_half_spacing(storage, stored);
}

// ‖(y_a, y_b) − (y_a, y_b)_exact‖₂ for one stored pair.
inline double pair_bound(dtype storage, double pair_norm, std::int64_t position, double theta,
                         double stored_a, double stored_b) {
  return working_pair_bound(pair_norm, position, theta) +
         std::hypot(store_half_spacing(storage, stored_a), store_half_spacing(storage, stored_b));
}

// The oracle's own error (reference/double_tier.h, docs/double-tier.md), added to every bound
// that is checked against the double tier instead of the exact value.
inline double oracle_output_bound(double pair_norm) {
  return reference::double_tier_pair_error_bound * pair_norm;
}

// The target fast/ documents (fast/rotation.h, fast/accuracy_test.cpp): float32 outputs within
// 2.5·2^-24·r of exact for |m| ≤ 2^24 and bases 1e4…1e7; float16/bfloat16 one RNE rounding of
// such a value. §7 explains why the derived bound above exceeds it by ≤ 1.3 % at m = 2^24.
inline constexpr double documented_target_coefficient = 2.5;
inline double documented_target(dtype storage, double pair_norm, double stored) {
  return documented_target_coefficient * float32_unit_roundoff * pair_norm +
         store_half_spacing(storage, stored);
}

// §8. Summing n products of floats in double (each product exact: 24 + 24 ≤ 53 bits) in any
// order: |error| ≤ (n − 1)·2^-53·Σ|products| (1 + O(2^-53)); the slack covers the O term.
inline double double_sum_error(int terms, double sum_of_magnitudes) {
  return terms <= 1 ? 0.0 : (terms - 1) * 0x1p-53 * (1 + 0x1p-40) * sum_of_magnitudes;
}

// §8. One pair's share of |⟨ŷ_q, ŷ_k⟩ − ⟨y_q, y_k⟩|, from the pairs' vector error bounds β and
// their exact norms (a rotation preserves them): β_q·r_k + r_q·β_k + β_q·β_k.
inline double score_pair_error(double q_bound, double q_norm, double k_bound, double k_norm) {
  return q_bound * k_norm + q_norm * k_bound + q_bound * k_bound;
}

// §9. Forward then inverse: |x̂ − x| per coordinate ≤ ‖ŷ − y‖ (an exact rotation by −m moves no
// error) + the inverse call's own output bound on the stored ŷ.
inline double round_trip_bound(double forward_pair_bound, double inverse_output_bound) {
  return forward_pair_bound + inverse_output_bound;
}

// §10. Two kernels each within their bound of the exact value agree within the sum.
inline double agreement_bound(double first_output_bound, double second_output_bound) {
  return first_output_bound + second_output_bound;
}

// §11. The reference forms (266-bit MPFR) agree with one another, and satisfy every algebraic
// identity, to 2^-200 relative: the worst rounding they accumulate is ~2^-230 at |m| = 2^32.
inline constexpr int reference_tolerance_exponent = -200;

}  // namespace ropecheck::properties::bounds
