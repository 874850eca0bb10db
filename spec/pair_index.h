// pair_of: which two coordinates of a head form rotated pair j — (2j, 2j + 1) for adjacent
// pairing (GPT-J, Meta LLaMA `freqs_cis`), (j, j + rotary_dim/2) for half-split (GPT-NeoX,
// Hugging Face `rotate_half`). The one spelling of this map in the project; reference/ keeps its
// own (reference/rotary_params.h) on purpose, so that the oracle shares no code with what it judges.
#pragma once

#include "spec/rope_spec.h"

namespace ropecheck {

template <class Index>
struct pair_index {
  Index a;  // the coordinate rotated into x_a·cos − x_b·sin
  Index b;  // the coordinate rotated into x_b·cos + x_a·sin
};

template <class Index>
constexpr pair_index<Index> pair_of(pairing p, Index rotary_dim, Index j) {
  return p == pairing::adjacent ? pair_index<Index>{2 * j, 2 * j + 1}
                                : pair_index<Index>{j, j + rotary_dim / 2};
}

}  // namespace ropecheck
