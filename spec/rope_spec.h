// rope_spec: the one description of a RoPE configuration that every ropecheck tool reads.
// Built from a JSON spec (a Hugging Face config.json is accepted as is) by spec_reader.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

// How coordinates are paired for rotation.
//   half_split: (j, j + d/2) — GPT-NeoX, Hugging Face `rotate_half`.
//   adjacent:   (2j, 2j + 1) — GPT-J, RoFormer, Meta's LLaMA `freqs_cis`.
enum class pairing { half_split, adjacent };

constexpr std::string_view to_string(pairing p) {
  return p == pairing::half_split ? "half" : "adjacent";
}

// Frequency scalings (docs/scaling.md gives every formula). `ntk` is ropecheck's name for the
// static NTK-aware base change; the others are Hugging Face `rope_type` names (`su` → longrope).
// `proportional` is Gemma 4's: θ_j/s over the whole head for the first `rotated_pairs` pairs,
// θ_j = 0 (pass-through) for the rest.
enum class scaling_type { none, linear, ntk, dynamic, yarn, llama3, longrope, proportional };

// Whose code a formula follows where implementations differ (docs/scaling.md, "Conventions").
enum class scaling_convention {
  hf,                 // Hugging Face transformers `_compute_*_parameters`, s = `factor`
  hf_derived_factor,  // newer transformers: YaRN s = max_position_embeddings / L0 when L0 given
  vllm,               // vLLM: static "dynamic" NTK; LongRoPE long factors iff a position > L0
  deepseek,           // DeepSeek-V3 modeling code: A = g(s, mscale)/g(s, mscale_all_dim)·attn_factor
  ggml,               // ggml/llama.cpp rope_yarn: ramp over max(0.001, high − low)
};

std::string_view to_string(scaling_type t);
std::string_view to_string(scaling_convention c);

// rope_scaling as a config.json gives it, with defaults filled in. Numbers are the doubles the
// JSON text reads as; the reference takes them as exact and computes everything else from them.
struct rope_scaling {
  scaling_type type = scaling_type::none;
  scaling_convention convention = scaling_convention::hf;
  double factor = 1;                             // s
  std::int64_t original_max_position_embeddings = 0;  // L0 (0: not given)
  bool original_max_in_rope_scaling = false;     // L0 given inside rope_scaling
  bool original_max_top_level = false;           // L0 given as a top-level key (Phi-3)
  std::int64_t max_position_embeddings = 0;      // the config's top-level value (0: not given)
  double low_freq_factor = 1;                    // llama3
  double high_freq_factor = 4;                   // llama3
  double beta_fast = 32;                         // yarn
  double beta_slow = 1;                          // yarn
  std::optional<double> mscale;                  // yarn (DeepSeek)
  std::optional<double> mscale_all_dim;          // yarn (DeepSeek)
  std::optional<double> attention_factor;        // yarn / longrope: A given outright
  bool truncate = true;                          // yarn: floor/ceil the correction range
  double extrapolation_factor = 1;               // yarn: DeepSeek extrapolation_factor, ggml ext_factor
  double attn_factor = 1;                        // yarn: DeepSeek attn_factor, ggml attn_factor
  std::vector<double> long_factor;               // longrope, rotary_dim/2 entries
  std::vector<double> short_factor;              // longrope, rotary_dim/2 entries
  std::optional<double> long_mscale;             // longrope: A in the long regime (vLLM, Phi-3-small)
  std::optional<double> short_mscale;            // longrope: A in the short regime
  int rotated_pairs = 0;                         // proportional: pairs with θ_j ≠ 0
};

// Position streams (issue #16 §3–§4): M-RoPE and 2-D vision RoPE are both "rotated pair j
// takes its angle p_{s(j)}·θ_{f(j)} from position stream s(j)", with θ_i = base^(−2i/rotary_dim)
// the usual sequence; spec/stream_layout.h spells s(j) and f(j) out, README "Position streams"
// cites each rule's modeling source.
//   single            1-D RoPE: one stream, s(j) = 0, f(j) = j.
//   mrope_sections    (t, h, w) in contiguous sections (Qwen2-VL, Qwen2.5-VL; GLM-4.1V with
//                     adjacent pairs): s(j) = 0 below s0, 1 below s0 + s1, else 2; f(j) = j.
//   mrope_interleaved Qwen3-VL: s(j) = 1 for j ≡ 1 (mod 3) below 3·s1, 2 for j ≡ 2 below 3·s2,
//                     else 0; f(j) = j.
//   vision_rows_first (row, col), Qwen2-VL/2.5-VL vision encoder and ggml's VISION mode:
//                     s(j) = 0 (row) for j < P/2, else 1 (col); f(j) = 2·(j mod P/2), P = pairs.
//   vision_columns_first Llama 4 vision: s(j) = 1 (col) for j < P/2, else 0 (row); f as above.
//   vision_alternating Pixtral (mistral-inference precompute_freqs_cis_2d): s(j) as rows first,
//                     f(j) = 2j for j < P/2 (θ_{2k} for rows), 2(j − P/2) + 1 else (θ_{2k+1}).
enum class stream_rule {
  single,
  mrope_sections,
  mrope_interleaved,
  vision_rows_first,
  vision_columns_first,
  vision_alternating
};

constexpr std::string_view to_string(stream_rule r) {
  switch (r) {
    case stream_rule::single: return "single";
    case stream_rule::mrope_sections: return "mrope_sections";
    case stream_rule::mrope_interleaved: return "mrope_interleaved";
    case stream_rule::vision_rows_first: return "vision_rows_first";
    case stream_rule::vision_columns_first: return "vision_columns_first";
    case stream_rule::vision_alternating: return "vision_alternating";
  }
  return "?";
}

struct stream_layout {
  stream_rule rule = stream_rule::single;
  std::vector<int> section = {};  // M-RoPE: pairs per stream (t, h, w), summing to rotary_dim/2

  bool multi() const { return rule != stream_rule::single; }
  bool vision() const {
    return rule == stream_rule::vision_rows_first || rule == stream_rule::vision_columns_first ||
           rule == stream_rule::vision_alternating;
  }
  // Position streams per token: 1, 3 (t, h, w) or 2 (row, col).
  int streams() const { return !multi() ? 1 : vision() ? 2 : 3; }
};

struct rope_spec {
  int head_dim = 0;
  int rotary_dim = 0;       // even, 2 <= rotary_dim <= head_dim; dims past it pass through
  double base = 10000.0;    // rope_theta
  pairing pair = pairing::half_split;
  std::string source;       // file the spec was read from, for messages
  rope_scaling scaling = {};
  // ropecheck's own keys: an attention factor that replaces the scaling's A, and the sequence
  // length the length-dependent scalings (dynamic, longrope) use (0: the caller's).
  std::optional<double> attention_factor = {};
  std::int64_t sequence_length = 0;
  std::string layer_type = {};  // the layer type whose RoPE this is, when the config has several
  stream_layout streams = {};  // position streams (M-RoPE, vision); single for 1-D RoPE
};

// True when the scaled θ_j or A depend on the sequence length.
inline bool depends_on_sequence_length(const rope_spec& spec) {
  return (spec.scaling.type == scaling_type::dynamic &&
          spec.scaling.convention != scaling_convention::vllm) ||
         spec.scaling.type == scaling_type::longrope;
}

}  // namespace ropecheck
