// rotary_params: what one RoPE rotation needs (dims, base, pairing), checked once, for every
// reference form. Pass-through dims are the trailing head_dim - rotary_dim coordinates
// (Hugging Face partial_rotary_factor, GPT-NeoX rotary_pct, GPT-J rotary_dim).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck::reference {

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
};

// Throws reference_error unless 2 <= rotary_dim <= head_dim, rotary_dim even, base finite > 1.
template <class Real>
void validate(const rotary_params<Real>& params);

// Throws reference_error unless x.size() == head_dim and every element is finite.
template <class Real>
void validate_input(const rotary_params<Real>& params, std::span<const Real> x, const char* name);

template <class Real>
rotary_params<Real> params_from_spec(const rope_spec& spec) {
  rotary_params<Real> p{spec.head_dim, spec.rotary_dim, Real(spec.base), spec.pair, {}};
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
