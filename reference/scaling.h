// Frequency scalings of RoPE at reference precision: the scaled inverse frequencies θ'_i
// (i = 0 … rotary_dim/2 − 1) and the attention factor A that multiplies cos and sin.
//   linear   θ'_i = θ_i / s                                   (Chen et al. 2023, position interp.)
//   ntk      b' = b·s^(d/(d−2))                               (bloc97, "NTK-aware" scaling)
//   dynamic  b' = b·(s·L/L_max − (s − 1))^(d/(d−2)), L = max(seq, L_max)  (HF dynamic NTK)
//   yarn     θ'_i = (θ_i/s)(1 − e_i) + θ_i·e_i, e_i = (1 − ramp_i)·ext   (Peng et al. 2023)
//   llama3   wavelength bands around L0/hf and L0/lf           (Meta Llama 3.1)
//   longrope θ'_i = 1 / (f_i·b^(2i/d)), A = sqrt(1 + ln s / ln L0)   (Phi-3, Ding et al. 2024)
// Every formula, threshold and ramp is evaluated at 266 bits from the spec's numbers (each
// taken as exact); nothing here is shared with fast/. docs/scaling.md has the conventions.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck::reference {

template <class Real>
struct scaled_rotation {
  std::vector<Real> inverse_frequencies;  // θ'_i, rotary_dim/2 entries
  Real attention_factor = 1;              // A: cos and sin are both multiplied by it
};

// `sequence_length` is used only when the spec gives none (spec.sequence_length == 0) and the
// scaling depends on it (dynamic, longrope); then it must be >= 1 (reference_error otherwise).
// For an unscaled spec this is θ_i = b^(−2i/d) and A = 1 (or the spec's attention_factor).
template <class Real>
scaled_rotation<Real> scaled_frequencies(const rope_spec& spec, std::int64_t sequence_length);

}  // namespace ropecheck::reference
