// rope_spec: the one description of a RoPE configuration that every ropecheck tool reads.
// Built from a JSON spec (a Hugging Face config.json is accepted as is) by spec_reader.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
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
// Only the types whose formula differs between them carry one (dynamic, yarn, longrope); the
// reader keeps the conventions a type distinguishes and reads every other one as hf, the code
// they then agree with.
enum class scaling_convention {
  hf,                 // Hugging Face transformers `_compute_*_parameters`, s = `factor`
  hf_derived_factor,  // newer transformers: YaRN s = max_position_embeddings / L0 when L0 given
  vllm,               // vLLM: static "dynamic" NTK; LongRoPE long factors iff a position > L0
  deepseek,           // DeepSeek-V3 modeling code: A = g(s, mscale)/g(s, mscale_all_dim)·attn_factor
  ggml,               // ggml/llama.cpp rope_yarn: ramp over max(0.001, high − low)
};

std::string_view to_string(scaling_type t);
std::string_view to_string(scaling_convention c);

// rope_scaling: one struct per scaling type, each with only its own fields, defaults filled in
// and every quantity that depends on where a key appeared in the config (Phi-3's top-level L0,
// the hf_derived_factor YaRN factor) already computed by the reader (spec/scaling_readers.cpp):
// consumers read the struct and never the config. Numbers are the doubles the JSON text reads
// as; the reference takes them as exact and computes everything else from them. Formulas:
// docs/scaling.md, which also says what adding a type touches.
struct no_scaling {
  bool operator==(const no_scaling&) const = default;
};

// A scale factor s that is either written (`factor`, denominator 1) or the ratio of two config values
// (max_position_embeddings / L0), kept as the two doubles so that each tier divides at its own
// precision: the reference's s stays the exact ratio of the config's numbers.
struct factor_ratio {
  double numerator = 1;
  double denominator = 1;
  double value() const { return numerator / denominator; }  // rounded: for messages and tests
  bool operator==(const factor_ratio&) const = default;
};

struct linear_scaling {  // θ'_j = θ_j / s
  double factor = 1;     // s
  bool operator==(const linear_scaling&) const = default;
};

struct ntk_scaling {  // b' = b·s^(d/(d−2))
  double factor = 1;  // s
  bool operator==(const ntk_scaling&) const = default;
};

struct dynamic_scaling {  // b' = b·(s·L/L_max − (s − 1))^(d/(d−2)), L = max(length, L_max)
  double factor = 1;                         // s
  std::int64_t max_position_embeddings = 0;  // L_max, the config's (required)
  scaling_convention convention = scaling_convention::hf;  // hf or vllm (one static L = s·L_max)
  bool operator==(const dynamic_scaling&) const = default;
};

struct yarn_scaling {
  factor_ratio factor;  // s as the formula uses it: `factor` (or 1/freq_scale), or under
                        // hf_derived_factor max_position_embeddings / L0 when L0 is in the block
  std::int64_t original_max_position_embeddings = 0;  // L0
  double beta_fast = 32;
  double beta_slow = 1;
  std::optional<double> mscale = {};            // DeepSeek
  std::optional<double> mscale_all_dim = {};    // DeepSeek
  std::optional<double> attention_factor = {};  // A given outright
  bool truncate = true;                         // floor/ceil the correction range
  double extrapolation_factor = 1;              // DeepSeek extrapolation_factor, ggml ext_factor
  double attn_factor = 1;                       // DeepSeek attn_factor, ggml attn_factor
  scaling_convention convention = scaling_convention::hf;  // hf, deepseek or ggml (the derived
                                                           // factor is already in `factor`)
  bool operator==(const yarn_scaling&) const = default;
};

struct llama3_scaling {
  double factor = 8;  // s (defaults: Llama 3.1's published values)
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  std::int64_t original_max_position_embeddings = 8192;  // L0
  bool operator==(const llama3_scaling&) const = default;
};

