// Where a config keeps its RoPE settings: the text model's object (the top level, or
// `text_config` in vision-language configs), its one scaling block (`rope_scaling` or
// `rope_parameters`), or one block per layer type (`rope_parameters: {"full_attention": {…},
// "sliding_attention": {…}}` with `layer_types`, or Gemma 3's older `rope_local_base_freq`), the
// layers that apply no RoPE at all (Llama 4's NoPE layers, Cohere2's full-attention layers), and
// the check that no RoPE-looking key is left unread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/rope_spec.h"

namespace ropecheck::spec_setups {

using json = nlohmann::json;

// The object that holds the text model's keys, and its path ("" or "text_config").
struct text_model {
  const json* config = nullptr;
  std::string prefix;
  // Layer types the family's code derives when the config lists none (Cohere2's
  // sliding_window_pattern, add_derived_layer_types); null otherwise.
  json derived_layer_types = nullptr;
};

// One RoPE setup of the text model.
struct setup {
  std::string layer_type;         // "" when the config has one setup for every layer
  const json* block = nullptr;    // its scaling block (nullptr: unscaled, keys at the top level)
  std::string block_prefix;       // the block's path, e.g. "rope_parameters.full_attention"
  const json* base = nullptr;     // a base this setup alone uses (Gemma 3's local base), or nullptr
  std::string base_field;
};

text_model find_text_model(const json& root, std::string_view source);

std::vector<setup> find_setups(const text_model& text, std::string_view source);

// The text model's layers without RoPE (rope_spec.h layers_without_rope) by its family's rule:
// Llama 4's no_rope_layers / no_rope_layer_interval, Cohere2's full-attention layers (also
// filling text.derived_layer_types from sliding_window_pattern when the config has no
// layer_types). Bad values are spec_errors naming the field; other families get an empty rule.
layers_without_rope find_layers_without_rope(text_model& text, std::string_view model_type,
                                             std::string_view source);

// The layer type of layer `layer` (layer_types[layer], derived ones included), "" when the
// config names none. `layer` must already be checked by check_layer.
std::string layer_type_of(const text_model& text, std::int64_t layer);

// The layer asked for (--layer or the spec's "layer"), refused when the config gives no layer
// count (it cannot be told to exist), when it is past the last layer, or when it applies no
// RoPE (nothing to check). Errors name the field 'layer'.
void check_layer(const layers_without_rope& without, std::int64_t layer, std::string_view source);

// A layer type whose layers all apply no RoPE (Cohere2's full_attention; Llama 4 layer types
// that hold only NoPE layers) is refused: there is no RoPE to check.
void refuse_rope_free_layer_type(const layers_without_rope& without, const text_model& text,
                                 std::string_view layer_type, std::string_view source);

// The setup the caller asked for (`layer_type`, "" for none). Several setups and no choice, or a
// choice the config does not have, are spec_errors listing the choices.
setup choose(const std::vector<setup>& setups, const text_model& text, std::string_view layer_type,
             std::string_view source);

// Refuses any RoPE-looking key of the text model (and, with text_config, of the top level) that
// the reader does not read; keys starting with "_" are annotations and skipped.
void refuse_unread_rope_keys(const json& root, const text_model& text, std::string_view source);

}  // namespace ropecheck::spec_setups
