// rope_spec: the one description of a RoPE configuration that every ropecheck tool reads.
// Built from a JSON spec (a Hugging Face config.json is accepted as is) by spec_reader.h.
#pragma once

#include <string>
#include <string_view>

namespace ropecheck {

// How coordinates are paired for rotation.
//   half_split: (j, j + d/2) — GPT-NeoX, Hugging Face `rotate_half`.
//   adjacent:   (2j, 2j + 1) — GPT-J, RoFormer, Meta's LLaMA `freqs_cis`.
enum class pairing { half_split, adjacent };

constexpr std::string_view to_string(pairing p) {
  return p == pairing::half_split ? "half" : "adjacent";
}

struct rope_spec {
  int head_dim = 0;
  int rotary_dim = 0;       // even, 2 <= rotary_dim <= head_dim; dims past it pass through
  double base = 10000.0;    // rope_theta
  pairing pair = pairing::half_split;
  std::string source;       // file the spec was read from, for messages
};

}  // namespace ropecheck
