// One reader per rope_type: the keys a scaling block (Hugging Face `rope_scaling` or the current
// `rope_parameters`) may carry for that type, and the struct of rope_scaling (rope_spec.h) it
// reads them into, with everything that depends on where a key appeared (top-level or in-block
// L0, the spec's scaling_convention) resolved here, once. The catalog is the one list of the
// rope_types ropecheck reads; adding a type adds one entry here (docs/scaling.md, "Adding a
// scaling type", gives every formula and the other places it touches).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "spec/rope_spec.h"

namespace ropecheck::spec_scaling {

// What a reader may consult besides its own block.
struct context {
  std::string_view source;                               // the spec file, for messages
  std::string prefix;                                    // the block's path: "rope_scaling", ...
  std::string type_name;                                 // the rope_type as written
  std::optional<std::int64_t> max_position_embeddings;   // the text config's
  std::optional<std::int64_t> top_level_original;        // top-level L0 (Phi-3), if given
  std::string top_level_original_field;                  // its path, for messages
  int rotary_dim = 0;
  scaling_convention convention = scaling_convention::hf;  // the spec's scaling_convention
  int rotated_pairs = 0;  // proportional: pairs with θ_j ≠ 0 (read with the rotated dims)
};

struct kind {
  std::string_view name;                       // rope_type as a config writes it
  scaling_type type;
  std::initializer_list<std::string_view> keys;  // the keys of this type, besides the common ones
  rope_scaling (*read)(const nlohmann::json& block, const context& ctx);
};

// Every rope_type read (Transformers' modeling_rope_utils ROPE_INIT_FUNCTIONS plus "default",
// ropecheck's "ntk", and Phi-3's first name "su" for longrope).
std::span<const kind> catalog();
const kind* find(std::string_view name);
// "default, linear, ..." for messages.
std::string names();

}  // namespace ropecheck::spec_scaling
