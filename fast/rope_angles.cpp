// Validation of frequencies and the cos/sin table build (values from cos_sin.h).
#include "fast/rope_angles.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "fast/cos_sin.h"
#include "fast/cos_sin_polynomial.h"

namespace ropecheck::fast {

// Every angle a kernel computes, |m·θ_j|, is below the cos/sin reduction's limit: on-the-fly
// positions are |m| <= on_the_fly_position_limit (kernels.cpp refuses others: out_of_range),
// cached ones m < max_cache_floats / 2 (at least one pair per position), and prepare refuses
// |θ_j| > max_inverse_frequency. The products are exact powers of two, so fl(m·θ) stays below.
static_assert(static_cast<double>(on_the_fly_position_limit) * max_inverse_frequency <
              detail::cos_sin_constants::reduction_limit);
static_assert(on_the_fly_position_limit >= max_cache_floats / 2);

result<rope_angles> rope_angles::prepare(angle_strategy strategy, rope_frequencies frequencies,
                                         std::int64_t max_position) {
  using r = result<rope_angles>;
  const auto& theta = frequencies.inverse_frequencies;
  if (theta.empty()) {
    return r::failure(status::error(status_code::invalid_argument,
                                    "inverse_frequencies is empty (rotary_dim/2 values needed)"));
  }
  for (std::size_t j = 0; j < theta.size(); ++j) {
    if (!std::isfinite(theta[j])) {
      return r::failure(status::error(
          status_code::invalid_argument,
          "inverse_frequencies[" + std::to_string(j) + "] is not finite"));
    }
    if (std::fabs(theta[j]) > max_inverse_frequency) {
      return r::failure(status::error(
          status_code::invalid_argument,
          "inverse_frequencies[" + std::to_string(j) + "] = " + std::to_string(theta[j]) +
              " exceeds 8192 (2^13) radians per position, the most the cos/sin reduction covers"));
    }
  }
  if (!std::isfinite(frequencies.attention_factor)) {
    return r::failure(
        status::error(status_code::invalid_argument, "attention_factor is not finite"));
  }

  rope_angles angles;
  angles.strategy_ = strategy;
  angles.frequencies_ = std::move(frequencies);
  if (strategy == angle_strategy::cache) {
    const std::int64_t pairs = angles.pairs();
    if (max_position < 0 || max_position > max_cache_floats / (2 * pairs)) {
      return r::failure(status::error(
          status_code::invalid_argument,
          "cache max_position " + std::to_string(max_position) + " must be in [0, " +
              std::to_string(max_cache_floats / (2 * pairs)) + "] for " +
              std::to_string(pairs) + " pairs"));
    }
    angles.max_position_ = max_position;
    const auto table = std::make_shared_for_overwrite<float[]>(
        static_cast<std::size_t>(max_position * 2 * pairs));
    constexpr std::int64_t block = 1024;
    std::int64_t positions[block];
    for (std::int64_t first = 0; first < max_position; first += block) {
      const std::int64_t count = std::min(block, max_position - first);
      for (std::int64_t i = 0; i < count; ++i) positions[i] = first + i;
      fill_cos_sin_rows(positions, count, angles.frequencies_.inverse_frequencies.data(), pairs,
                        angles.frequencies_.attention_factor,
                        table.get() + first * 2 * pairs);
    }
    angles.table_ = table;
  }
  return r::success(std::move(angles));
}

}  // namespace ropecheck::fast
