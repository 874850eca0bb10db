// The golden vectors (golden.h): real model configurations rotated by the 256-bit complex form
// and written with 46 digits, the files fixtures/golden/ holds.
#include "tools/golden.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

#include "reference/real.h"
#include "reference/rope_forms.h"
#include "spec/spec_reader.h"

namespace ropecheck::golden {
namespace {

// A scaled configuration: the model config's RoPE fields, copied from the file named (minus
// its _source), read by the spec reader like any config.json.
golden_config scaled(const char* name, const char* models, const char* config,
                     const char* config_json) {
  return {name, models, config, parse_spec(nlohmann::json::parse(config_json), config)};
}

}  // namespace

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
      // Scaled: θ'_j and A from reference/scaling.cpp (docs/scaling.md), Hugging Face convention.
      scaled("llama31-8b-llama3", "Llama-3.1-8B, Llama-3.1-8B-Instruct (llama3 scaling, factor 8)",
             "Llama-3.1-8B.json, Llama-3.1-8B-Instruct.json",
             R"json({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"max_position_embeddings":131072,"rope_theta":500000.0,"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}})json"),
      scaled("llama32-1b-llama3", "Llama-3.2-1B, Llama-3.2-1B-Instruct (llama3 scaling, factor 32)",
             "Llama-3.2-1B.json, Llama-3.2-1B-Instruct.json",
             R"json({"model_type":"llama","hidden_size":2048,"num_attention_heads":32,"head_dim":64,"max_position_embeddings":131072,"rope_theta":500000.0,"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,"low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}})json"),
      scaled("qwen25-7b-yarn", "Qwen2.5-7B-Instruct with its documented YaRN (factor 4 over 32768)",
             "Qwen2.5-7B-Instruct.json (_documented_yarn_rope_scaling)",
             R"json({"model_type":"qwen2","hidden_size":3584,"num_attention_heads":28,"max_position_embeddings":32768,"rope_theta":1000000.0,"rope_scaling":{"factor":4.0,"original_max_position_embeddings":32768,"type":"yarn"}})json"),
      scaled("deepseek-v3-yarn", "DeepSeek-V3 (YaRN factor 40, mscale 1, mscale_all_dim 1; rope part 64, adjacent)",
             "DeepSeek-V3.json",
             R"json({"model_type":"deepseek_v3","hidden_size":7168,"num_attention_heads":128,"max_position_embeddings":163840,"rope_theta":10000,"rope_scaling":{"beta_fast":32,"beta_slow":1,"factor":40,"mscale":1.0,"mscale_all_dim":1.0,"original_max_position_embeddings":4096,"type":"yarn"},"qk_rope_head_dim":64,"qk_nope_head_dim":128})json"),
      scaled("phi35-mini-longrope-short", "Phi-3.5-mini-instruct, LongRoPE short factors (sequence_length 4096 = L0)",
             "Phi-3.5-mini-instruct.json",
             R"json({"model_type":"phi3","hidden_size":3072,"num_attention_heads":32,"max_position_embeddings":131072,"original_max_position_embeddings":4096,"rope_theta":10000.0,"rope_scaling":{"long_factor":[1.0800000429153442,1.1100000143051147,1.1399999856948853,1.340000033378601,1.5899999141693115,1.600000023841858,1.6200000047683716,2.620000123977661,3.2300000190734863,3.2300000190734863,4.789999961853027,7.400000095367432,7.700000286102295,9.09000015258789,12.199999809265137,17.670000076293945,24.46000099182129,28.57000160217285,30.420001983642578,30.840002059936523,32.590003967285156,32.93000411987305,42.320003509521484,44.96000289916992,50.340003967285156,50.45000457763672,57.55000305175781,57.93000411987305,58.21000289916992,60.1400032043457,62.61000442504883,62.62000274658203,62.71000289916992,63.1400032043457,63.1400032043457,63.77000427246094,63.93000411987305,63.96000289916992,63.970001220703125,64.02999877929688,64.06999969482422,64.08000183105469,64.12000274658203,64.41000366210938,64.4800033569336,64.51000213623047,64.52999877929688,64.83999633789062],"short_factor":[1.0,1.0199999809265137,1.0299999713897705,1.0299999713897705,1.0499999523162842,1.0499999523162842,1.0499999523162842,1.0499999523162842,1.0499999523162842,1.0699999332427979,1.0999999046325684,1.1099998950958252,1.1599998474121094,1.1599998474121094,1.1699998378753662,1.2899998426437378,1.339999794960022,1.679999828338623,1.7899998426437378,1.8199998140335083,1.8499997854232788,1.8799997568130493,1.9099997282028198,1.9399996995925903,1.9899996519088745,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0799996852874756,2.0899996757507324,2.189999580383301,2.2199995517730713,2.5899994373321533,2.729999542236328,2.749999523162842,2.8399994373321533],"type":"longrope"},"sequence_length":4096})json"),
      scaled("phi35-mini-longrope-long", "Phi-3.5-mini-instruct, LongRoPE long factors (sequence_length 4097 > L0)",
             "Phi-3.5-mini-instruct.json",
             R"json({"model_type":"phi3","hidden_size":3072,"num_attention_heads":32,"max_position_embeddings":131072,"original_max_position_embeddings":4096,"rope_theta":10000.0,"rope_scaling":{"long_factor":[1.0800000429153442,1.1100000143051147,1.1399999856948853,1.340000033378601,1.5899999141693115,1.600000023841858,1.6200000047683716,2.620000123977661,3.2300000190734863,3.2300000190734863,4.789999961853027,7.400000095367432,7.700000286102295,9.09000015258789,12.199999809265137,17.670000076293945,24.46000099182129,28.57000160217285,30.420001983642578,30.840002059936523,32.590003967285156,32.93000411987305,42.320003509521484,44.96000289916992,50.340003967285156,50.45000457763672,57.55000305175781,57.93000411987305,58.21000289916992,60.1400032043457,62.61000442504883,62.62000274658203,62.71000289916992,63.1400032043457,63.1400032043457,63.77000427246094,63.93000411987305,63.96000289916992,63.970001220703125,64.02999877929688,64.06999969482422,64.08000183105469,64.12000274658203,64.41000366210938,64.4800033569336,64.51000213623047,64.52999877929688,64.83999633789062],"short_factor":[1.0,1.0199999809265137,1.0299999713897705,1.0299999713897705,1.0499999523162842,1.0499999523162842,1.0499999523162842,1.0499999523162842,1.0499999523162842,1.0699999332427979,1.0999999046325684,1.1099998950958252,1.1599998474121094,1.1599998474121094,1.1699998378753662,1.2899998426437378,1.339999794960022,1.679999828338623,1.7899998426437378,1.8199998140335083,1.8499997854232788,1.8799997568130493,1.9099997282028198,1.9399996995925903,1.9899996519088745,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0199997425079346,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0299997329711914,2.0799996852874756,2.0899996757507324,2.189999580383301,2.2199995517730713,2.5899994373321533,2.729999542236328,2.749999523162842,2.8399994373321533],"type":"longrope"},"sequence_length":4097})json"),
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
      "# from fixtures/model-configs/{}\n"
      "# head_dim {} rotary_dim {} base {} pairing {}\n"
      "# input x_c = ((37*c) mod 29 - 14)/8 + (c+1)/1024, exact in binary\n"
      "# per position: a line 'position m', then lines 'c y_c' for c < rotary_dim (the other "
      "dims pass through)\n"
      "# values: the 256-bit reference (elementwise form), 46 significant digits, regenerated "
      "by ropecheck_make_golden\n",
      config.name, config.models, config.config, config.spec.head_dim, config.spec.rotary_dim,
      config.spec.base, to_string(config.spec.pair));
  if (type_of(config.spec.scaling) != scaling_type::none) {
    // Unscaled files keep their header byte for byte; scaled ones say what was applied.
    out += fmt::format(
        "# rope_scaling {}, max_position_embeddings {}, sequence_length {}\n"
        "# scaled theta_j and attention factor A = {} from reference/scaling.cpp at 266 bits; "
        "cos and sin carry A\n",
        describe(config.spec.scaling), config.spec.max_position_embeddings,
        config.spec.sequence_length, params.attention_factor.str(30));
  }
  for (std::int64_t m : golden_positions()) {
    const auto y = reference::rope_elementwise<mp_real>(x, m, params);
    out += fmt::format("position {}\n", m);
    for (int c = 0; c < config.spec.rotary_dim; ++c)
      out += fmt::format("{} {}\n", c, y[c].str(45, std::ios_base::scientific));
  }
  return out;
}

