// AVX2+FMA cos/sin rows: four values at a time, with exactly the per-value operations listed
// in cos_sin.h (the portable path in cos_sin.cpp performs the same ones with scalars, so the
// two agree bit for bit below the reduction limit). Lanes at or beyond the limit, which no
// kernel angle reaches, go to SLEEF's Sleef_sincosd4_u35avx2.
#include "fast/cos_sin_avx2.h"

#include <cstddef>
#include <immintrin.h>
#include <sleef.h>

#include "fast/cos_sin_polynomial.h"

namespace ropecheck::fast::detail {

namespace {

namespace k = cos_sin_constants;

// c[0]·z^(n−1) + … + c[n−1] by Horner's rule, one FMA per step.
template <std::size_t n>
inline __m256d horner(__m256d z, const double (&c)[n]) {
  __m256d acc = _mm256_set1_pd(c[0]);
  for (std::size_t i = 1; i < n; ++i) acc = _mm256_fmadd_pd(z, acc, _mm256_set1_pd(c[i]));
  return acc;
}

// (sin x, cos x) for x = hi + lo, |hi| < reduction_limit: quarter-turn reduction and the
// polynomials of cos_sin_polynomial.h, then the quadrant's swap and signs.
inline void sin_cos_reduced(__m256d hi, __m256d lo, __m256d& sin_out, __m256d& cos_out) {
  const __m256d quarter_turns = _mm256_round_pd(_mm256_mul_pd(hi, _mm256_set1_pd(k::two_over_pi)),
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(quarter_turns, _mm256_set1_pd(k::half_pi_hi), hi);
  r = _mm256_fnmadd_pd(quarter_turns, _mm256_set1_pd(k::half_pi_lo), r);
  r = _mm256_add_pd(r, lo);
  const __m256d z = _mm256_mul_pd(r, r);

  const __m256d sin_r = _mm256_fmadd_pd(_mm256_mul_pd(r, z), horner(z, k::sin_horner), r);
  const __m256d cos_r = _mm256_fmadd_pd(z, horner(z, k::cos_horner), _mm256_set1_pd(1.0));

  // The quadrant q = k mod 4 from the integer bits of k + 1.5·2^52 (|k| < 2^51):
  // q odd swaps sin and cos; sin is negated when bit 1 of q is set, cos when bit 1 of q + 1 is.
  const __m256i q = _mm256_castpd_si256(_mm256_add_pd(quarter_turns, _mm256_set1_pd(0x1.8p52)));
  const __m256i sign_bit = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ULL));
  const __m256d swap = _mm256_castsi256_pd(_mm256_slli_epi64(q, 63));
  const __m256d sin_sign = _mm256_castsi256_pd(_mm256_and_si256(_mm256_slli_epi64(q, 62), sign_bit));
  const __m256d cos_sign = _mm256_castsi256_pd(
      _mm256_and_si256(_mm256_slli_epi64(_mm256_add_epi64(q, _mm256_set1_epi64x(1)), 62), sign_bit));
  sin_out = _mm256_xor_pd(_mm256_blendv_pd(sin_r, cos_r, swap), sin_sign);
  cos_out = _mm256_xor_pd(_mm256_blendv_pd(cos_r, sin_r, swap), cos_sign);
}

// The operations of cos_sin.h on four (m, θ) lanes.
inline void cos_sin4(__m256d m, __m256d theta, __m256d factor, __m128& cos_out, __m128& sin_out) {
  const __m256d hi = _mm256_mul_pd(m, theta);
  const __m256d lo = _mm256_fmsub_pd(m, theta, hi);
  __m256d sin_x, cos_x;
  const __m256d magnitude = _mm256_andnot_pd(_mm256_set1_pd(-0.0), hi);
  if (_mm256_movemask_pd(_mm256_cmp_pd(magnitude, _mm256_set1_pd(k::reduction_limit), _CMP_LT_OQ)) == 0xF) {
    sin_cos_reduced(hi, lo, sin_x, cos_x);
  } else {
    const Sleef___m256d_2 sleef = Sleef_sincosd4_u35avx2(hi);  // x: sin, y: cos
    cos_x = _mm256_sub_pd(sleef.y, _mm256_mul_pd(lo, sleef.x));
    sin_x = _mm256_add_pd(sleef.x, _mm256_mul_pd(lo, sleef.y));
  }
  cos_out = _mm256_cvtpd_ps(_mm256_mul_pd(cos_x, factor));  // MXCSR default: round to nearest even
  sin_out = _mm256_cvtpd_ps(_mm256_mul_pd(sin_x, factor));
}

}  // namespace

void fill_cos_sin_rows_avx2(const std::int64_t* positions, std::int64_t count,
                            const double* theta, std::int64_t pairs, double attention_factor,
                            float* rows) {
  const __m256d factor = _mm256_set1_pd(attention_factor);
  if (pairs >= 4) {
    // Row by row, four pairs at a time; the last group overlaps the previous one instead of
    // running a scalar tail (recomputing a value gives the same bits).
    for (std::int64_t i = 0; i < count; ++i) {
      const __m256d m = _mm256_set1_pd(static_cast<double>(positions[i]));
      float* row = rows + i * 2 * pairs;
      for (std::int64_t j = 0; j < pairs; j += 4) {
        const std::int64_t at = j + 4 <= pairs ? j : pairs - 4;
        __m128 c, s;
        cos_sin4(m, _mm256_loadu_pd(theta + at), factor, c, s);
        _mm_storeu_ps(row + at, c);
        _mm_storeu_ps(row + pairs + at, s);
      }
    }
    return;
  }
  // Short rows: walk the flattened (row, column) values so all four lanes do work.
  const std::int64_t total = count * pairs;
  std::int64_t row = 0;
  std::int64_t column = 0;
  for (std::int64_t first = 0; first < total; first += 4) {
    alignas(32) double m[4] = {0, 0, 0, 0};
    alignas(32) double th[4] = {0, 0, 0, 0};
    float* cos_out[4] = {nullptr, nullptr, nullptr, nullptr};
    const std::int64_t lanes = total - first < 4 ? total - first : 4;
    for (std::int64_t k = 0; k < lanes; ++k) {
      m[k] = static_cast<double>(positions[row]);
      th[k] = theta[column];
      cos_out[k] = rows + row * 2 * pairs + column;
      if (++column == pairs) {
        column = 0;
        ++row;
      }
    }
    alignas(16) float cf[4];
    alignas(16) float sf[4];
    __m128 c, s;
    cos_sin4(_mm256_load_pd(m), _mm256_load_pd(th), factor, c, s);
    _mm_store_ps(cf, c);
    _mm_store_ps(sf, s);
    for (std::int64_t k = 0; k < lanes; ++k) {
      cos_out[k][0] = cf[k];
      cos_out[k][pairs] = sf[k];
    }
  }
}

}  // namespace ropecheck::fast::detail
