#include "tools/golden.h"

#include <fmt/format.h>

#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::golden {

std::span<const golden_config> golden_configs() {
  static const std::vector<golden_config> configs = {
      {"llama2-7b-half", "LLaMA-2-7B (Hugging Face layout)", "Llama-2-7b-hf.json",
       {128, 128, 10000, pairing::half_split, ""}},
      {"llama2-7b-adjacent", "LLaMA-2-7B (Meta's original freqs_cis layout)",
       "Llama-2-7b-hf.json", {128, 128, 10000, pairing::adjacent, ""}},
      {"llama3-8b-half", "Meta-Llama-3-8B (Hugging Face layout)", "Meta-Llama-3-8B.json",
       {128, 128, 500000, pairing::half_split, ""}},
      {"llama3-8b-adjacent", "Meta-Llama-3-8B (Meta's original layout)", "Meta-Llama-3-8B.json",
       {128, 128, 500000, pairing::adjacent, ""}},
      {"base1e6-d128-half", "Mistral-7B-Instruct-v0.2, CodeLlama-7B, Qwen2.5-7B",
       "Mistral-7B-Instruct-v0.2.json, CodeLlama-7b-hf.json, Qwen2.5-7B-Instruct.json",
       {128, 128, 1000000, pairing::half_split, ""}},
      {"gpt-neox-20b", "GPT-NeoX-20B (rotary_pct 0.25 of head 96)", "gpt-neox-20b.json",
       {96, 24, 10000, pairing::half_split, ""}},
      {"gpt-j-6b", "GPT-J-6B (rotary_dim 64 of head 256, rotate_every_two)", "gpt-j-6b.json",
       {256, 64, 10000, pairing::adjacent, ""}},
  };
  return configs;
}

std::vector<std::int64_t> golden_positions() {
  std::vector<std::int64_t> positions = {0, 1};
  for (int k = 1; k <= 31; ++k) {
    positions.push_back((std::int64_t{1} << k) - 1);
    if (k < 31) positions.push_back((std::int64_t{1} << k) + 1);
  }
  return positions;
}

double golden_input(int c) { return ((37 * c) % 29 - 14) / 8.0 + (c + 1) / 1024.0; }

std::string golden_text(const golden_config& config) {
  using reference::mp_real;
  const auto params = reference::params_from_spec<mp_real>(config.spec);
  std::vector<mp_real> x(config.spec.head_dim);
  for (int c = 0; c < config.spec.head_dim; ++c) x[c] = golden_input(c);

  std::string out = fmt::format(
      "# ropecheck golden vectors: {}\n"
      "# models: {}\n"
      "# from ../shared/model-configs/{}\n"
      "# head_dim {} rotary_dim {} base {} pairing {}\n"
      "# input x_c = ((37*c) mod 29 - 14)/8 + (c+1)/1024, exact in binary\n"
      "# per position: a line 'position m', then lines 'c y_c' for c < rotary_dim (the other "
      "dims pass through)\n"
      "# values: the 256-bit reference (elementwise form), 46 significant digits, regenerated "
      "by ropecheck_make_golden\n",
      config.name, config.models, config.config, config.spec.head_dim, config.spec.rotary_dim,
      config.spec.base, to_string(config.spec.pair));
  for (std::int64_t m : golden_positions()) {
    const auto y = reference::rope_elementwise<mp_real>(x, m, params);
    out += fmt::format("position {}\n", m);
    for (int c = 0; c < config.spec.rotary_dim; ++c)
      out += fmt::format("{} {}\n", c, y[c].str(45, std::ios_base::scientific));
  }
  return out;
}

}  // namespace ropecheck::golden
