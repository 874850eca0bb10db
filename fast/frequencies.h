// frequencies: the per-pair input every fast kernel rotates by. RoPE (Su et al. 2021,
// "RoFormer", eq. 15) rotates pair j by the angle m·θ_j with θ_j = base^(−2j/rotary_dim);
// kernels take θ_j as data (plus an attention factor that scales cos and sin alike, as YaRN
// needs) so frequency-scaling schemes change this vector, never a kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck::fast {

struct rope_frequencies {
  std::vector<double> inverse_frequencies;  // θ_j for 0 <= j < rotary_dim/2
  double attention_factor = 1.0;            // cos and sin are both multiplied by it
};

// θ_j = base^(−2j/rotary_dim), each the double nearest the real value (see frequencies.cpp).
std::vector<double> inverse_frequencies(const rope_spec& spec);

// Plain RoPE: the spec's θ_j and attention factor 1. Both functions below give the kernels'
// per-pair θ: a 2-D vision layout's pair j gets θ_{f(j)} (spec/stream_layout.h).
rope_frequencies unscaled_frequencies(const rope_spec& spec);

// The spec's rope_scaling applied (docs/scaling.md: linear, ntk, dynamic, yarn, llama3,
// longrope, in every convention), with the spec's own attention_factor if it gives one.
// Computed in long double and rounded once to double, on its own (no code shared with
// reference/): θ_j and A agree with the 266-bit reference to a few ulps of double.
// `sequence_length` (max position + 1 for a call) is used when the spec gives none; only
// dynamic and longrope depend on it.
rope_frequencies scaled_frequencies(const rope_spec& spec, std::int64_t sequence_length);

}  // namespace ropecheck::fast
