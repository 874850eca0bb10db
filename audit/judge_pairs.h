// judge_pairs: the audit's per-output loop over one head vector, every rotated output against
// the double tier's, written so that it vectorizes (no branch, no call, no libm: the tolerance's
// position/frequency part comes in per row, the oracle's is the constant 3·2^-53). Internal to
// audit/ (judging_loop.cpp).
#pragma once

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "audit/tolerance.h"
#include "numeric/ulp.h"
#include "spec/pair_index.h"

namespace ropecheck::audit {

// std::max by value: the reference std::max returns would make the vectorizer load through a
// pointer chosen at run time, which it cannot do unconditionally.
inline double larger(double a, double b) { return a < b ? b : a; }
inline double smaller(double a, double b) { return b < a ? b : a; }

// keep ? v : +0, as a bitwise AND. With a ?: the compiler computes v only when it is kept —
// inside a branch, and the vectorizer may not execute a floating-point operation (which could
// trap) that the program would have skipped.
inline double kept_or_zero(bool keep, double v) {
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) & (std::uint64_t{0} - keep));
}

// The 16-bit (or float64) store's half spacing next to an output; a non-finite one (whose
// comparison is discarded) is replaced by 0 so that nothing non-finite reaches ulp_of.
inline double spacing(dtype judged, bool finite, double stored) {
  return bounds::store_half_spacing(judged, finite ? stored : 0.0);
}

// ‖(x_a, x_b)‖. Squares of float32/16 inputs are exact in double and cannot overflow, so one
// rounded sum and a rounded sqrt (≤ 1.5·2^-53 relative, inside error_bounds.h's slack for the
// norm) replace hypot; float64 inputs keep hypot's overflow and underflow protection.
template <bool x_is_float64>
double pair_norm(double a, double b) {
  if constexpr (x_is_float64) {
    return std::hypot(a, b);
  } else {
    return std::sqrt(a * a + b * b);
  }
}

// One head vector of x and y, as doubles.
struct vector_view {
  std::vector<double> x, y;
};

// What judge_pairs needs besides the arrays.
struct pair_constants {
  std::int64_t pairs;
  dtype judged;
  double floor;       // tolerance_rule::floor()
  double attention;   // A
  double worst_rel;   // the worst output so far, as |y − y_exact| / ‖pair‖ (units·2^-24, exact)
  // fp8 stores saturate: y is judged against clamp(y_exact, ±max) (bounds::saturated_exact);
  // +inf (no clamp) for the other dtypes.
  double saturation = HUGE_VAL;
  // The fp8 output scale σ (tolerance_rule::allowed's σ terms, in the same order). At σ = 1
  // every σ term is an exact no-op (x/1, + 0), so unscaled audits keep their bits.
  double output_scale = 1;
  double division_unit = 0;   // u if σ is not a power of two, else 0
  double division_floor = 0;  // 2^-150 if σ ≠ 1
  double reference_division = 0;  // 2^-53 if σ ≠ 1
};
struct pair_counts {
  std::int64_t beyond = 0, missing = 0, ulp_outputs = 0, above_worst = 0;
  // Outputs whose allowed error is not below twice the format's largest magnitude (or is not
  // finite): no stored value could fail them (judgeable.h refuses such an audit).
  std::int64_t vacuous = 0;
};

