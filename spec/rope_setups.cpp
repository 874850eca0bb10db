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
constexpr std::array<std::string_view, 15> keys_read = {
    "rope_theta", "rotary_emb_base", "rotary_dim", "partial_rotary_factor", "rotary_pct",
    "rope_scaling", "rope_parameters", "qk_rope_head_dim", "rope_local_base_freq",
    "rotary",          // GPT-J's "this model uses RoPE" flag
    "rope_ratio",      // ChatGLM (model_families.h; refused for other model types)
    "original_rope",   // ChatGLM: true is the only form its code implements
    "rope_interleave", // DeepSeek-V3 in transformers: adjacent (true) or half-split pairs
    "no_rope_layers",  // Llama 4: which layers skip RoPE (1 = RoPE, 0 = NoPE); the others' is unchanged
    "no_rope_layer_interval",  // Llama 4: every N-th layer is NoPE when no_rope_layers is absent
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
  if (!types) return text.derived_layer_types.is_null() ? nullptr : &text.derived_layer_types;
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

namespace {

// The layer count the config gives: num_hidden_layers (at most 2^20, as head widths), or 0.
std::int64_t layer_count(const text_model& text, std::string_view source) {
  return f::small_int(*text.config, source, text.prefix, "num_hidden_layers").value_or(0);
}

// Periodic NoPE layers: (i + 1) % every == 0, listed when the layer count is known.
layers_without_rope every_nth(std::int64_t every, std::int64_t layers, std::string field, std::string rule) {
  layers_without_rope w;
  w.rule = std::move(rule);
  w.field = std::move(field);
  w.every = every;
  w.layers = layers;
  for (std::int64_t i = every - 1; i < layers; i += every) w.indices.push_back(i);
  return w;
}

// Llama 4: transformers Llama4TextConfig.__post_init__ keeps a non-empty no_rope_layers (1 = the
// layer uses RoPE, 0 = NoPE; "at least the same length as the number of layers") and otherwise
// builds [int((i + 1) % no_rope_layer_interval != 0) for i in range(num_hidden_layers)] with
// no_rope_layer_interval = 4 by default; modeling_llama4.py Llama4TextAttention reads
// use_rope = no_rope_layers[layer_idx] and calls apply_rotary_emb only `if self.use_rope`.
layers_without_rope llama4_layers(const text_model& text, std::string_view source) {
  const json& config = *text.config;
  const std::int64_t layers = layer_count(text, source);
  const auto interval = f::small_int(config, source, text.prefix, "no_rope_layer_interval");
  const json* list = f::given(config, "no_rope_layers");
  const std::string list_field = f::path(text.prefix, "no_rope_layers");
  if (list && !list->is_array())
    f::fail(source, list_field, *list, "is not a list of 0/1 integers (1 = the layer uses RoPE, 0 = NoPE)");
  if (!list || list->empty()) {  // transformers: `no_rope_layers if no_rope_layers else default`
    const std::string field = f::path(text.prefix, "no_rope_layer_interval");
    return every_nth(interval.value_or(4), layers, field,
                     interval ? fmt::format("every {}th layer is NoPE ({} {})", *interval, field, *interval)
                              : fmt::format("every 4th layer is NoPE (no no_rope_layers; {} 4, "
                                            "transformers Llama4TextConfig's default)", field));
  }
  for (const json& v : *list)
    if (!v.is_number_integer() || (v.get<std::int64_t>() != 0 && v.get<std::int64_t>() != 1))
      f::fail(source, list_field, *list,
              fmt::format("is not a list of 0/1 integers (1 = the layer uses RoPE, 0 = NoPE): holds {}", v.dump()));
  const auto entries = static_cast<std::int64_t>(list->size());
  if (layers > 0 && entries < layers)
    f::fail(source, list_field, *list,
            fmt::format("has {} entries, fewer than num_hidden_layers {} (one per layer)", entries, layers));
  layers_without_rope w;
  w.rule = fmt::format("the layers whose {} entry is 0 are NoPE (1 = RoPE)", list_field);
  w.field = list_field;
  w.layers = layers > 0 ? layers : entries;
  for (std::int64_t i = 0; i < w.layers; ++i)
    if ((*list)[static_cast<std::size_t>(i)].get<std::int64_t>() == 0) w.indices.push_back(i);
  return w;
}

// The layers of one layer type, from layer_types (one entry a layer; transformers
// layer_type_validation: as many as num_hidden_layers), when that type applies no RoPE.
layers_without_rope layers_of_type(const text_model& text, const json& types, std::int64_t layers,
                                   std::string_view rope_free, std::string_view source) {
  const std::string field = f::path(text.prefix, "layer_types");
  const auto entries = static_cast<std::int64_t>(types.size());
  if (layers > 0 && entries != layers)
    f::fail(source, field, types, fmt::format("has {} entries, not num_hidden_layers {}", entries, layers));
  layers_without_rope w;
  w.rule = fmt::format("{} layers ({}) apply no RoPE", rope_free, field);
  w.field = field;
  w.layer_type = rope_free;
  w.layers = entries;
  for (std::int64_t i = 0; i < entries; ++i)
    if (types[static_cast<std::size_t>(i)] == rope_free) w.indices.push_back(i);
  return w;
}

// Layer types derived from a period, as transformers' configs derive them when the config lists
// none: layer i is `every_nth` when (i + 1) % period == 0, else `other`.
json derived_types(std::int64_t layers, std::int64_t period, std::string_view every_nth, std::string_view other) {
  json types = json::array();
  for (std::int64_t i = 0; i < layers; ++i) types.push_back((i + 1) % period == 0 ? every_nth : other);
  return types;
}

// Families whose config classes derive layer_types from a period when the config lists none
// (layer i is `every_nth` when (i + 1) % period == 0, else `other`), and whose layers of type
// `rope_free` apply no RoPE. A family here is one entry; the rule is periodic_layers below.
struct periodic_layer_types {
  std::string_view model_type;
  std::string_view period_key;
  std::int64_t default_period;
  std::string_view config_class;  // named when its default period is used
  std::string_view every_nth;
  std::string_view other;
  std::string_view rope_free;
};
constexpr periodic_layer_types periodic_families[] = {
    // Cohere2: modular_cohere2.py Cohere2Attention sets sliding_window only for layer_types[i] ==
    // "sliding_attention" (Cohere2Config derives them from sliding_window_pattern, 4 by default;
    // older code read the pattern directly) and applies apply_rotary_pos_emb only `if
    // self.sliding_window is not None`.
    {"cohere2", "sliding_window_pattern", 4, "Cohere2Config", "full_attention", "sliding_attention",
     "full_attention"},
    // Qwen3-Next: modular_qwen3_next.py Qwen3NextDecoderLayer runs Qwen3NextGatedDeltaNet, which
    // takes no position_embeddings, on "linear_attention" layers; only "full_attention" layers
    // (Qwen3NextAttention) rotate. Qwen3NextConfig derives layer_types from
    // full_attention_interval, 4 by default.
    {"qwen3_next", "full_attention_interval", 4, "Qwen3NextConfig", "full_attention", "linear_attention",
     "linear_attention"},
};

layers_without_rope periodic_layers(text_model& text, const periodic_layer_types& p, std::string_view source) {
  const std::int64_t layers = layer_count(text, source);
  if (const json* types = layer_types_of(text, source))
    return layers_of_type(text, *types, layers, p.rope_free, source);
  const auto given = f::small_int(*text.config, source, text.prefix, p.period_key);
  const std::int64_t every = given.value_or(p.default_period);
  const std::string field = f::path(text.prefix, p.period_key);
  const std::string rule =
      fmt::format("{} layers apply no RoPE: every {}th layer is {}, the others {} ({} {}{})", p.rope_free, every,
                  p.every_nth, p.other, field, every,
                  given ? "" : fmt::format(", transformers {}'s default", p.config_class));
  layers_without_rope w;
  if (p.rope_free == p.every_nth) {  // the periodic layers are the ones without RoPE
    w = every_nth(every, layers, field, rule);
  } else {  // all but the periodic ones
    w.rule = rule;
    w.field = f::path(text.prefix, "layer_types");
    w.layers = layers;
    for (std::int64_t i = 0; i < layers; ++i)
      if ((i + 1) % every != 0) w.indices.push_back(i);
  }
  w.layer_type = std::string(p.rope_free);
  if (layers > 0) text.derived_layer_types = derived_types(layers, every, p.every_nth, p.other);
  return w;
}

}  // namespace

namespace {

// A config whose every layer skips RoPE has nothing to check: refused, never read as RoPE.
const layers_without_rope& with_some_rope(const layers_without_rope& w, const text_model& text,
                                          std::string_view source) {
  const bool none_rotates =
      w.every == 1 || (w.layers > 0 && static_cast<std::int64_t>(w.indices.size()) == w.layers);
  if (!none_rotates) return w;
  const std::string key = text.prefix.empty() ? w.field : w.field.substr(text.prefix.size() + 1);
  const json* value = f::given(*text.config, key);
  f::fail(source, w.field, value ? *value : json(w.every),
          fmt::format("leaves no layer that applies RoPE ({}): nothing to check", w.rule));
}

// transformers' PreTrainedConfig.validate_layer_type accepts these layer_types entries
// (configuration_utils.py ALLOWED_LAYER_TYPES, with its legacy "attention" and "mamba"); any
// other is a config transformers refuses, so ropecheck refuses it too rather than guess
// whether such a layer rotates.
constexpr std::string_view known_layer_types[] = {
    "full_attention", "sliding_attention", "chunked_attention", "linear_attention",
    "compressed_sparse_attention", "heavily_compressed_attention", "deepseek_sparse_attention",
    "minimax_m3_sparse", "conv", "sparse", "dense", "hybrid", "hybrid_sliding", "moe", "attention", "mamba"};

void refuse_unknown_layer_types(const text_model& text, std::string_view source) {
  const json* types = f::given(*text.config, "layer_types");
  if (!types || !types->is_array()) return;
  for (std::size_t i = 0; i < types->size(); ++i) {
    const json& t = (*types)[i];
    const bool known = t.is_string() && std::find(std::begin(known_layer_types), std::end(known_layer_types),
                                                  t.get<std::string>()) != std::end(known_layer_types);
    if (!known)
      f::fail(source, fmt::format("{}[{}]", f::path(text.prefix, "layer_types"), i), t,
              "is not a layer type transformers knows (full_attention, sliding_attention, chunked_attention, "
              "linear_attention, ...): whether such a layer rotates is not known");
  }
}

layers_without_rope rope_free_layers(text_model& text, std::string_view model_type, std::string_view source) {
  if (model_type == "llama4_text" || model_type == "llama4") return llama4_layers(text, source);
  for (const periodic_layer_types& p : periodic_families)
    if (model_type == p.model_type) return periodic_layers(text, p, source);
  // Every layer rotates; the layer count still bounds --layer (layer_types has one entry a layer).
  layers_without_rope every_layer;
  every_layer.layers = layer_count(text, source);
  if (const json* types = layer_types_of(text, source); types && every_layer.layers == 0)
    every_layer.layers = static_cast<std::int64_t>(types->size());
  return every_layer;
}

}  // namespace

layers_without_rope find_layers_without_rope(text_model& text, std::string_view model_type,
                                             std::string_view source) {
  refuse_unknown_layer_types(text, source);
  return with_some_rope(rope_free_layers(text, model_type, source), text, source);
}

std::string layer_type_of(const text_model& text, std::int64_t layer) {
  const json* types = f::given(*text.config, "layer_types");
  if (!types) types = text.derived_layer_types.is_null() ? nullptr : &text.derived_layer_types;
  if (!types || !types->is_array() || layer >= static_cast<std::int64_t>(types->size())) return "";
  const json& t = (*types)[static_cast<std::size_t>(layer)];
  return t.is_string() ? t.get<std::string>() : "";
}

void check_layer(const layers_without_rope& without, std::int64_t layer, std::string_view source) {
  const json value(layer);
  if (layer < 0) f::fail(source, "layer", value, "is not a layer index >= 0");
  // A periodic rule says a layer has no RoPE whatever the layer count; any other answer needs it.
  const bool periodic_nope = without.every > 0 && without.skips(layer);
  if (without.layers == 0 && !periodic_nope)
    f::fail(source, "layer", value,
            "cannot be checked: the config gives no num_hidden_layers, so whether the layer exists is not "
            "known (refused rather than guessed)");
  if (without.layers > 0 && layer >= without.layers)
    f::fail(source, "layer", value,
            fmt::format("is past the model's last layer {} ({} layers)", without.layers - 1, without.layers));
  if (!without.skips(layer)) return;
  std::string why;
  if (without.every > 0)
    why = fmt::format("({} + 1) % {} {} == 0", layer, without.field, without.every);
  else if (!without.layer_type.empty())
    why = fmt::format("{}[{}] = \"{}\"", without.field, layer, without.layer_type);
  else
    why = fmt::format("{}[{}] = 0", without.field, layer);
  f::fail(source, "layer", value, fmt::format("is a layer that applies no RoPE: {} (nothing to check)", why));
}

void refuse_rope_free_layer_type(const layers_without_rope& without, const text_model& text,
                                 std::string_view layer_type, std::string_view source) {
  if (layer_type.empty() || !without.any()) return;
  bool rope_free = layer_type == without.layer_type;
  if (!rope_free && f::given(*text.config, "layer_types")) {  // Llama 4 with layer_types
    bool some = false;
    rope_free = true;
    for (std::int64_t i = 0; i < without.layers; ++i)
      if (layer_type_of(text, i) == layer_type) {
        some = true;
        rope_free = rope_free && without.skips(i);
      }
    rope_free = some && rope_free;
  }
  if (rope_free)
    f::fail(source, "layer_type", json(std::string(layer_type)),
            fmt::format("is a layer type that applies no RoPE in this model ({}): nothing to check",
                        without.rule));
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
