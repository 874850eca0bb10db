// reference_cases: generated inputs for the reference-tier properties — shapes, positions over
// the whole int32 range (negative ones included) and float64 vectors with a wide dynamic range
// and cancelling pairs — converted to the 266-bit working type, plus the distances the
// properties compare with 2^-200 (error_bounds.h §11).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bounds/error_bounds.h"
#include "properties/generators.h"
#include "properties/property_runner.h"
#include "reference/real.h"
#include "reference/rotary_params.h"

namespace ropecheck::properties::reference_support {

using reference::mp_real;

inline const mp_real& tolerance() {
  static const mp_real t = boost::multiprecision::ldexp(mp_real(1), bounds::reference_tolerance_exponent);
  return t;
}

// float64 values with exponents in [-200, 200] (subnormals of float64 would only add cases the
// 266-bit arithmetic treats like any other).
inline value_range reference_value_range() { return {float64_format, -200, 200}; }

inline constexpr std::int64_t int32_position_limit = (std::int64_t{1} << 31) - 1;

inline reference::rotary_params<mp_real> params_of(const rope_shape& s) {
  return {s.head_dim, s.rotary_dim, mp_real(s.base), s.pair, {}};
}

inline std::vector<mp_real> to_mp(std::span<const double> v) {
  return std::vector<mp_real>(v.begin(), v.end());
}

// One vector (a 1-token, 1-head row) whose pairs may cancel at `position`.
inline std::vector<mp_real> pick_vector(const rope_shape& s, std::int64_t position) {
  const auto rows = *gen::tensor_rows(dtype::float64, reference_value_range(), s, 1, {position},
                                      gen::approximate_inverse_frequencies(s.rotary_dim, s.base));
  return to_mp(rows.values);
}

inline std::int64_t pick_position(const rope_shape& s, std::int64_t limit = int32_position_limit) {
  return (*gen::positions(1, limit + 1,
                          gen::approximate_inverse_frequencies(s.rotary_dim, s.base), true))[0];
}

inline mp_real norm(std::span<const mp_real> x) {
  mp_real sum = 0;
  for (const auto& v : x) sum += v * v;
  return sqrt(sum);
}

// max_i |a_i − b_i| / scale.
inline mp_real distance(std::span<const mp_real> a, std::span<const mp_real> b, const mp_real& scale) {
  mp_real worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, mp_real(abs(a[i] - b[i])));
  return scale == 0 ? worst : mp_real(worst / scale);
}

// Records distance / tolerance and fails (RC_FAIL) when the distance exceeds the tolerance.
inline void require_close(const mp_real& relative_distance, observation& seen,
                          const std::string& what) {
  const double ratio = mp_real(relative_distance / tolerance()).convert_to<double>();
  seen.record(ratio, [&] { return what; });
  if (!(relative_distance <= tolerance())) {
    RC_FAIL(what + ": relative distance " + relative_distance.str(6) + " > 2^" +
            std::to_string(bounds::reference_tolerance_exponent));
  }
}

}  // namespace ropecheck::properties::reference_support
