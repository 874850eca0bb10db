// The catalog of scaling types: one entry per rope_type with everything ropecheck knows of it
// besides its two formulas (reference/scaling.cpp at 266 bits, fast/frequencies.cpp in long
// double):
// - the keys a scaling block (Hugging Face `rope_scaling` or the current `rope_parameters`) may
//   carry for that type, and the reader that turns them into its struct of rope_scaling
//   (rope_spec.h), with everything that depends on where a key appeared (top-level or in-block
//   L0, the spec's scaling_convention) resolved here, once;
// - the conventions whose formulas differ for it (docs/scaling.md, "Conventions");
// - its one-line description;
// - its parameters with the values published configs give them: the audit's config forensics
//   tries each at its other values, and the properties draw every type from them;
// - a minimal block, which the variant test reads.
// The catalog is the one list of the rope_types ropecheck reads; adding a type adds one entry
// here (docs/scaling.md, "Adding a scaling type", lists the other places it touches).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  scaling_convention own_convention = scaling_convention::hf;  // it, as this type reads it
  int rotated_pairs = 0;  // proportional: pairs with θ_j ≠ 0 (read with the rotated dims)
};

// Which values a parameter takes in published configs.
enum class published_values {
  factors,          // published_factors() (forensics adds 1 and 1/s, ggml's freq_scale)
  contexts,         // published_contexts() (forensics adds the spec's max_position_embeddings)
  flag,             // false and true
  listed,           // parameter::listed
  per_pair_growth,  // a list of rotary_dim/2 factors 1 + g·j, g from parameter::listed
  head_fraction,    // a fraction of the head from parameter::listed that rotates at least one pair
};

// Where a config writes the key.
enum class placement { block, top_level, block_or_top_level };

// One parameter of a type, as configs give it.
struct parameter {
  std::string_view key;
  published_values values;
  std::vector<double> listed = {};
  placement where = placement::block;
  bool optional = false;  // configs often leave it out (then drawn absent now and then)
  // The struct's field, for config forensics; null for a parameter forensics does not vary on
  // its own (a table, an optional mscale: config_neighbours.cpp has structural edits for them).
  double (*get)(const rope_scaling&) = nullptr;
  void (*set)(rope_scaling&, double) = nullptr;
  std::string_view mistake = {};  // the config mistake another value would be
  bool with_previous = false;     // optional, drawn exactly when the one before it is (a pair)
};

struct kind {
  std::string_view name;  // rope_type as a config writes it
  scaling_type type;
  std::vector<std::string_view> keys;  // the keys of this type, besides the common ones
  rope_scaling (*read)(const nlohmann::json& block, const context& ctx);
  std::string (*describe)(const rope_scaling&);  // one line: the type and its parameters
  // The conventions whose formula differs for this type (the first is hf); every other
  // convention reads as hf, the code it then agrees with. Empty: the type has none.
  std::vector<scaling_convention> conventions;
  std::vector<parameter> parameters;
  int min_rotary_dim = 2;     // ntk's and dynamic's exponent d/(d − 2) needs d > 2
  bool whole_head = false;    // rotates its own pairs of the whole head (proportional)
  std::string_view example = {};  // a minimal block for head_dim 8, JSON
};

// Every rope_type read (Transformers' modeling_rope_utils ROPE_INIT_FUNCTIONS plus "default",
// ropecheck's "ntk", and Phi-3's first name "su" for longrope).
std::span<const kind> catalog();
const kind* find(std::string_view name);
// "default, linear, ..." for messages.
std::string names();
// The catalog entry of a type: its first rope_type ("default" for none, "longrope" before "su").
const kind& of(scaling_type type);

// The scale factors published configs use, most common first, and their original context
// lengths (powers of two, ascending).
std::span<const double> published_factors();
std::span<const double> published_contexts();

}  // namespace ropecheck::spec_scaling
