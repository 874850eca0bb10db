// The SIMD cos/sin rows (cos_sin.h): Google Highway, compiled once per x86 target with FMA
// (AVX2: 4 doubles per vector, AVX-512: 8) and picked at run time by HWY_DYNAMIC_DISPATCH, the
// same dispatch as the rotation (rotation_simd.cpp), so `use_simd_target` caps both. Lanes run
// exactly the per-value operations of cos_sin.h (the portable path in cos_sin.cpp performs
// the same ones with scalars), so every target and the portable path agree bit for bit. Other
// targets (no FMA) run the portable path, because an unfused multiply-add changes the bits.

// SSSE3/SSE4 lack FMA; leave them out so the baseline (EMU128) takes the portable path.
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/cos_sin_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <cstddef>
#include <cstdint>
#include <limits>

#include <hwy/highway.h>

#include "fast/cos_sin.h"
#include "fast/cos_sin_polynomial.h"

HWY_BEFORE_NAMESPACE();
namespace ropecheck::fast::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR

void fill_cos_sin_rows_simd(const std::int64_t* positions, std::int64_t count, const double* theta,
                            std::int64_t pairs, double attention_factor, float* rows) {
  fill_cos_sin_rows_portable(positions, count, theta, pairs, attention_factor, rows);
}

#else

namespace k = cos_sin_constants;
using double_tag = hn::ScalableTag<double>;
using float_tag = hn::Rebind<float, double_tag>;  // half-width: one float per double lane
using vec = hn::Vec<double_tag>;

// c[0]·z^(n−1) + … + c[n−1] by Horner's rule, one FMA per step (as the portable path).
template <std::size_t n>
HWY_INLINE vec horner(double_tag d, vec z, const double (&c)[n]) {
  vec acc = hn::Set(d, c[0]);
  for (std::size_t i = 1; i < n; ++i) acc = hn::MulAdd(z, acc, hn::Set(d, c[i]));
  return acc;
}

// The operations of cos_sin.h on lanes of (m, θ): cos and sin times the factor, rounded once
// to float (DemoteTo: vcvtpd2ps with the default MXCSR rounding, nearest even). Lanes whose
// |m·θ| is at or beyond reduction_limit, or not finite, get NaN (cos_sin.h: kernel angles
// never get there, rope_angles.h).
HWY_INLINE void cos_sin_lanes(double_tag d, vec m, vec theta, vec factor, hn::Vec<float_tag>& cos_out,
                              hn::Vec<float_tag>& sin_out) {
  const float_tag df;
  const hn::RebindToSigned<double_tag> di;
  const vec product = hn::Mul(m, theta);
  const vec lo = hn::MulSub(m, theta, product);  // fma(m, θ, −hi)
  // Out-of-range lanes continue as NaN, which every step below propagates to cos and sin.
  const auto in_range = hn::Lt(hn::Abs(product), hn::Set(d, k::reduction_limit));  // false for NaN
  const vec hi = hn::IfThenElse(in_range, product, hn::Set(d, std::numeric_limits<double>::quiet_NaN()));

  // Quarter-turn reduction (cos_sin_polynomial.h), Round = nearest, ties to even.
  const vec quarter_turns = hn::Round(hn::Mul(hi, hn::Set(d, k::two_over_pi)));
  vec r = hn::NegMulAdd(quarter_turns, hn::Set(d, k::half_pi_hi), hi);
  r = hn::NegMulAdd(quarter_turns, hn::Set(d, k::half_pi_lo), r);
  r = hn::Add(r, lo);
  const vec z = hn::Mul(r, r);
  const vec sin_r = hn::MulAdd(hn::Mul(r, z), horner(d, z, k::sin_horner), r);
  const vec cos_r = hn::MulAdd(z, horner(d, z, k::cos_horner), hn::Set(d, 1.0));

  // The quadrant q = k mod 4 from the integer bits of k + 1.5·2^52 (|k| < 2^51): q odd swaps
  // sin and cos; sin is negated when bit 1 of q is set, cos when bit 1 of q + 1 is.
  const auto q = hn::BitCast(di, hn::Add(quarter_turns, hn::Set(d, 0x1.8p52)));
  const vec swap = hn::BitCast(d, hn::ShiftLeft<63>(q));
  const auto sign_bit = hn::Set(di, std::numeric_limits<std::int64_t>::min());
  const vec sin_sign = hn::BitCast(d, hn::And(hn::ShiftLeft<62>(q), sign_bit));
  const vec cos_sign = hn::BitCast(d, hn::And(hn::ShiftLeft<62>(hn::Add(q, hn::Set(di, 1))), sign_bit));
  const vec sin_x = hn::Xor(hn::IfNegativeThenElse(swap, cos_r, sin_r), sin_sign);
  const vec cos_x = hn::Xor(hn::IfNegativeThenElse(swap, sin_r, cos_r), cos_sign);
  cos_out = hn::DemoteTo(df, hn::Mul(cos_x, factor));
  sin_out = hn::DemoteTo(df, hn::Mul(sin_x, factor));
}

