// The golden vectors (golden.h): real model configurations rotated by the 256-bit complex form
// and written with 46 digits, the files fixtures/golden/ holds.
#include "tools/golden.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "reference/real.h"
#include "reference/rope_forms.h"
#include "spec/spec_reader.h"

namespace ropecheck::golden {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(std::string_view file, const std::string& field, const json& value,
                            std::string_view why) {
  throw std::runtime_error(fmt::format("fixtures/model-configs/{}: field '{}': {} {}", file, field,
                                       value.dump(), why));
}

std::string string_field(std::string_view file, const std::string& path, const json& entry, const char* key) {
  if (!entry.contains(key) || !entry[key].is_string() || entry[key].get<std::string>().empty())
    malformed(file, path + "." + key, entry.value(key, json()), "is not a non-empty string");
  return entry[key].get<std::string>();
}

golden_config golden_entry(std::string_view file, const json& config, const json& entry, std::size_t index) {
  const std::string path = fmt::format("_golden[{}]", index);
  if (!entry.is_object()) malformed(file, path, entry, "is not an object");
  for (const auto& [key, value] : entry.items())
    if (key != "name" && key != "models" && key != "also_in" && key != "with" && key != "reads_as")
      malformed(file, path + "." + key, value, "is not a golden entry's key (name, models, also_in, with, reads_as)");
  if (!entry.contains("reads_as") || !entry["reads_as"].is_object())
    malformed(file, path + ".reads_as", entry.value("reads_as", json()), "is not an object (the spec written out)");
  std::string from(file);
  json patched = config;
  patched.erase("_golden");
  if (entry.contains("with")) {
    const json& with = entry["with"];
    if (with.is_string()) {
      const std::string key = with.get<std::string>();
      if (!config.contains(key) || !config[key].is_object())
        malformed(file, path + ".with", with, "names no object of this config");
      patched.merge_patch(config[key]);
      from += fmt::format(" ({})", key);
    } else if (with.is_object()) {
      patched.merge_patch(with);
    } else {
      malformed(file, path + ".with", with, "is neither a JSON merge patch nor a key of this config");
    }
  }
  if (entry.contains("also_in")) {
    const json& also = entry["also_in"];
    if (!also.is_array() || also.empty()) malformed(file, path + ".also_in", also, "is not an array of file names");
    for (const json& other : also) {
      if (!other.is_string()) malformed(file, path + ".also_in", also, "is not an array of file names");
      from += ", " + other.get<std::string>();
    }
  }
  const std::string name = string_field(file, path, entry, "name");
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    malformed(file, path + ".name", entry["name"], "is not a file stem of lowercase letters, digits and '-'");
  rope_spec spec = parse_spec(patched, from);
  return {name, string_field(file, path, entry, "models"), from, std::move(spec), std::move(patched),
          entry["reads_as"]};
}

}  // namespace

std::vector<golden_config> golden_configs(std::span<const model_config_text> model_configs) {
  std::vector<golden_config> configs;
  for (const model_config_text& file : model_configs) {
    const json config = json::parse(file.text);
    if (!config.contains("_golden")) continue;
    const json& entries = config["_golden"];
    if (!entries.is_array() || entries.empty()) malformed(file.name, "_golden", entries, "is not a non-empty array");
    for (std::size_t i = 0; i < entries.size(); ++i) configs.push_back(golden_entry(file.name, config, entries[i], i));
  }
  std::sort(configs.begin(), configs.end(),
            [](const golden_config& a, const golden_config& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < configs.size(); ++i)
    if (configs[i].name == configs[i - 1].name)
      throw std::runtime_error(fmt::format("fixtures/model-configs: golden file \"{}\" is declared twice ({} and {})",
                                           configs[i].name, configs[i - 1].config, configs[i].config));
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
