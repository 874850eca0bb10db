// θ_j = base^(−2j/rotary_dim) (RoFormer eq. 15).
#include "fast/frequencies.h"

#include <cmath>

namespace ropecheck::fast {

std::vector<double> inverse_frequencies(const rope_spec& spec) {
  const int pairs = spec.rotary_dim > 0 ? spec.rotary_dim / 2 : 0;
  std::vector<double> theta(static_cast<std::size_t>(pairs));
  const long double base = spec.base;
  for (int j = 0; j < pairs; ++j) {
    // std::pow in long double, then one rounding to double. Doing it all in double would
    // first round the exponent −2j/d, and that error is multiplied by ln(base) (≈16 for
    // 1e7) in θ_j and then by m in the angle: at m = 2^24 it reaches ~2^-25 rad, half an
    // ulp of a float cos. In long double it stays far below the final rounding.
    const long double exponent = -2.0L * j / spec.rotary_dim;
    theta[static_cast<std::size_t>(j)] = static_cast<double>(std::pow(base, exponent));
  }
  return theta;
}

rope_frequencies unscaled_frequencies(const rope_spec& spec) {
  return {inverse_frequencies(spec), 1.0};
}

}  // namespace ropecheck::fast