struct longrope_scaling {
  factor_ratio factor;  // s for A = sqrt(1 + ln s / ln L0): max_position_embeddings / L0 when the
                        // config gives L0 (top level or in the block) and a context, else `factor`
  std::int64_t original_max_position_embeddings = 0;  // L0: the long/short regime switch
  std::vector<double> long_factor = {};               // rotary_dim/2 entries
  std::vector<double> short_factor = {};              // rotary_dim/2 entries
  std::optional<double> attention_factor = {};        // A given outright
  std::optional<double> long_mscale = {};             // A in the long regime (vLLM, Phi-3-small)
  std::optional<double> short_mscale = {};            // A in the short regime
  scaling_convention convention = scaling_convention::hf;  // hf (long iff length > L0) or vllm
                                                           // (long iff a position > L0)
  bool operator==(const longrope_scaling&) const = default;
};

struct proportional_scaling {  // Gemma 4: θ_j / s for the first rotated_pairs pairs, then 0
  double factor = 1;           // s
  int rotated_pairs = 0;       // floor(partial_rotary_factor · head_dim / 2)
  bool operator==(const proportional_scaling&) const = default;
};

// The alternatives in scaling_type's order: type_of is the index.
using rope_scaling = std::variant<no_scaling, linear_scaling, ntk_scaling, dynamic_scaling,
                                  yarn_scaling, llama3_scaling, longrope_scaling, proportional_scaling>;

inline scaling_type type_of(const rope_scaling& s) { return static_cast<scaling_type>(s.index()); }
static_assert(std::variant_size_v<rope_scaling> == static_cast<std::size_t>(scaling_type::proportional) + 1,
              "one rope_scaling alternative per scaling_type, in the same order (name the last here)");

// The convention of a type that has one (a struct with a `convention` field).
inline std::optional<scaling_convention> convention_of(const rope_scaling& s) {
  return std::visit(
      [](const auto& t) -> std::optional<scaling_convention> {
        if constexpr (requires { t.convention; }) return t.convention;
        else return std::nullopt;
      },
      s);
}

// One line naming the type and its parameters, for headers and counterexamples.
std::string describe(const rope_scaling& s);

// Position streams: M-RoPE and 2-D vision RoPE are both "rotated pair j
// takes its angle p_{s(j)}·θ_{f(j)} from position stream s(j)", with θ_i = base^(−2i/rotary_dim)
// the usual sequence; spec/stream_layout.h spells s(j) and f(j) out, docs/spec.md "Position streams"
// cites each rule's modeling source.
//   single            1-D RoPE: one stream, s(j) = 0, f(j) = j.
//   mrope_sections    (t, h, w) in contiguous sections (Qwen2-VL, Qwen2.5-VL; GLM-4.1V with
//                     adjacent pairs): s(j) = 0 below s0, 1 below s0 + s1, else 2; f(j) = j.
//   mrope_interleaved Qwen3-VL: s(j) = 1 for j ≡ 1 (mod 3) below 3·s1, 2 for j ≡ 2 below 3·s2,
//                     else 0; f(j) = j.
//   mrope_interleaved_4 ggml's GGML_ROPE_TYPE_IMROPE (llama.cpp's Qwen3-VL): four streams (t, h, w,
//                     e); s(j) = 0 for j ≡ 0 (mod 3) below 3·s0, 1 for j ≡ 1 below 3·s1, 2 for
//                     j ≡ 2 below 3·s2, else 3 (e, which llama.cpp sets to 0); f(j) = j.
//   vision_rows_first (row, col), Qwen2-VL/2.5-VL vision encoder and ggml's VISION mode:
//                     s(j) = 0 (row) for j < P/2, else 1 (col); f(j) = 2·(j mod P/2), P = pairs.
//   vision_columns_first Llama 4 vision: s(j) = 1 (col) for j < P/2, else 0 (row); f as above.
//   vision_alternating Pixtral (mistral-inference precompute_freqs_cis_2d): s(j) as rows first,
//                     f(j) = 2j for j < P/2 (θ_{2k} for rows), 2(j − P/2) + 1 else (θ_{2k+1}).
enum class stream_rule {
  single,
  mrope_sections,
  mrope_interleaved,
  mrope_interleaved_4,
  vision_rows_first,
  vision_columns_first,
  vision_alternating
};

