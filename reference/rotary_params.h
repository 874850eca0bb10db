// rotary_params: what one RoPE rotation needs (dims, base, pairing, scaled frequencies and the
// attention factor), checked once, for every reference form. Pass-through dims are the trailing head_dim - rotary_dim coordinates
// (Hugging Face partial_rotary_factor, GPT-NeoX rotary_pct, GPT-J rotary_dim).
// reference/ keeps its own copies of ideas the rest of the project spells once (the pair map
// below is spec/pair_index.h elsewhere; θ_j is fast/frequencies.cpp's there) on purpose: the
// oracle shares no code with what it judges.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/scaling.h"
#include "spec/rope_spec.h"

namespace ropecheck::reference {

// The positions the reference's precision is derived and tested for: |m| <= 2^31 − 1 (every
// int32 position but −2^31). real.h keeps the angle m·θ exact far below double resolution
// there, and docs/double-tier.md's bound assumes it.
inline constexpr std::int64_t max_abs_position = (std::int64_t{1} << 31) - 1;

// Thrown for invalid parameters; the message names the parameter and its value.
class reference_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

template <class Real>
struct rotary_params {
  int head_dim = 0;
  int rotary_dim = 0;
  Real base = 10000;
  pairing pair = pairing::half_split;
  // When non-empty (rotary_dim/2 entries), these θ_j replace base^(−2j/d): frequency scaling
  // and explicit-angle fixtures use them. Each form otherwise computes θ_j its own way.
  std::vector<Real> explicit_inverse_frequencies = {};
  // A (YaRN, LongRoPE): every form multiplies cos and sin alike by it, so the rotary part of a
  // rotated vector has norm A·‖x‖ and a score ⟨f(q,m), f(k,n)⟩ gains A² on the rotary dims.
  // The inverse form (the backward pass, Rᵀ) multiplies by A too: inverse(forward(x)) = A²·x.
  Real attention_factor = 1;
};

// Throws reference_error unless 2 <= rotary_dim <= head_dim, rotary_dim even, base finite > 1,
// attention_factor finite > 0.
template <class Real>
void validate(const rotary_params<Real>& params);

// Throws reference_error unless x.size() == head_dim and every element is finite.
template <class Real>
void validate_input(const rotary_params<Real>& params, std::span<const Real> x, const char* name);

// The spec's rotation. A scaled spec fills explicit_inverse_frequencies and attention_factor
// from reference/scaling.h (at 266 bits); `sequence_length` is used by the length-dependent
// scalings when the spec gives none. An unscaled spec leaves each form to compute θ_j itself.
template <class Real>
rotary_params<Real> params_from_spec(const rope_spec& spec, std::int64_t sequence_length = 0) {
  rotary_params<Real> p{spec.head_dim, spec.rotary_dim, Real(spec.base), spec.pair, {}, Real(1)};
  validate(p);
  if (type_of(spec.scaling) != scaling_type::none) {
    auto scaled = scaled_frequencies<Real>(spec, sequence_length);
    p.explicit_inverse_frequencies = std::move(scaled.inverse_frequencies);
    p.attention_factor = scaled.attention_factor;
  } else if (spec.attention_factor) {
    p.attention_factor = Real(*spec.attention_factor);
  }
  validate(p);
  return p;
}

// The index of each rotated pair's two coordinates: (2j, 2j+1) adjacent, (j, j + d/2) half-split.
struct pair_indices {
  int a;
  int b;
};
inline pair_indices pair_of(pairing pair, int rotary_dim, int j) {
  return pair == pairing::adjacent ? pair_indices{2 * j, 2 * j + 1}
                                   : pair_indices{j, j + rotary_dim / 2};
}

}  // namespace ropecheck::reference
