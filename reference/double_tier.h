// The double tier: the oracle bulk checks use. cos and sin of m·θ_j are correctly rounded to
// double from reference precision (MPFR, >= 256 bits) once per distinct (position, frequency) —
// the table comes from a few MPFR anchors by exact-enough angle addition
// (reference/cos_sin_table.h), the same doubles a direct evaluation gives — and the rotation is
// done in double:
//   y_a = x_a·c − x_b·s,  y_b = x_b·c + x_a·s.
// Its error is at most 3·2^-53·‖(x_a, x_b)‖ per output (docs/double-tier.md), 2^28 below a
// float32 unit — a sound oracle for float32, float16 and bfloat16 outputs.
// A scaled spec (docs/scaling.md) uses its scaled θ_j, and cos, sin carry the attention factor A
// (multiplied in at 266 bits, then rounded once): the same derivation with c, s of magnitude
// A bounds the error by 3·2^-53·A·‖(x_a, x_b)‖ — the bound scales with A.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "bounds/double_tier_bound.h"
#include "spec/rope_spec.h"

namespace ropecheck::reference {

// The tier's bound, 3·2^-53·A·‖(x_a, x_b)‖ per output, is bounds/double_tier_bound.h.
using bounds::double_tier_pair_error_bound;

enum class rotation_direction { forward, inverse };

// How the table was built (reference/cos_sin_table.h).
struct cos_sin_table_stats {
  std::int64_t entries = 0;       // (position, frequency) entries in the table
  std::int64_t mpfr_sin_cos = 0;  // 266-bit sin/cos evaluated: anchors plus direct entries
  std::int64_t combined = 0;      // entries taken from an anchor product
  std::int64_t fallbacks = 0;     // anchor products too close to a rounding boundary, redone
  int split_bits = 0;             // k of m = h·2^k + b; 0 when every entry was computed directly
};

class double_tier {
 public:
  // Computes the table for the distinct values among `positions` (every stream's, for a stream
  // layout). Throws reference_error for an
  // invalid spec. Length-dependent scalings use the spec's sequence_length, else max position
  // + 1. Uses up to `threads` threads for the MPFR work.
  double_tier(const rope_spec& spec, std::span<const std::int64_t> positions, int threads = 2);

  // y = R(±m)·x for one head vector of head_dim doubles; pass-through dims are copied.
  // `position` must be one of those given to the constructor (reference_error otherwise).
  void rotate(std::span<const double> x, std::int64_t position, std::span<double> y,
              rotation_direction direction = rotation_direction::forward) const;

  // Forward rotation with a row already looked up (cos_sin(position)): bulk checkers look a
  // position up once and rotate every head with it.
  void rotate(std::span<const double> x, std::span<const double> cos_sin_row,
              std::span<double> y) const;

  // Several position streams (the spec's stream layout: M-RoPE, 2-D vision): the row of a token
  // whose streams are at `positions` (one per stream, each given to the constructor) — pair j's
  // (cos, sin) from the row of stream s(j)'s position (rope_forms.h position_stream). Each
  // entry is the same correctly rounded double as 1-D RoPE's at that position.
  void stream_cos_sin(std::span<const std::int64_t> positions, std::span<double> row) const;
  int streams() const { return streams_; }
  int pair_stream(int j) const { return streams_ == 1 ? 0 : pair_stream_[static_cast<std::size_t>(j)]; }

  // A·cos(m·θ_j) and A·sin(m·θ_j), correctly rounded to double.
  double cos_at(std::int64_t position, int j) const { return row(position)[2 * j]; }
  double sin_at(std::int64_t position, int j) const { return row(position)[2 * j + 1]; }
  // The same for every j at once, (cos, sin) interleaved: rotary_dim doubles.
  std::span<const double> cos_sin(std::int64_t position) const {
    return {row(position), static_cast<std::size_t>(rotary_dim_)};
  }
  // How the table was built (anchors, fallbacks), for tests and benchmarks.
  const cos_sin_table_stats& table_stats() const { return table_stats_; }

  int head_dim() const { return head_dim_; }
  double attention_factor() const { return attention_factor_; }  // A, rounded to double
  // θ_j the table rotates by (θ'_j under rope_scaling; θ_{f(j)} under a 2-D vision layout), each rounded to double: what error
  // bounds that grow with the angle m·θ_j need.
  std::span<const double> inverse_frequencies() const { return inverse_frequencies_; }
  int rotary_dim() const { return rotary_dim_; }
  pairing pair() const { return pair_; }

 private:
  // A tier over a table already built (double_tier_memo.h): `cos_sin` holds the rows of
  // `distinct_positions`, in that order, as the constructor above would compute them.
  double_tier(const rope_spec& spec, double attention_factor,
              std::vector<double> inverse_frequencies,
              std::span<const std::int64_t> distinct_positions, std::vector<double> cos_sin,
              const cos_sin_table_stats& stats);
  friend class double_tier_memo;

  const double* row(std::int64_t position) const;
  void rotate_by(std::span<const double> x, const double* cos_sin_row, double sign,
                 std::span<double> y) const;

  int head_dim_;
  int rotary_dim_;
  pairing pair_;
  int streams_ = 1;
  std::vector<int> pair_stream_;  // s(j) when streams_ > 1
  double attention_factor_ = 1;
  std::vector<double> inverse_frequencies_;
  std::unordered_map<std::int64_t, std::size_t> row_of_position_;
  std::vector<double> cos_sin_;  // per distinct position: (cos, sin) for j = 0 … rotary_dim/2 − 1
  cos_sin_table_stats table_stats_;
};

}  // namespace ropecheck::reference
