// The double tier: the oracle bulk checks use. cos and sin of m·θ_j are computed at reference
// precision (MPFR, >= 256 bits) once per distinct (position, frequency), rounded once to double,
// and the rotation is done in double:
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

#include "spec/rope_spec.h"

namespace ropecheck::reference {

// Bound on |y_double − y_exact| / (A·‖(x_a, x_b)‖) for every rotated output of the double tier
// (A = attention_factor(), 1 for unscaled RoPE).
inline constexpr double double_tier_pair_error_bound = 3.0 / 9007199254740992.0;  // 3·2^-53

enum class rotation_direction { forward, inverse };

class double_tier {
 public:
  // Computes the table for the distinct values among `positions`. Throws reference_error for an
  // invalid spec. Length-dependent scalings use the spec's sequence_length, else max position + 1. Uses up to `threads` threads for the MPFR work.
  double_tier(const rope_spec& spec, std::span<const std::int64_t> positions, int threads = 2);

  // y = R(±m)·x for one head vector of head_dim doubles; pass-through dims are copied.
  // `position` must be one of those given to the constructor (reference_error otherwise).
  void rotate(std::span<const double> x, std::int64_t position, std::span<double> y,
              rotation_direction direction = rotation_direction::forward) const;

  // A·cos(m·θ_j) and A·sin(m·θ_j), correctly rounded to double.
  double cos_at(std::int64_t position, int j) const { return row(position)[2 * j]; }
  double sin_at(std::int64_t position, int j) const { return row(position)[2 * j + 1]; }

  int head_dim() const { return head_dim_; }
  double attention_factor() const { return attention_factor_; }  // A, rounded to double
  int rotary_dim() const { return rotary_dim_; }
  pairing pair() const { return pair_; }

 private:
  const double* row(std::int64_t position) const;

  int head_dim_;
  int rotary_dim_;
  pairing pair_;
  double attention_factor_ = 1;
  std::unordered_map<std::int64_t, std::size_t> row_of_position_;
  std::vector<double> cos_sin_;  // per distinct position: (cos, sin) for j = 0 … rotary_dim/2 − 1
};

}  // namespace ropecheck::reference
