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
// cached ones m < max_cache_floats / 2 in a dense table (at least one pair per position) and
// m <= on_the_fly_position_limit in a sparse one (prepare_for refuses others), and prepare refuses
// |θ_j| > max_inverse_frequency. The products are exact powers of two, so fl(m·θ) stays below.
static_assert(static_cast<double>(on_the_fly_position_limit) * max_inverse_frequency <
              detail::cos_sin_constants::reduction_limit);
static_assert(on_the_fly_position_limit >= max_cache_floats / 2);

namespace {

std::int64_t largest_of(std::span<const std::int64_t> positions) {
  std::int64_t largest = -1;
  for (const std::int64_t m : positions) largest = std::max(largest, m);
  return largest;
}

// Dense when largest + 1 <= 2·count + slack, compared as (largest − slack) / 2 < count, which
// cannot overflow (largest may be any int64 a caller passes).
bool dense_rows(std::int64_t largest, std::int64_t count) {
  return largest < dense_cache_slack || (largest - dense_cache_slack) / 2 < count;
}

// The non-negative positions, sorted, each once (negative ones have no row: the kernels refuse
// them).
std::vector<std::int64_t> distinct_rows(std::span<const std::int64_t> positions) {
  std::vector<std::int64_t> distinct;
  distinct.reserve(positions.size());
  for (const std::int64_t m : positions)
    if (m >= 0) distinct.push_back(m);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

}  // namespace

cache_rows cache_rows_for(std::span<const std::int64_t> positions) {
  cache_rows c;
  c.largest = largest_of(positions);
  c.dense = dense_rows(c.largest, static_cast<std::int64_t>(positions.size()));
  c.rows = c.dense ? c.largest + 1 : static_cast<std::int64_t>(distinct_rows(positions).size());
  return c;
}

result<rope_angles> rope_angles::checked(angle_strategy strategy, rope_frequencies frequencies) {
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
  return r::success(std::move(angles));
}

void rope_angles::fill_rows(float* table, const std::int64_t* positions, std::int64_t count) const {
  const std::int64_t pairs = this->pairs();
  constexpr std::int64_t block = 1024;
  for (std::int64_t first = 0; first < count; first += block)
    fill_cos_sin_rows(positions + first, std::min(block, count - first),
                      frequencies_.inverse_frequencies.data(), pairs, frequencies_.attention_factor,
                      table + first * 2 * pairs);
}

result<rope_angles> rope_angles::prepare(angle_strategy strategy, rope_frequencies frequencies,
                                         std::int64_t max_position) {
  using r = result<rope_angles>;
  auto prepared = checked(strategy, std::move(frequencies));
  if (!prepared.ok() || strategy != angle_strategy::cache) return prepared;
  rope_angles& angles = *prepared.value;
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
    angles.fill_rows(table.get() + first * 2 * pairs, positions, count);
  }
  angles.table_ = table;
  return prepared;
}

result<rope_angles> rope_angles::prepare_for(angle_strategy strategy, rope_frequencies frequencies,
                                             std::span<const std::int64_t> positions) {
  using r = result<rope_angles>;
  if (strategy != angle_strategy::cache) return prepare(strategy, std::move(frequencies), 0);
  const std::int64_t largest = largest_of(positions);
  if (dense_rows(largest, static_cast<std::int64_t>(positions.size())))
    return prepare(strategy, std::move(frequencies), largest + 1);
  auto prepared = checked(strategy, std::move(frequencies));
  if (!prepared.ok()) return prepared;
  rope_angles& angles = *prepared.value;
  const std::int64_t pairs = angles.pairs();
  if (largest > on_the_fly_position_limit) {
    return r::failure(status::error(
        status_code::out_of_range,
        "position " + std::to_string(largest) + " is past 2^31, the most the cos/sin reduction covers"));
  }
  auto distinct = std::make_shared<const std::vector<std::int64_t>>(distinct_rows(positions));
  const auto rows = static_cast<std::int64_t>(distinct->size());
  if (rows > max_cache_floats / (2 * pairs)) {
    return r::failure(status::error(
        status_code::invalid_argument,
        "cache of " + std::to_string(rows) + " distinct positions exceeds " +
            std::to_string(max_cache_floats / (2 * pairs)) + " rows for " + std::to_string(pairs) +
            " pairs"));
  }
  const auto table = std::make_shared_for_overwrite<float[]>(static_cast<std::size_t>(rows * 2 * pairs));
  angles.fill_rows(table.get(), distinct->data(), rows);
  angles.max_position_ = largest + 1;
  angles.table_ = table;
  angles.sparse_ = std::move(distinct);
  return prepared;
}

}  // namespace ropecheck::fast