// One head vector's rotated outputs against the double tier's `ref`: counts what is beyond
// tolerance or not finite, and updates per-frequency running maxima and ULP sums. The loop
// vectorizes: no branch, no call, no reduction but integer sums — every floating-point maximum
// and sum is kept per frequency and folded by the caller — and the arrays do not alias
// (restrict). The norm-relative error is divided out once per pair: division and rounding are
// monotone, so max(e_a, e_b)/‖pair‖ is the larger output's error exactly. Built twice, picked
// at load time: for AVX2 (where the 64-bit masks and counters vectorize) and for baseline
// x86-64. Neither contracts to FMA, so both round every operation the same way. `scaled`:
// false when σ = 1 (every call but fp8 with --output-scale), so that the five divisions by σ
// per pair, each an exact no-op then, are folded away at compile time (division was the
// loop's most expensive operation); the bits are those of the σ = 1 division.
template <pairing pair, bool x_is_float64, bool judged_float32, bool scaled = true>
[[gnu::target_clones("avx2", "default")]] pair_counts judge_pairs(const pair_constants& k, const double* __restrict x,
                        const double* __restrict y, const double* __restrict ref,
                        const double* __restrict coefficient, double* __restrict max_rel,
                        double* __restrict abs_max, double* __restrict ulp_sum,
                        double* __restrict ulp_max, std::int64_t* __restrict freq_count) {
  // Known at compile time for float32, so the ULP distance needs no branch on the format.
  const float_format judged_format = judged_float32 ? float32_format : format_of(k.judged);
  const std::int64_t pairs = k.pairs;
  // 64-bit counters and flags, like the doubles: every lane of the vector loop has one width.
  std::int64_t beyond = 0, missing = 0, ulp_outputs = 0, above_worst = 0, vacuous = 0;
  const double span = 2 * k.saturation;  // +inf but for fp8
  const double output_scale = scaled ? k.output_scale : 1.0;
  for (std::int64_t j = 0; j < pairs; ++j) {
    const auto [a, b] = pair_of(pair, 2 * pairs, j);
    const double ya = y[a], yb = y[b];
    const double ra = larger(-k.saturation, smaller(ref[a] / output_scale, k.saturation));
    const double rb = larger(-k.saturation, smaller(ref[b] / output_scale, k.saturation));
    const double norm = pair_norm<x_is_float64>(x[a], x[b]);
    // A scaled rotation (attention factor A) scales the pair, and its error bound, by A.
    const double scaled_norm = k.attention * norm;
    // Non-finite outputs count as beyond tolerance and are not measured (run() counts outputs
    // per judged vector, so they are taken back here); they stand in as error 0, neutral for
    // every maximum.
    const bool finite_a = std::fabs(ya) <= DBL_MAX, finite_b = std::fabs(yb) <= DBL_MAX;
    const std::int64_t lost = std::int64_t{!finite_a} + std::int64_t{!finite_b};
    missing += lost;
    freq_count[j] -= lost;
    const double err_a = kept_or_zero(finite_a, std::fabs(ya - ra));
    const double err_b = kept_or_zero(finite_b, std::fabs(yb - rb));
    // tolerance_rule::allowed, term for term, with the pair's shared part computed once.
    const double working = coefficient[j] * scaled_norm + k.floor;
    const double shared = working / output_scale +
                          (k.division_unit * (scaled_norm + working) / output_scale + k.division_floor);
    const double oracle =
        (tolerance_rule::oracle_coefficient + k.reference_division) * scaled_norm / output_scale;
    const double allowed_a = (shared + (judged_float32 ? 0.0 : spacing(k.judged, finite_a, ya))) + oracle;
    const double allowed_b = (shared + (judged_float32 ? 0.0 : spacing(k.judged, finite_b, yb))) + oracle;
    // & rather than &&: every comparison is evaluated, so none needs a branch.
    beyond += lost + std::int64_t{finite_a & (err_a > allowed_a)} + std::int64_t{finite_b & (err_b > allowed_b)};
    vacuous += std::int64_t{!(allowed_a < span)} + std::int64_t{!(allowed_b < span)};
    const double err = larger(err_a, err_b);
    abs_max[j] = larger(abs_max[j], err);
    // err / ‖pair‖; for a zero pair err/0 is infinity if err > 0 and NaN (taken as 0) if not.
    // (in the unscaled output's units: err · σ)
    const double rel = larger(0.0, err * output_scale / norm);
    max_rel[j] = larger(max_rel[j], rel);
    above_worst |= std::int64_t{rel > k.worst_rel};
    // ULPs only where the output does not cancel: |y_exact| >= norm / 16 > 0, so the exact
    // value is not 0 and the distance is never a sentinel.
    const double cancel_below = norm / 16;
    const bool ulp_a = finite_a & (std::fabs(ra) >= cancel_below) & (norm > 0);
    const bool ulp_b = finite_b & (std::fabs(rb) >= cancel_below) & (norm > 0);
    const double u_a = kept_or_zero(ulp_a, ulp_distance_of_difference(err_a, ra, judged_format));
    const double u_b = kept_or_zero(ulp_b, ulp_distance_of_difference(err_b, rb, judged_format));
    ulp_sum[j] += u_a;
    ulp_sum[j] += u_b;
    ulp_max[j] = larger(ulp_max[j], larger(u_a, u_b));
    ulp_outputs += std::int64_t{ulp_a} + std::int64_t{ulp_b};
  }
  return {beyond, missing, ulp_outputs, above_worst, vacuous};
}

}  // namespace ropecheck::audit
