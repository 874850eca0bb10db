// Reads a ropecheck spec: a JSON object that accepts a Hugging Face config.json as is, in the
// older (`rope_theta` + `rope_scaling`) and the current (`rope_parameters`) transformers formats,
// with the text model's keys at the top level or nested under `text_config` (vision-language
// configs). docs/spec.md "The spec" lists every key. Nothing RoPE-related is ignored: a key that looks
// like a RoPE setting (its name holds "rope", "rotary", "theta" or "freq") and that the reader
// does not read is refused by name, never replaced by a default.
// Where a config holds several RoPE setups (one per layer type: Gemma 3's sliding and full
// attention), the caller picks one (`--layer-type`, or the spec's own `layer_type` key);
// leaving it out is an error listing the choices. Layers that apply no RoPE at all (Llama 4's
// NoPE layers, Cohere2's full-attention layers) are recorded in rope_spec::without_rope, and
// choosing one (--layer, --layer-type) is an error: there is nothing to check.
// Errors name the file, the field and the value (spec_error).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "spec/rope_spec.h"

namespace ropecheck {

class spec_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Choices made outside the spec file (command-line flags).
struct spec_options {
  std::string layer_type;  // --layer-type: which per-layer-type RoPE setup to read ("" = none)
  // --tower: "" or "text" reads the (text) model's RoPE; "vision" the 2-D RoPE of the
  // config's vision_config (Qwen2-VL/2.5-VL, GLM-4.1V, Pixtral, Llama 4 vision towers).
  std::string tower = {};
  // --layer: the layer (0-based) whose RoPE to read, checked against the config's layer count
  // and its layers without RoPE (Llama 4's NoPE layers, Cohere2's full-attention layers).
  std::optional<std::int64_t> layer = {};
};

rope_spec read_spec(const std::filesystem::path& file, const spec_options& options = {});
rope_spec parse_spec(const nlohmann::json& config, std::string_view source,
                     const spec_options& options = {});

}  // namespace ropecheck
