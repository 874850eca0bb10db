// Finding a config's RoPE setups (rope_setups.h). The per-layer-type form and its detection
// follow transformers' RotaryEmbeddingConfigMixin.standardize_rope_params (a rope_parameters
// whose keys are layer types holds one dict per type); Gemma 3's older spelling follows
// transformers' modeling_gemma3.py, whose sliding-window layers build their rotary embedding
// with rope_theta = rope_local_base_freq and rope_type "default" (no scaling), while global
// layers use rope_theta and rope_scaling.
#include "spec/rope_setups.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "spec/json_fields.h"
#include "spec/spec_reader.h"

namespace ropecheck::spec_setups {
namespace {

namespace f = spec_fields;

// The RoPE-looking keys of a text model that the reader reads (spec_reader.cpp). Any other key
// whose name looks like a RoPE setting is refused: a reader that skips it would fall back to a
// default the model does not use.
constexpr std::array<std::string_view, 14> keys_read = {
    "rope_theta", "rotary_emb_base", "rotary_dim", "partial_rotary_factor", "rotary_pct",
    "rope_scaling", "rope_parameters", "qk_rope_head_dim", "rope_local_base_freq",
    "rotary",          // GPT-J's "this model uses RoPE" flag
    "rope_ratio",      // ChatGLM (model_families.h; refused for other model types)
    "original_rope",   // ChatGLM: true is the only form its code implements
    "rope_interleave", // DeepSeek-V3 in transformers: adjacent (true) or half-split pairs
    "no_rope_layers",  // Llama 4: which layers skip RoPE; the others' RoPE is unchanged
};

// ropecheck's own keys whose names look like RoPE settings; read from the spec's top level.
constexpr std::array<std::string_view, 1> own_keys = {"rope_ratio_applies_to"};

bool rope_looking(std::string_view key) {
  if (std::find(own_keys.begin(), own_keys.end(), key) != own_keys.end()) return false;
  std::string lower(key);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view word : {"rope", "rotary", "theta", "freq"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

bool is_read(std::string_view key) {
  return std::find(keys_read.begin(), keys_read.end(), key) != keys_read.end();
}

std::string joined(const std::vector<setup>& setups) {
  std::string out;
  for (const setup& s : setups) out += (out.empty() ? "" : ", ") + s.layer_type;
  return out;
}

const json* layer_types_of(const text_model& text, std::string_view source) {
  const json* types = f::given(*text.config, "layer_types");
  if (!types) return nullptr;
  if (!types->is_array() ||
      !std::all_of(types->begin(), types->end(), [](const json& t) { return t.is_string(); }))
    f::fail(source, f::path(text.prefix, "layer_types"), *types, "is not an array of strings");
  return types;
}

bool contains(const json* types, std::string_view name) {
  return types && std::any_of(types->begin(), types->end(),
                              [&](const json& t) { return t.get<std::string>() == name; });
}

}  // namespace

text_model find_text_model(const json& root, std::string_view source) {
  if (const json* text = f::given(root, "text_config")) {
    if (!text->is_object()) f::fail(source, "text_config", *text, "is not an object");
    return {text, "text_config"};
  }
  return {&root, ""};
}

std::vector<setup> find_setups(const text_model& text, std::string_view source) {
  const json& config = *text.config;
  const json* scaling = f::given(config, "rope_scaling");
  const json* parameters = f::given(config, "rope_parameters");
  // transformers reads rope_scaling into rope_parameters; two different values are ambiguous.
  if (scaling && parameters && *scaling != *parameters)
    f::fail(source, f::path(text.prefix, "rope_parameters"), *parameters,
            "disagrees with rope_scaling (two spellings of one setting)");
  const json* block = scaling ? scaling : parameters;
  const std::string block_prefix = f::path(text.prefix, scaling ? "rope_scaling" : "rope_parameters");
  if (block && !block->is_object()) f::fail(source, block_prefix, *block, "is not an object or null");
  const json* local_base = f::given(config, "rope_local_base_freq");

  const bool per_layer = block && !block->empty() &&
                         std::all_of(block->begin(), block->end(),
                                     [](const json& v) { return v.is_object(); });
  std::vector<setup> setups;
  if (per_layer) {
    if (local_base)
      f::fail(source, f::path(text.prefix, "rope_local_base_freq"), *local_base,
              fmt::format("is given with per-layer-type {} (two spellings of the local base)",
                          block_prefix));
    const json* types = layer_types_of(text, source);
    for (const auto& [name, value] : block->items()) {
      if (types && !contains(types, name))
        f::fail(source, f::path(block_prefix, name), value,
                fmt::format("is not one of layer_types {}", types->dump()));
      setups.push_back({name, &value, f::path(block_prefix, name), nullptr, ""});
    }
  } else if (local_base) {
    setups.push_back({"full_attention", block, block_prefix, nullptr, ""});
    setups.push_back({"sliding_attention", nullptr, "", local_base,
                      f::path(text.prefix, "rope_local_base_freq")});
  } else {
    setups.push_back({"", block, block_prefix, nullptr, ""});
  }
  return setups;
}

setup choose(const std::vector<setup>& setups, const text_model& text, std::string_view layer_type,
             std::string_view source) {
  if (setups.size() == 1 && setups.front().layer_type.empty()) {
    if (layer_type.empty()) return setups.front();
    // One setup for every layer: any layer type the config names uses it.
    const json* types = layer_types_of(text, source);
    if (contains(types, layer_type)) {
      setup chosen = setups.front();
      chosen.layer_type = layer_type;
      return chosen;
    }
    throw spec_error(fmt::format(
        "{}: field 'layer_type': \"{}\" is not a layer type of this config, which has one RoPE "
        "setup for every layer{}",
        source, layer_type, types ? fmt::format(" (layer_types: {})", types->dump()) : ""));
  }
  if (layer_type.empty() && setups.size() == 1) return setups.front();  // the only RoPE there is
  if (layer_type.empty()) {
    // Gemma 3's older spelling makes the local base the second setup; otherwise the setups are
    // the entries of one per-layer-type block.
    const bool local_base = setups.back().base != nullptr;
    const std::string& first = setups.front().block_prefix;
    throw spec_error(fmt::format(
        "{}: field '{}': holds one RoPE setup per layer type ({}); choose one with "
        "--layer-type NAME or the spec key \"layer_type\"",
        source, local_base ? setups.back().base_field : first.substr(0, first.rfind('.')),
        joined(setups)));
  }
  for (const setup& s : setups)
    if (s.layer_type == layer_type) return s;
  throw spec_error(fmt::format(
      "{}: field 'layer_type': \"{}\" has no RoPE setup in this config (it has: {})", source,
      layer_type, joined(setups)));
}

void refuse_unread_rope_keys(const json& root, const text_model& text, std::string_view source) {
  for (const auto& [key, value] : text.config->items()) {
    if (key.starts_with('_') || !rope_looking(key) || is_read(key)) continue;
    f::fail(source, f::path(text.prefix, key), value,
            "is a RoPE setting that ropecheck does not read (refused rather than ignored)");
  }
  if (text.config == &root) return;
  // With text_config, the text model's RoPE is read there; a top-level copy must agree with it.
  for (const auto& [key, value] : root.items()) {
    if (key == "text_config" || key.starts_with('_') || !rope_looking(key)) continue;
    const json* nested = f::given(*text.config, key);
    if (!nested)
      f::fail(source, key, value,
              "is a RoPE setting outside text_config, where ropecheck reads the text model's");
    if (*nested != value)
      f::fail(source, key, value, fmt::format("disagrees with text_config.{} {}", key, nested->dump()));
  }
}

}  // namespace ropecheck::spec_setups