void fill_cos_sin_rows_simd(const std::int64_t* positions, std::int64_t count, const double* theta,
                            std::int64_t pairs, double attention_factor, float* rows) {
  const double_tag d;
  const float_tag df;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const vec factor = hn::Set(d, attention_factor);
  hn::Vec<float_tag> c, s;
  if (pairs >= lanes) {
    // Row by row, a vector of pairs at a time; the last group overlaps the previous one
    // instead of running a scalar tail (recomputing a value gives the same bits).
    for (std::int64_t i = 0; i < count; ++i) {
      const vec m = hn::Set(d, static_cast<double>(positions[i]));
      float* row = rows + i * 2 * pairs;
      for (std::int64_t j = 0; j < pairs; j += lanes) {
        const std::int64_t at = j + lanes <= pairs ? j : pairs - lanes;
        cos_sin_lanes(d, m, hn::LoadU(d, theta + at), factor, c, s);
        hn::StoreU(c, df, row + at);
        hn::StoreU(s, df, row + pairs + at);
      }
    }
    return;
  }
  // Short rows: walk the flattened (row, column) values so all lanes do work.
  const std::int64_t total = count * pairs;
  std::int64_t row = 0;
  std::int64_t column = 0;
  HWY_ALIGN double m[hn::MaxLanes(d)];
  HWY_ALIGN double th[hn::MaxLanes(d)];
  HWY_ALIGN float cf[hn::MaxLanes(d)];
  HWY_ALIGN float sf[hn::MaxLanes(d)];
  float* cos_at[hn::MaxLanes(d)];
  for (std::int64_t first = 0; first < total; first += lanes) {
    const std::int64_t used = total - first < lanes ? total - first : lanes;
    for (std::int64_t l = 0; l < lanes; ++l) {
      m[l] = 0;
      th[l] = 0;
    }
    for (std::int64_t l = 0; l < used; ++l) {
      m[l] = static_cast<double>(positions[row]);
      th[l] = theta[column];
      cos_at[l] = rows + row * 2 * pairs + column;
      if (++column == pairs) {
        column = 0;
        ++row;
      }
    }
    cos_sin_lanes(d, hn::Load(d, m), hn::Load(d, th), factor, c, s);
    hn::Store(c, df, cf);
    hn::Store(s, df, sf);
    for (std::int64_t l = 0; l < used; ++l) {
      cos_at[l][0] = cf[l];
      cos_at[l][pairs] = sf[l];
    }
  }
}

#endif  // vector targets

}  // namespace HWY_NAMESPACE
}  // namespace ropecheck::fast::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ropecheck::fast {

namespace detail {
HWY_EXPORT(fill_cos_sin_rows_simd);

void fill_cos_sin_rows_dispatched(const std::int64_t* positions, std::int64_t count,
                                  const double* theta, std::int64_t pairs,
                                  double attention_factor, float* rows) {
  HWY_DYNAMIC_DISPATCH(fill_cos_sin_rows_simd)(positions, count, theta, pairs, attention_factor,
                                               rows);
}
}  // namespace detail

void fill_cos_sin_rows(const std::int64_t* positions, std::int64_t count, const double* theta,
                       std::int64_t pairs, double attention_factor, float* rows) {
  detail::fill_cos_sin_rows_dispatched(positions, count, theta, pairs, attention_factor, rows);
}

}  // namespace ropecheck::fast
#endif
