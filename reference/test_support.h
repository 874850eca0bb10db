// Test helpers for the reference tier: random mp_real inputs and relative distances.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "reference/real.h"

namespace ropecheck::reference::testing {

// 2^-200: the agreement the reference forms must reach with one another.
inline const mp_real tight_tolerance = boost::multiprecision::pow(mp_real(2), -200);

inline std::vector<mp_real> random_vector(std::mt19937_64& rng, int n) {
  // Wide dynamic range: mantissa uniform in [-1, 1], exponent in [-20, 20].
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<mp_real> x(n);
  for (auto& v : x) v = mp_real(std::ldexp(mantissa(rng), exponent(rng)));
  return x;
}

inline mp_real norm(std::span<const mp_real> x) {
  mp_real s = 0;
  for (const auto& v : x) s += v * v;
  return sqrt(s);
}

// max_i |a_i − b_i| / ‖x‖: distance relative to the input's norm.
inline mp_real relative_distance(std::span<const mp_real> a, std::span<const mp_real> b,
                                 const mp_real& scale) {
  mp_real worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, mp_real(abs(a[i] - b[i])));
  return worst / scale;
}

}  // namespace ropecheck::reference::testing
