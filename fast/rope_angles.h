// rope_angles: what a kernel needs besides the call — the inverse frequencies and, for the
// cache strategy, the cos/sin table built once for positions [0, max_position), or for just the
// positions a call uses when they are sparse. Built once per model configuration (or call),
// then shared read-only by every call and thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
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

// The rows a cache table for `positions` has (rope_angles::prepare_for): one per position
// 0 … max when the positions are dense — at most twice their count plus dense_cache_slack,
// so a dense call costs no sort and a row lookup is an index — else one per distinct position
// (32 tokens at positions 0 and 16 777 215 need 2 rows, not 16 777 216). A negative
// position is not counted (the cache refuses it).
inline constexpr std::int64_t dense_cache_slack = 4096;
struct cache_rows {
  std::int64_t rows = 0;
  bool dense = true;
  std::int64_t largest = -1;  // the largest position, −1 if none
};
cache_rows cache_rows_for(std::span<const std::int64_t> positions);

class rope_angles {
 public:
  angle_strategy strategy() const { return strategy_; }
  const rope_frequencies& frequencies() const { return frequencies_; }
  std::int64_t pairs() const { return static_cast<std::int64_t>(frequencies_.inverse_frequencies.size()); }
  // cache: positions must lie in [0, max_position), and be covered (covers). on_the_fly: 0
  // (unused).
  std::int64_t max_position() const { return max_position_; }
  // Rows in the cache table (max_position() for a dense one).
  std::int64_t cached_rows() const { return sparse_ ? static_cast<std::int64_t>(sparse_->size()) : max_position_; }
  // Whether the table has a row for `position`: every position in [0, max_position) for a
  // dense table, the positions it was built for for a sparse one.
  bool covers(std::int64_t position) const {
    if (position < 0 || position >= max_position_) return false;
    return !sparse_ || std::binary_search(sparse_->begin(), sparse_->end(), position);
  }

  // Table row of a cached position: pairs() cos values, then pairs() sin values (float32).
  // The layout keeps one position's values contiguous (512 B for 64 pairs), read once per
  // token and reused for every head from L1. `position` must be covered; a sparse table
  // answers a position it lacks with one of its rows rather than reading outside the table,
  // so a kernel that reads rows its call did not name (a mutant) stays memory-safe.
  const float* cached_row(std::int64_t position) const {
    return table_.get() + (sparse_ ? sparse_row(position) : position) * 2 * pairs();
  }

  // max_position is used by the cache strategy only: a dense table of [0, max_position).
  static result<rope_angles> prepare(angle_strategy strategy, rope_frequencies frequencies,
                                     std::int64_t max_position);
  // The same for the positions of one call: the cache strategy's table has the rows
  // cache_rows_for(positions) says (max_position() is still the largest position + 1).
  static result<rope_angles> prepare_for(angle_strategy strategy, rope_frequencies frequencies,
                                         std::span<const std::int64_t> positions);

 private:
  angle_strategy strategy_ = angle_strategy::on_the_fly;
  rope_frequencies frequencies_;
  std::int64_t max_position_ = 0;
  // Written once by prepare, then read-only, so copies share it. Not zero-filled first
  // (make_shared_for_overwrite): prepare writes every float, and the zeroing was a tenth of
  // building a table.
  std::shared_ptr<const float[]> table_;
  // A sparse table: the sorted distinct positions of its rows (row i is sparse_[i]'s); null
  // for a dense one.
  std::shared_ptr<const std::vector<std::int64_t>> sparse_;

  std::int64_t sparse_row(std::int64_t position) const {
    const auto at = std::upper_bound(sparse_->begin(), sparse_->end(), position);
    return at == sparse_->begin() ? 0 : static_cast<std::int64_t>(at - sparse_->begin()) - 1;
  }
  static result<rope_angles> checked(angle_strategy strategy, rope_frequencies frequencies);
  // Writes the rows of `count` positions to `table`, in blocks.
  void fill_rows(float* table, const std::int64_t* positions, std::int64_t count) const;
};

}  // namespace ropecheck::fast