namespace {

// Qwen2-VL / Qwen2.5-VL / Qwen3-VL get_rope_index for one image: `text_before` text tokens at
// (m, m, m); an image of grid_h × grid_w patches merged 2×2 into (grid_h/2) × (grid_w/2)
// tokens at (s, s + r, s + c), s = text_before (t stays s: one image frame); then text again
// from max + 1. Kept: a few tokens of each kind (every token would make the file needlessly long).
std::vector<std::vector<std::int64_t>> qwen_image_positions(std::int64_t text_before, std::int64_t grid_h,
                                                            std::int64_t grid_w) {
  const std::int64_t s = text_before, rows = grid_h / 2, cols = grid_w / 2;
  std::vector<std::vector<std::int64_t>> tokens;
  for (std::int64_t m : {std::int64_t{0}, text_before - 1}) tokens.push_back({m, m, m});
  const std::vector<std::pair<std::int64_t, std::int64_t>> kept = {
      {0, 0}, {0, cols - 1}, {rows - 1, 0}, {rows / 2, cols / 2 + 1}, {rows - 1, cols - 1}};
  for (const auto& [r, c] : kept) tokens.push_back({s, s + r, s + c});
  const std::int64_t after = s + std::max(rows, cols);  // max over the image's positions + 1
  for (std::int64_t m : {after, after + 2}) tokens.push_back({m, m, m});
  return tokens;
}

}  // namespace

