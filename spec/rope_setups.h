// Where a config keeps its RoPE settings: the text model's object (the top level, or
// `text_config` in vision-language configs), its one scaling block (`rope_scaling` or
// `rope_parameters`), or one block per layer type (`rope_parameters: {"full_attention": {…},
// "sliding_attention": {…}}` with `layer_types`, or Gemma 3's older `rope_local_base_freq`), and
// the check that no RoPE-looking key is left unread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ropecheck::spec_setups {

using json = nlohmann::json;

// The object that holds the text model's keys, and its path ("" or "text_config").
struct text_model {
  const json* config = nullptr;
  std::string prefix;
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

// The setup the caller asked for (`layer_type`, "" for none). Several setups and no choice, or a
// choice the config does not have, are spec_errors listing the choices.
setup choose(const std::vector<setup>& setups, const text_model& text, std::string_view layer_type,
             std::string_view source);

// Refuses any RoPE-looking key of the text model (and, with text_config, of the top level) that
// the reader does not read; keys starting with "_" are annotations and skipped.
void refuse_unread_rope_keys(const json& root, const text_model& text, std::string_view source);

}  // namespace ropecheck::spec_setups
