// The portable cos/sin rows: the operation list of cos_sin.h written with scalars (the SIMD
// path, cos_sin_simd.cpp, performs the same operations lane by lane).
#include "fast/cos_sin.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "fast/cos_sin_polynomial.h"

namespace ropecheck::fast {

namespace {

namespace k = detail::cos_sin_constants;

using detail::sin_cos;

// c[0]·z^(n−1) + … + c[n−1] by Horner's rule, one FMA per step (as cos_sin_simd.cpp).
template <std::size_t n>
double horner(double z, const double (&c)[n]) {
  double acc = c[0];
  for (std::size_t i = 1; i < n; ++i) acc = std::fma(z, acc, c[i]);
  return acc;
}

// cos_sin_simd.cpp's cos_sin_lanes, one lane: the same operations in the same order.
sin_cos sin_cos_reduced(double hi, double lo) {
  const double quarter_turns = std::nearbyint(hi * k::two_over_pi);
  double r = std::fma(-quarter_turns, k::half_pi_hi, hi);
  r = std::fma(-quarter_turns, k::half_pi_lo, r);
  r = r + lo;
  const double z = r * r;
  const double sin_r = std::fma(r * z, horner(z, k::sin_horner), r);
  const double cos_r = std::fma(z, horner(z, k::cos_horner), 1.0);
  const auto q = static_cast<std::int64_t>(quarter_turns) & 3;
  const double sin_q = (q & 1) != 0 ? cos_r : sin_r;
  const double cos_q = (q & 1) != 0 ? sin_r : cos_r;
  return {(q & 2) != 0 ? -sin_q : sin_q, ((q + 1) & 2) != 0 ? -cos_q : cos_q};
}

}  // namespace

// At or beyond the reduction limit (or not finite) the quadrant count is not exact: NaN, as
// the SIMD path gives; no kernel angle gets there (cos_sin.h).
sin_cos detail::sin_cos_of(double hi, double lo) {
  if (std::fabs(hi) < k::reduction_limit) return sin_cos_reduced(hi, lo);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {nan, nan};
}

void fill_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                const double* theta, std::int64_t pairs,
                                double attention_factor, float* rows) {
  for (std::int64_t i = 0; i < count; ++i) {
    const double m = static_cast<double>(positions[i]);
    float* row = rows + i * 2 * pairs;
    for (std::int64_t j = 0; j < pairs; ++j) {
      const double hi = m * theta[j];
      const double lo = std::fma(m, theta[j], -hi);
      const sin_cos x = detail::sin_cos_of(hi, lo);
      row[j] = static_cast<float>(x.cos * attention_factor);
      row[pairs + j] = static_cast<float>(x.sin * attention_factor);
    }
  }
}

}  // namespace ropecheck::fast