std::span<const stream_golden_config> stream_golden_configs() {
  static const std::vector<stream_golden_config> configs = {
      {"qwen25-vl-7b-mrope", "Qwen2.5-VL-7B-Instruct (M-RoPE, mrope_section [16, 24, 24], contiguous)",
       "Qwen2.5-VL-7B-Instruct.json", "",
       "get_rope_index: 5 text tokens, a 392x392 image (28x28 patches of 14 px, merged 2x2: 14x14 "
       "tokens at t = 5, h = 5 + row, w = 5 + col), then text from 19",
       qwen_image_positions(5, 28, 28)},
      {"qwen3-vl-8b-mrope", "Qwen3-VL-8B-Instruct (M-RoPE, mrope_section [24, 20, 20], interleaved)",
       "Qwen3-VL-8B-Instruct.json", "",
       "get_rope_index: 5 text tokens, a 448x448 image (28x28 patches of 16 px, merged 2x2: 14x14 "
       "tokens at t = 5, h = 5 + row, w = 5 + col), then text from 19",
       qwen_image_positions(5, 28, 28)},
      {"qwen25-vl-7b-vision", "Qwen2.5-VL-7B-Instruct vision tower (2-D RoPE, rows first, head 80)",
       "Qwen2.5-VL-7B-Instruct.json", "vision",
       "rot_pos_emb: (row, col) of patches of a 28x28-patch image (corners, centre) and of a "
       "large one (row 70, col 100)",
       {{0, 0}, {0, 27}, {27, 0}, {13, 14}, {27, 27}, {70, 100}}},
      {"pixtral-mistral-small-31-vision", "Mistral-Small-3.1-24B (Pixtral vision tower, 2-D RoPE, alternating theta, head 64)",
       "Mistral-Small-3.1-24B-Instruct-2503.json", "vision",
       "(row, col) of 14-px patches of a 1540x1540 image: 110x110 patches (corners, centre)",
       {{0, 0}, {0, 109}, {109, 0}, {55, 54}, {109, 109}}},
      {"llama4-maverick-vision", "Llama-4-Maverick-17B-128E vision tower (2-D RoPE, columns first, adjacent, head 88)",
       "Llama-4-Maverick-17B-128E.json", "vision",
       "Llama4VisionRotaryEmbedding: (row + 1, col + 1) of patches of a 336x336 tile (24x24 patches of "
       "14 px: corners, centre), and the CLS token's (0, 0) (its angles masked to 0)",
       {{0, 0}, {1, 1}, {1, 24}, {24, 1}, {13, 12}, {24, 24}}},
  };
  return configs;
}

rope_spec stream_golden_spec(const stream_golden_config& config,
                             const std::filesystem::path& model_configs) {
  return read_spec(model_configs / config.config, spec_options{"", config.tower});
}

std::string stream_golden_text(const stream_golden_config& config,
                               const std::filesystem::path& model_configs) {
  using reference::mp_real;
  const rope_spec spec = stream_golden_spec(config, model_configs);
  const auto params = reference::params_from_spec<mp_real>(spec);
  std::vector<mp_real> x(spec.head_dim);
  for (int c = 0; c < spec.head_dim; ++c) x[c] = golden_input(c);
  std::string out = fmt::format(
      "# ropecheck golden vectors: {}\n"
      "# models: {}\n"
      "# from fixtures/model-configs/{}{}\n"
      "# head_dim {} rotary_dim {} base {} pairing {} stream layout {}\n"
      "# positions: {}\n"
      "# input x_c = ((37*c) mod 29 - 14)/8 + (c+1)/1024, exact in binary\n"
      "# per token: a line 'positions' with one position per stream, then lines 'c y_c' for c < "
      "rotary_dim\n"
      "# values: the 256-bit reference (position-stream form), 46 significant digits, "
      "regenerated by ropecheck_make_golden\n",
      config.name, config.models, config.config, config.tower.empty() ? "" : " (--tower vision)",
      spec.head_dim, spec.rotary_dim, spec.base, to_string(spec.pair), to_string(spec.streams.rule),
      config.why);
  for (const auto& p : config.tokens) {
    const auto y = reference::rope_streams<mp_real>(x, p, params, spec.streams);
    out += "positions";
    for (std::int64_t m : p) out += fmt::format(" {}", m);
    out += "\n";
    for (int c = 0; c < spec.rotary_dim; ++c)
      out += fmt::format("{} {}\n", c, y[c].str(45, std::ios_base::scientific));
  }
  return out;
}

}  // namespace ropecheck::golden
