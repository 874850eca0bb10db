// error_bounds: the a-priori error bounds of the fast kernels, as formulas. Derived in
// docs/error-bounds.md from the operation list every kernel documents (fast/rotation.h,
// fast/cos_sin.h): cos/sin of m·θ_j computed in double and rounded once to float32, one rounded
// product, one FMA, one RNE store. The property suite and the CLI gate both call these and only
// these; a tolerance that is not here is not used.
//
// Notation (docs/error-bounds.md §1): u = 2^-24, r = ‖(x_a, x_b)‖ the INPUT pair's norm, m the
// position, θ_j the pair's inverse frequency as the kernel received it (the double nearest the
// real θ_j, scaled θ'_j under rope_scaling), y an output the kernel stored, A the attention
// factor (cos and sin both × A; 1 for plain RoPE), carried as an attention_scale (§16).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "numeric/dtype.h"
#include "numeric/ulp.h"
#include "bounds/double_tier_bound.h"

namespace ropecheck::bounds {

inline constexpr double float32_unit_roundoff = 0x1p-24;  // u

// §2. sup, over the rotation angle and the direction of (x_a, x_b), of the first-order error of
// ONE output, in units of u·r: cos/sin rounding (≤ u·2^⌊log₂|c|⌋ each) + the rounded product
// (≤ u·|x_b·s|) + the FMA (≤ u·|y|). The sup is attained as (x_a, x_b) → (0, 1), sin → 1⁻.
// This is the A = 1 value of attention_scale_for (§16), which the bounds below use.
inline constexpr double fused_output_coefficient = 2.5;

// §2, the same without FMA (a·c rounded too): 1 + √(3/2 + √2) = 2.70711…, rounded up. For
// reference only: every registered kernel fuses (fast/rotation.h) and the gate holds every
// kernel to the fused contract.
inline constexpr double unfused_output_coefficient = 2.7072;

// §3. sup of ‖(ŷ_a, ŷ_b) − (y_a, y_b)‖ in units of u·r: √(h(c)² + h(s)²) + |s| + 1 with
// h(v) = 2^⌊log₂|v|⌋, maximal at cos → ½⁺ (2.57313…), rounded up (attention_scale_for(1)).
inline constexpr double fused_pair_coefficient = 2.5732;

// §4. The double-precision cos/sin stage before the float32 rounding (fast/cos_sin.h): the
// quarter-turn reduction (≤ 2.4·2^-53 in r) and the polynomials (≤ 1.7·2^-53): ≤ 4.1·2^-53 per
// value, ≤ √2·5·2^-53 < 2^-50 for the pair as a vector; times r. No kernel angle reaches
// |hi| ≥ 2^45 (fast/cos_sin.h; such arguments give NaN). double_stage_truncation(), lo²/2 with
// |lo| ≤ |m|·θ_j·2^-53, the term a first-order lo correction would leave, is kept on top.
inline constexpr double cos_sin_double_stage = 0x1p-50;

// §4. Every second-order term (products of two u-sized relative errors, at most 4u² = 2^-46)
// and the ≤ 2^-52 relative error of evaluating a norm with hypot in double, with room to spare.
inline constexpr double higher_order_slack = 0x1p-44;

// §5. Gradual underflow: each float32 rounding may add an absolute error of half the smallest
// subnormal, 2^-150, which no relative term covers. Two roundings (product, FMA) per output.
inline constexpr double float32_underflow_per_output = 0x1p-149;

// §16. The float32 rounding error of a value w is at most u·2^e where 2^e is the largest power of
// two strictly below |w| (a power of two is stored exactly): the left-continuous step h⁻(w).
inline double power_of_two_below(double w) {
  if (w == 0) return 0;
  int e = 0;
  const double m = std::frexp(std::fabs(w), &e);  // |w| = m·2^e, m in [1/2, 1)
  return std::ldexp(1.0, m == 0.5 ? e - 2 : e - 1);
}
// Its right limit at w: 2^⌊log₂|w|⌋ (0 at 0).
inline double power_of_two_at_or_below(double w) {
  if (w == 0) return 0;
  int e = 0;
  std::frexp(std::fabs(w), &e);
  return std::ldexp(1.0, e - 1);
}

// §16. What an attention factor A changes in the bounds: every relative term is × A (cos, sin
// and the outputs are), and the cos/sin rounding coefficients of §2/§3 become sups over the
// angle of terms in h⁻(A·cos φ)/A and h⁻(A·sin φ)/A, which depend on where A·cos φ and
// A·sin φ fall between powers of two. At A = 1 they are fused_output_coefficient and
// fused_pair_coefficient; for any A they are < 3 and ≥ 2.
struct attention_scale {
  double factor = 1;               // A, as the kernel received it (the double nearest A)
  double output_coefficient = 0;   // §16: the §2 supremum at A, units of u·A·r
  double pair_coefficient = 0;     // §16: the §3 supremum at A, units of u·A·r
};

// §16. With g_S = h⁻(A·S)/A and g_C = h⁻(A·C)/A (C = √(1 − S²), S ∈ [0, 1]) the two suprema are
// those of √(g_C² + (g_S + S)²) + 1 and √(g_C² + g_S²) + S + 1. Between consecutive jumps of
// g_S or g_C both increase with S, so each sup is a left limit at a jump or at S = 1: at
// S = 2^k/A (g_S = 2^(k−1)/A there) and at C = 2^k/A (g_C = 2^k/A, its right limit in C).
// The other side of a candidate is computed with rounding; within 2^-48 of a jump it takes the
// upper step (sound, and exact unless A·S and A·C are both powers of two). Jumps at S or C
// below 2^-15 are skipped: they move neither sup by more than 2^-28 (docs/error-bounds.md
// §16), which higher_order_slack covers.
inline attention_scale attention_scale_for(double a) {
  attention_scale scale{a, 0, 0};
  auto consider = [&](double s, double g_s, double g_c) {
    scale.output_coefficient = std::max(scale.output_coefficient, std::hypot(g_c, g_s + s) + 1);
    scale.pair_coefficient = std::max(scale.pair_coefficient, std::hypot(g_c, g_s) + s + 1);
  };
  constexpr double hair = 1 + 0x1p-48;
  consider(1, power_of_two_below(a) / a, 0);  // S → 1⁻: A·S → A from below
  int top = 0;
  std::frexp(a, &top);  // a in [2^(top−1), 2^top)
  for (int k = top - 15; k <= top; ++k) {
    const double t = std::ldexp(1.0, k) / a;  // S or C at a jump
    if (!(t > 0 && t < 1)) continue;
    const double other = std::sqrt((1 - t) * (1 + t));
    // g_S jumps at S = t: its left limit is 2^(k−1)/A; C = other is generic.
    consider(t, std::ldexp(1.0, k - 1) / a, power_of_two_at_or_below(a * other * hair) / a);
    // g_C jumps at C = t: its right limit is 2^k/A = t; S = other is generic.
    consider(other, power_of_two_below(a * other * hair) / a, t);
  }
  return scale;
}

// §16. Ã (the double nearest A) and fl(C'·Ã) add ≤ 2·2^-53 relative per cos/sin value, ≤ 2^-51
// for the pair as a vector; nothing at A = 1, where both are exact.
inline double attention_factor_rounding(const attention_scale& a) { return a.factor == 1 ? 0 : 0x1p-51; }

// §4. Angle error of a θ_j rounded to double: |m·θ_j − m·θ̃_j| ≤ |m|·θ_j·2^-53 (θ_j < 2, so
// this is exact enough in double). A rotation by a perturbed angle moves the pair by r·|Δφ|.
inline double frequency_angle_error(std::int64_t position, double theta) {
  return std::fabs(static_cast<double>(position)) * theta * 0x1p-53;
}

// §4. cos(hi + lo) ≈ cos hi − lo·sin hi drops lo²/2 per value; √2 of that for the pair. The
// quarter-turn path adds lo into r instead; the term (< 2^-60 at |m| ≤ 2^24) is kept anyway.
inline double double_stage_truncation(std::int64_t position, double theta) {
  const double lo = frequency_angle_error(position, theta);  // |lo| ≤ ulp(hi)/2 ≤ |m|·θ_j·2^-53
  return lo * lo;
}

// working_output_bound's terms proportional to the exact output pair's norm A·r, per unit of
// it: one value per (m, θ_j, A), which bulk checkers compute once and reuse for every head.
inline double working_output_relative(std::int64_t position, double theta, const attention_scale& a) {
  return a.output_coefficient * float32_unit_roundoff + higher_order_slack + cos_sin_double_stage +
         attention_factor_rounding(a) + double_stage_truncation(position, theta) +
         frequency_angle_error(position, theta);
}

// Bound on |ŷ − y| for one output in float32 working precision, before the store.
inline double working_output_bound(double pair_norm, std::int64_t position, double theta,
                                   const attention_scale& a) {
  return working_output_relative(position, theta, a) * a.factor * pair_norm +
         float32_underflow_per_output;
}

// Bound on ‖ŷ − y‖₂ for the pair as a vector in float32 working precision, before the store.
inline double working_pair_bound(double pair_norm, std::int64_t position, double theta,
                                 const attention_scale& a) {
  const double relative = a.pair_coefficient * float32_unit_roundoff + higher_order_slack +
                          cos_sin_double_stage + attention_factor_rounding(a) +
                          double_stage_truncation(position, theta) +
                          frequency_angle_error(position, theta);
  return relative * a.factor * pair_norm + std::sqrt(2.0) * float32_underflow_per_output;
}

// §6. The store: float32 outputs are stored as computed; float16/bfloat16/fp8 outputs are rounded
// once (RNE) from the float32 value, which moves them by at most half the spacing of the format
// next to the stored value: ulp_of(y)/2 (numeric/ulp.h takes the ulp in y's binade, the larger
// of the two gaps next to y, and never below the smallest subnormal).
//
// fp8 stores also saturate (numeric/fp8.h): a float32 value beyond ±max is stored as ±max. The
// stored value therefore approximates sat(y) = clamp(y, −max, max), not y: sat is 1-Lipschitz,
// so |sat(ŷ) − sat(y)| ≤ |ŷ − y| ≤ the working bound, and RNE below max moves a value by at most
// half a spacing (max itself is representable, so nothing below it rounds past it). Hence
// |stored − sat(y_exact)| ≤ working bound + half spacing: the same bound, checked against the
// saturated exact value (saturated_exact). For float32/float16/bfloat16 sat is the identity
// (the properties keep their exact outputs in range; an overflow to ±inf is not a RoPE error).
// The largest magnitude a store of `storage` keeps: fp8's max, +inf for the others.
inline double saturation_limit(dtype storage) {
  return is_float8(storage) ? format_of(storage).max_finite() : HUGE_VAL;
}
inline double saturated_exact(dtype storage, double exact) {
  if (!std::isfinite(exact)) return exact;
  const double max = saturation_limit(storage);
  return std::clamp(exact, -max, max);
}

inline double store_half_spacing(dtype storage, double stored) {
  if (storage == dtype::float32 || !std::isfinite(stored)) return 0;
  return ulp_of(stored, storage) / 2;
}

// The kernel contract checked by the properties: |y − y_exact| for one stored output.
inline double output_bound(dtype storage, double pair_norm, std::int64_t position, double theta,
                           double stored, const attention_scale& a) {
  return working_output_bound(pair_norm, position, theta, a) + store_half_spacing(storage, stored);
}

// ‖(y_a, y_b) − (y_a, y_b)_exact‖₂ for one stored pair.
inline double pair_bound(dtype storage, double pair_norm, std::int64_t position, double theta,
                         double stored_a, double stored_b, const attention_scale& a) {
  return working_pair_bound(pair_norm, position, theta, a) +
         std::hypot(store_half_spacing(storage, stored_a), store_half_spacing(storage, stored_b));
}

// §19. A per-call output scale σ (fast/rope_call.h; fp8 storage only): the kernels store
// RNE(sat(fl(ŷ/σ))), ŷ the float32 result within the working bound W of y_exact, and a
// pipeline reads stored·σ back. Against sat(y_exact/σ), sat being 1-Lipschitz:
//   |stored − sat(y_exact/σ)| ≤ W/σ                        ŷ's own error, divided exactly
//                              + u·(A·r + W)/σ + 2^-150     fl(ŷ/σ): |ŷ| ≤ A·r + W; none for
//                                                           a power-of-two σ but underflow
//                              + ulp_of(stored)/2           the store (§6)
// The precise kernels divide in float64 before their one rounding (§18): within this too.
// σ = 1 gives output_bound exactly. One function: the properties and the audit call it.
inline bool is_power_of_two(double v) {
  int e = 0;
  return v > 0 && std::isfinite(v) && std::frexp(v, &e) == 0.5;
}
// fl(ŷ/σ)'s own error, |ŷ| ≤ `magnitude` (A·r + W): 0 at σ = 1, underflow only for 2^k.
inline double output_scale_division(double output_scale, double magnitude) {
  if (output_scale == 1) return 0;
  if (is_power_of_two(output_scale)) return 0x1p-150;
  return float32_unit_roundoff * magnitude / output_scale + 0x1p-150;
}
inline double scaled_output_bound(dtype storage, double pair_norm, std::int64_t position,
                                  double theta, double stored, double output_scale,
                                  const attention_scale& a) {
  const double working = working_output_bound(pair_norm, position, theta, a);
  return working / output_scale +
         output_scale_division(output_scale, a.factor * pair_norm + working) +
         store_half_spacing(storage, stored);
}

// The oracle's own error (bounds/double_tier_bound.h, docs/double-tier.md: 3·2^-53·A·r), added to
// every bound that is checked against the double tier instead of the exact value.
inline double oracle_output_bound(double pair_norm, const attention_scale& a) {
  return double_tier_pair_error_bound * a.factor * pair_norm;
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

// §9. Forward then inverse (the backward pass, A·R(−m)), exactly A²·x: |x̂ − A²·x| per
// coordinate ≤ A·‖ŷ − y‖ (the exact inverse moves the forward error by A, no more) + the
// inverse call's own output bound on the stored ŷ.
inline double round_trip_bound(double forward_pair_bound, double inverse_output_bound,
                               const attention_scale& a) {
  return a.factor * forward_pair_bound + inverse_output_bound;
}

// §10. Two kernels each within their bound of the exact value agree within the sum.
inline double agreement_bound(double first_output_bound, double second_output_bound) {
  return first_output_bound + second_output_bound;
}

// §18. The one-rounding kernels (fast/precise_rotation.h: rotation in float64, each output
// rounded once to its storage dtype): |y − y_exact| ≤ ½·ulp(y_exact) + 2^-40·A·r, for every
// position (the angle m·θ_j is taken exactly). ulp is numeric/ulp.h's, taken at the exact
// value; it never decreases with |v|, so any `exact_magnitude` ≥ |y_exact| (an oracle's value
// plus its own error) gives a sound bound. The 2^-40 slack is twice the float64 stage's error
// (≤ 12·2^-53·A·r, §18) — the second of the two roundings, absorbed — with room to spare; the
// absolute 2^-1000 covers float64's own underflow (values below 2^-1022), far below every
// storage dtype's smallest subnormal. fp8 (saturating) is held to the same bound around
// saturated_exact(storage, y_exact): RN(clamp(ŷ)) = clamp(RN(ŷ)), max being on the grid (§18).
inline constexpr double rounded_once_slack = 0x1p-40;
inline constexpr double rounded_once_underflow = 0x1p-1000;
inline double rounded_once_output_bound(dtype storage, double pair_norm, double exact_magnitude,
                                        const attention_scale& a) {
  return ulp_of(std::fabs(exact_magnitude), storage) / 2 +
         rounded_once_slack * a.factor * pair_norm + rounded_once_underflow;
}

// §11. The reference forms (266-bit MPFR) agree with one another, and satisfy every algebraic
// identity, to 2^-200 relative: the worst rounding they accumulate is ~2^-230 at |m| = 2^32.
inline constexpr int reference_tolerance_exponent = -200;

}  // namespace ropecheck::bounds
