// Dispatch between the AVX2 and portable cos/sin rows; the portable path is the operation
// list of cos_sin.h written with scalars.
#include "fast/cos_sin.h"

#include <sleef.h>

#include <cmath>
#include <hwy/targets.h>

#include "fast/cos_sin_avx2.h"

namespace ropecheck::fast {

void fill_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                const double* theta, std::int64_t pairs,
                                double attention_factor, float* rows) {
  for (std::int64_t i = 0; i < count; ++i) {
    const double m = static_cast<double>(positions[i]);
    float* row = rows + i * 2 * pairs;
    for (std::int64_t j = 0; j < pairs; ++j) {
      const double hi = m * theta[j];
      const double lo = std::fma(m, theta[j], -hi);
      const Sleef_double2 sin_cos = Sleef_sincos_u35(hi);  // x: sin, y: cos
      row[j] = static_cast<float>((sin_cos.y - lo * sin_cos.x) * attention_factor);
      row[pairs + j] = static_cast<float>((sin_cos.x + lo * sin_cos.y) * attention_factor);
    }
  }
}

void fill_cos_sin_rows(const std::int64_t* positions, std::int64_t count, const double* theta,
                       std::int64_t pairs, double attention_factor, float* rows) {
  // Highway's AVX2 target bit means AVX2+FMA+F16C+BMI2 are present (AVX3 implies them).
  static const bool has_avx2 = (hwy::SupportedTargets() & (HWY_AVX2 | HWY_AVX3)) != 0;
  if (has_avx2) {
    detail::fill_cos_sin_rows_avx2(positions, count, theta, pairs, attention_factor, rows);
  } else {
    fill_cos_sin_rows_portable(positions, count, theta, pairs, attention_factor, rows);
  }
}

}  // namespace ropecheck::fast
