// Reads a ropecheck spec: a JSON object that accepts a Hugging Face config.json as is.
// Keys read (all others are ignored, as a config.json carries many):
//   head_dim | qk_rope_head_dim | hidden_size / num_attention_heads | n_embd / n_head
//   rope_theta | rotary_emb_base                       (default 10000, the Transformers default)
//   rotary_dim | partial_rotary_factor | rotary_pct    (default: the whole head)
//   pairing: "half" | "adjacent"                       (default "half"; "adjacent" for GPT-J
//                                                        and DeepSeek configs, whose code pairs so)
//   rope_scaling: null, absent or of type "default"    (other scalings are refused for now)
// Errors name the file, the field and the value (spec_error).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "spec/rope_spec.h"

namespace ropecheck {

class spec_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

rope_spec read_spec(const std::filesystem::path& file);
rope_spec parse_spec(const nlohmann::json& config, std::string_view source);

}  // namespace ropecheck
