// AVX2+FMA cos/sin rows: four values at a time through SLEEF's Sleef_sincosd4_u35avx2 (≤ 3.5 ulp of double), with
// exactly the per-value operations listed in cos_sin.h (so it agrees with the portable path
// up to SLEEF's own last-bit differences in double, invisible after rounding to float).
#include "fast/cos_sin_avx2.h"

#include <immintrin.h>
#include <sleef.h>

#define SLEEF_SINCOS4 Sleef_sincosd4_u35avx2
namespace ropecheck::fast::detail {

namespace {

// The operations of cos_sin.h on four (m, θ) lanes.
inline void cos_sin4(__m256d m, __m256d theta, __m256d factor, __m128& cos_out, __m128& sin_out) {
  const __m256d hi = _mm256_mul_pd(m, theta);
  const __m256d lo = _mm256_fmsub_pd(m, theta, hi);
  const Sleef___m256d_2 sin_cos = SLEEF_SINCOS4(hi);  // x: sin, y: cos
  const __m256d c = _mm256_mul_pd(_mm256_sub_pd(sin_cos.y, _mm256_mul_pd(lo, sin_cos.x)), factor);
  const __m256d s = _mm256_mul_pd(_mm256_add_pd(sin_cos.x, _mm256_mul_pd(lo, sin_cos.y)), factor);
  cos_out = _mm256_cvtpd_ps(c);  // MXCSR default: round to nearest even
  sin_out = _mm256_cvtpd_ps(s);
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
