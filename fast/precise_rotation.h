// precise_rotation: the one-rounding kernels (`precise_simd`, `precise_scalar`).
// Each output is the rotation done in float64 and rounded ONCE to its storage dtype, so
//   |y − y_exact| ≤ ½·ulp(y_exact) + 2^-40·A·‖(x_a, x_b)‖      (docs/error-bounds.md §18)
// with y_exact the exact rotation by the exact angle m·θ_j (θ_j the double the kernel got) times
// the attention factor A. Internal to fast/.
//
// Operations per (position m, pair j) — the same in the portable and the Highway paths, so both
// give the same bits (constants: cos_sin_polynomial.h, shared with fast/cos_sin.h):
//   hi = fl(m·θ_j), lo = fma(m, θ_j, −hi)          two-product: hi + lo = m·θ_j exactly
//   t = fl(hi·2/π) + 1.5·2^52, k = t − 1.5·2^52     k = nearest(hi·2/π), quadrant = bits(t) & 3
//   r = fl(fma(−k, π/2_lo, fl(fma(−k, π/2_hi, hi)))) + lo, rounded   (Cody–Waite with FMA)
//   (sin r, cos r) by the Taylor polynomials of cos_sin_polynomial.h, quadrant applied
//   c = fl(cos·A), s = fl(sin·A)                    (s negated for the inverse: exact)
// and per output, with a, b the stored inputs (exact in double):
//   y_a = fl(fma(a, c, −fl(b·s))),  y_b = fl(fma(b, c, fl(a·s)))   in float64
//   stored = round_once(y) to float32 / float16 / bfloat16 / fp8 (store_rounded_once below)
//   with an fp8 output scale σ ≠ 1: y <- fl(y / σ) in float64 first (exact for a power-of-two
//   σ; else 2^-53 relative, which the §18 slack absorbs), then the one rounding to storage
// Why not fast/cos_sin.h's rows: they are rounded to float32 (a second rounding of 2^-25
// relative before the rotation, which alone breaks the ½-ulp bound); its double stage is not
// exposed, so the same operation list is written here, in double, on the same constants.
// The reduction is exact enough only for |m·θ_j| < 2^45 (cos_sin_polynomial.h); calls beyond
// are refused (status out_of_range) rather than computed less precisely.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fast/rotation.h"
#include "numeric/dtype.h"
#include "numeric/fp8.h"

namespace ropecheck::fast::detail {

// |m·θ_j| at or beyond this is refused by the precise kernels (the reduction's exact range).
inline constexpr double precise_angle_limit = 0x1p45;

// Rows of double cos/sin: row i (at rows + i·2·pairs) holds c_0..c_{pairs−1} then
// s_0..s_{pairs−1} for positions[i], both × attention_factor (operation list above).
void fill_precise_cos_sin_rows(const std::int64_t* positions, std::int64_t count,
                               const double* theta, std::int64_t pairs, double attention_factor,
                               double* rows);  // Highway, runtime dispatch
void fill_precise_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                        const double* theta, std::int64_t pairs,
                                        double attention_factor, double* rows);

// The rotation loops: chunk.precise_rows[t] are token t's double rows (cos_sin_rows unused).
void rotate_chunk_precise_scalar(const rotation_chunk& chunk);
void rotate_chunk_precise_simd(const rotation_chunk& chunk);  // AVX2/AVX-512, runtime dispatch

// Round to odd from double to float: truncate toward zero, then set the last bit if anything
// was dropped. Rounding that float to nearest-even in any format of p ≤ 22 significant bits
// (float16 p = 11, bfloat16 p = 8, fp8 p ≤ 4) gives exactly the nearest-even rounding of the
// double: one rounding (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008, Thm. 1: odd
// rounding with ≥ p + 2 bits, then nearest). float32's own grid is ≥ 2^13 finer than
// float16's subnormals and 2^16 finer than bfloat16's, so subnormal outputs are covered too.
// NaN stays NaN (the payload gains its last bit); beyond FLT_MAX gives FLT_MAX with the odd
// bit, which every narrower format rounds to its infinity as the double would.
inline float round_to_odd_float(double y) {
  const float nearest = static_cast<float>(y);
  if (static_cast<double>(nearest) == y) return nearest;
  auto bits = std::bit_cast<std::uint32_t>(nearest);
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(y)) --bits;  // one step toward zero
  return std::bit_cast<float>(bits | 1u);
}

// The one rounding of a precise output to its storage dtype: float32 by nearest-even from the
// double; fp8 straight from the double by numeric/fp8.h's saturating encoder (nearest-even,
// |y| beyond max stores ±max: the stored value approximates clamp(y_exact, ±max),
// docs/error-bounds.md §18); float16/bfloat16 by round-to-odd float32 then the dtype's own
// nearest-even store (rotation.h's store_element). The SIMD path rounds fp8 through the
// round-to-odd float32 too (same bits, by the theorem above, saturation included: max is on
// the fp8 grid and both roundings are monotone).
inline void store_rounded_once(dtype storage, std::byte* row, std::int64_t i, double y) {
  if (storage == dtype::float32) {
    store_element(storage, row, i, static_cast<float>(y));
  } else if (is_float8(storage)) {
    reinterpret_cast<std::uint8_t*>(row)[i] = double_to_float8_bits(storage, y);
  } else {
    store_element(storage, row, i, round_to_odd_float(y));
  }
}

// Pairs [first_pair, pairs) of one row from the token's double rows: the scalar loop, and the
// SIMD loops' tail.
inline void rotate_row_precise(const rotation_chunk& chunk, const double* cos_sin,
                               const std::byte* in, std::byte* out, std::int64_t first_pair) {
  const std::int64_t pairs = chunk.pairs;
  for (std::int64_t j = first_pair; j < pairs; ++j) {
    const auto [ia, ib] = pair_of(chunk.pair, 2 * pairs, j);
    const double a = load_element(chunk.storage, in, ia);
    const double b = load_element(chunk.storage, in, ib);
    const double c = cos_sin[j];
    const double s = chunk.inverse ? -cos_sin[pairs + j] : cos_sin[pairs + j];
    const double bs = b * s;
    const double as = a * s;
    const double scale = chunk.output_scale;  // y / 1 is y bit for bit
    store_rounded_once(chunk.storage, out, ia, std::fma(a, c, -bs) / scale);
    store_rounded_once(chunk.storage, out, ib, std::fma(b, c, as) / scale);
  }
}

}  // namespace ropecheck::fast::detail