constexpr std::string_view to_string(stream_rule r) {
  switch (r) {
    case stream_rule::single: return "single";
    case stream_rule::mrope_sections: return "mrope_sections";
    case stream_rule::mrope_interleaved: return "mrope_interleaved";
    case stream_rule::mrope_interleaved_4: return "mrope_interleaved_4";
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
  // Position streams per token: 1, 3 (t, h, w), 4 (t, h, w, e) or 2 (row, col).
  int streams() const { return !multi() ? 1 : vision() ? 2 : rule == stream_rule::mrope_interleaved_4 ? 4 : 3; }
  bool operator==(const stream_layout&) const = default;
};

// The layers of the model that apply no RoPE at all, so that a spec never claims
// that every layer rotates when the config says otherwise:
//   Llama 4 (llama4_text): transformers Llama4TextConfig `no_rope_layers`, one entry per layer,
//     1 = the layer uses RoPE, 0 = NoPE (despite the name); when absent, null or empty it is
//     [int((i + 1) % no_rope_layer_interval != 0) for i in range(num_hidden_layers)], interval
//     4 by default. modeling_llama4.py Llama4TextAttention: use_rope = no_rope_layers[layer_idx],
//     and apply_rotary_emb runs only `if self.use_rope`.
//   Cohere2: modeling_cohere2.py / modular_cohere2.py Cohere2Attention sets sliding_window only
//     for layer_types[i] == "sliding_attention" (older code: (i + 1) % sliding_window_pattern
//     != 0, pattern 4 by default) and applies apply_rotary_pos_emb only `if self.sliding_window
//     is not None`: full_attention layers have no RoPE.
//   Qwen3-Next: modular_qwen3_next.py Qwen3NextDecoderLayer runs Qwen3NextGatedDeltaNet, which
//     takes no position_embeddings, on "linear_attention" layers (Qwen3NextConfig: all but every
//     full_attention_interval-th layer, default 4, when layer_types is absent).
// The reader fills it (spec/rope_setups.cpp); `rule` empty means every layer rotates.
struct layers_without_rope {
  std::string rule;                   // how the config says which layers skip RoPE, naming its field
  std::string field;                  // that field's path, for messages ("text_config.no_rope_layers")
  std::int64_t layers = 0;            // the model's layer count (num_hidden_layers, else the
                                      // per-layer list's length); 0: the config gives none
  std::vector<std::int64_t> indices;  // the layers without RoPE, ascending (below `layers`)
  std::int64_t every = 0;             // periodic rule: layer i has none iff (i + 1) % every == 0
  std::string layer_type;             // the layer type that has no RoPE (Cohere2: full_attention)

  bool any() const { return !rule.empty(); }
  bool skips(std::int64_t layer) const {
    if (every > 0) return (layer + 1) % every == 0;
    for (const std::int64_t i : indices)
      if (i == layer) return true;
    return false;
  }
  bool operator==(const layers_without_rope&) const = default;
};

// "layers without RoPE: 3, 7, …, 47 (12 of 48; text_config.no_rope_layers)", or "every layer
// applies RoPE"; for headers, reprs and the docs' examples.
std::string describe(const layers_without_rope& l);

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
  std::int64_t max_position_embeddings = 0;  // the config's context (0: not given)
  std::string layer_type = {};  // the layer type whose RoPE this is, when the config has several
  stream_layout streams = {};  // position streams (M-RoPE, vision); single for 1-D RoPE
  layers_without_rope without_rope = {};  // the model's layers that apply no RoPE at all
  std::optional<std::int64_t> layer = {};  // the layer whose RoPE this is (--layer / "layer")
  // Every field, the scaling's included (reference/double_tier_memo.cpp keys on it).
  bool operator==(const rope_spec&) const = default;
};

// True when the scaled θ_j or A depend on the sequence length.
inline bool depends_on_sequence_length(const rope_spec& spec) {
  if (const auto* d = std::get_if<dynamic_scaling>(&spec.scaling))
    return d->convention != scaling_convention::vllm;
  return std::holds_alternative<longrope_scaling>(spec.scaling);
}

}  // namespace ropecheck
