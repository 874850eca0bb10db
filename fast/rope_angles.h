// rope_angles: what a kernel needs besides the call — the inverse frequencies and, for the
// cache strategy, the cos/sin table built once for positions [0, max_position). Built once
// per model configuration, then shared read-only by every call and thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fast/frequencies.h"
#include "fast/status.h"

namespace ropecheck::fast {

// cache: cos/sin looked up in a float32 table; on_the_fly: computed per token from positions.
// Both produce the same floats (cos_sin.h), so they differ in speed and memory only.
enum class angle_strategy { cache, on_the_fly };

constexpr std::string_view to_string(angle_strategy s) {
  return s == angle_strategy::cache ? "cache" : "on_the_fly";
}

// On-the-fly accepts |m| <= 2^31 (every int32 position). The accuracy bound is stated for
// |m| <= 2^24; past it θ_j's rounding to double (|m|·θ_j·2^-53 rad) grows with m.
inline constexpr std::int64_t on_the_fly_position_limit = std::int64_t{1} << 31;

// Inverse frequencies above this many radians per position are refused (rope_angles::prepare):
// with |m| <= 2^31 it keeps every angle |m·θ_j| <= 2^44, inside the cos/sin reduction's exact
// range (cos_sin_polynomial.h's reduction_limit, 2^45). Real models have θ_j <= 1 (θ_0 =
// base^0 = 1, scaled down); only a scaling factor below ~1e-4 would come near.
inline constexpr double max_inverse_frequency = 0x1p13;

// Cache tables larger than this many floats are refused rather than attempted (8 GiB).
inline constexpr std::int64_t max_cache_floats = std::int64_t{1} << 31;

class rope_angles {
 public:
  angle_strategy strategy() const { return strategy_; }
  const rope_frequencies& frequencies() const { return frequencies_; }
  std::int64_t pairs() const { return static_cast<std::int64_t>(frequencies_.inverse_frequencies.size()); }
  // cache: positions must lie in [0, max_position). on_the_fly: 0 (unused).
  std::int64_t max_position() const { return max_position_; }

  // Table row of a cached position: pairs() cos values, then pairs() sin values (float32).
  // The layout keeps one position's values contiguous (512 B for 64 pairs), read once per
  // token and reused for every head from L1.
  const float* cached_row(std::int64_t position) const {
    return table_.get() + position * 2 * pairs();
  }

  // max_position is used by the cache strategy only.
  static result<rope_angles> prepare(angle_strategy strategy, rope_frequencies frequencies,
                                     std::int64_t max_position);

 private:
  angle_strategy strategy_ = angle_strategy::on_the_fly;
  rope_frequencies frequencies_;
  std::int64_t max_position_ = 0;
  // Written once by prepare, then read-only, so copies share it. Not zero-filled first
  // (make_shared_for_overwrite): prepare writes every float, and the zeroing was a tenth of
  // building a table.
  std::shared_ptr<const float[]> table_;
};

}  // namespace ropecheck::fast
