// The position-stream form: M-RoPE and 2-D vision RoPE. Pair j turns by
// p_{s(j)}·θ_{f(j)}, cos and sin of that angle from MPFR. The rules, each from its modeling code:
//   M-RoPE, contiguous (transformers modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb: cos/sin
//     split by mrope_section, chunk i from stream i % 3; GLM-4.1V modeling_glm4v.py the same over
//     adjacent pairs): s(j) = 0 below s0, 1 below s0 + s1, else 2; f(j) = j.
//   M-RoPE, interleaved (modeling_qwen3_vl.py apply_interleaved_mrope): height at j ≡ 1, width at
//     j ≡ 2 (mod 3) below 3·section; f(j) = j.
//   M-RoPE, interleaved over four streams (ggml-cpu ops.cpp ggml_mrope_cache_init, is_imrope:
//     sector = j mod Σ sections; h if sector ≡ 1 (mod 3) and sector < 3·s1, w if ≡ 2 and < 3·s2,
//     t if ≡ 0 and < 3·s0, else the fourth stream e); f(j) = j.
//   vision, rows first (modeling_qwen2_vl.py VisionRotaryEmbedding(head_dim/2) and rot_pos_emb:
//     [h·θ', w·θ'] with θ'_k = base^(−2k/(d/2)) = θ_{2k}): s(j) = row for j < P/2, else column;
//     f(j) = 2·(j mod P/2).
//   vision, columns first (modeling_llama4.py Llama4VisionRotaryEmbedding: [x·θ', y·θ'],
//     x = column): the same with the axes swapped.
//   vision, alternating (mistral-inference rope.py precompute_freqs_cis_2d: freqs_h from
//     freqs[::2], freqs_w from freqs[1::2]): s as rows first; f(j) = 2j, then 2(j − P/2) + 1.
// The rules are written here again on purpose (reference/ shares no code with what it judges:
// spec/stream_layout.cpp is the rest of the project's spelling).
#include <fmt/format.h>

#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {

namespace {

int pairs_per_axis(const stream_layout& layout, int rotary_dim) {
  if ((rotary_dim / 2) % 2 != 0)
    throw reference_error(fmt::format("vision stream layout {}: rotary_dim {} does not split into "
                                      "two equal axes of pairs", to_string(layout.rule), rotary_dim));
  return rotary_dim / 4;
}

}  // namespace

int position_stream(const stream_layout& layout, int rotary_dim, int j) {
  const auto& s = layout.section;
  switch (layout.rule) {
    case stream_rule::single: return 0;
    case stream_rule::mrope_sections:
    case stream_rule::mrope_interleaved:
    case stream_rule::mrope_interleaved_4: {
      if (s.size() != 3) throw reference_error(fmt::format("mrope section: {} streams, not 3", s.size()));
      if (s[0] + s[1] + s[2] != rotary_dim / 2)
        throw reference_error(fmt::format("mrope section: {} pairs, not rotary_dim/2 = {}",
                                          s[0] + s[1] + s[2], rotary_dim / 2));
      if (layout.rule == stream_rule::mrope_interleaved_4) {
        const int sector = j % (s[0] + s[1] + s[2]);
        if (sector % 3 == 1 && sector < 3 * s[1]) return 1;
        if (sector % 3 == 2 && sector < 3 * s[2]) return 2;
        if (sector % 3 == 0 && sector < 3 * s[0]) return 0;
        return 3;
      }
      if (layout.rule == stream_rule::mrope_interleaved) {
        if (j % 3 == 1 && j < 3 * s[1]) return 1;
        if (j % 3 == 2 && j < 3 * s[2]) return 2;
        return 0;
      }
      return j < s[0] ? 0 : j < s[0] + s[1] ? 1 : 2;
    }
    case stream_rule::vision_rows_first:
    case stream_rule::vision_alternating: return j < pairs_per_axis(layout, rotary_dim) ? 0 : 1;
    case stream_rule::vision_columns_first: return j < pairs_per_axis(layout, rotary_dim) ? 1 : 0;
  }
  throw reference_error("stream layout: unknown rule");
}

int position_stream_count(const stream_layout& layout) {
  if (!layout.multi()) return 1;
  if (layout.vision()) return 2;
  return layout.rule == stream_rule::mrope_interleaved_4 ? 4 : 3;
}

int stream_frequency_index(const stream_layout& layout, int rotary_dim, int j) {
  switch (layout.rule) {
    case stream_rule::vision_rows_first:
    case stream_rule::vision_columns_first: return 2 * (j % pairs_per_axis(layout, rotary_dim));
    case stream_rule::vision_alternating: {
      const int half = pairs_per_axis(layout, rotary_dim);
      return j < half ? 2 * j : 2 * (j - half) + 1;
    }
    default: return j;
  }
}

template <class Real>
std::vector<Real> rope_streams(std::span<const Real> x, std::span<const std::int64_t> positions,
                               const rotary_params<Real>& params, const stream_layout& layout) {
  validate_input(params, x, "x");
  using std::cos;
  using std::pow;
  using std::sin;
  const int d = params.rotary_dim;
  const int streams = position_stream_count(layout);
  if (static_cast<int>(positions.size()) != streams)
    throw reference_error(fmt::format("positions: {} streams given, the layout {} has {}",
                                      positions.size(), to_string(layout.rule), streams));
  std::vector<Real> y(x.begin(), x.end());
  for (int j = 0; j < d / 2; ++j) {
    const int f = stream_frequency_index(layout, d, j);
    const Real theta = params.explicit_inverse_frequencies.empty()
                           ? pow(params.base, Real(-2 * f) / d)
                           : params.explicit_inverse_frequencies[static_cast<std::size_t>(f)];
    const Real angle = Real(positions[static_cast<std::size_t>(position_stream(layout, d, j))]) * theta;
    const Real c = params.attention_factor * cos(angle);
    const Real s = params.attention_factor * sin(angle);
    const auto [a, b] = pair_of(params.pair, d, j);
    y[a] = x[a] * c - x[b] * s;
    y[b] = x[a] * s + x[b] * c;
  }
  return y;
}

template std::vector<mp_real> rope_streams(std::span<const mp_real>, std::span<const std::int64_t>,
                                           const rotary_params<mp_real>&, const stream_layout&);
template std::vector<double> rope_streams(std::span<const double>, std::span<const std::int64_t>,
                                          const rotary_params<double>&, const stream_layout&);

}  // namespace ropecheck::reference
