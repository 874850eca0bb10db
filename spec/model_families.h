// The RoPE layout of each model family, by `model_type`: which coordinates are paired, and the
// family's own rules where its config does not spell them out (a default rotated fraction,
// ChatGLM's half-head rotary and rope_ratio). One row per family, each citing the modeling
// source it was read from; docs/pairing.md is the same table for people.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "spec/rope_spec.h"

namespace ropecheck::spec_families {

struct family {
  std::string_view model_type;
  pairing pair;
  std::optional<double> default_rotary_fraction;  // when the config gives no partial_rotary_factor
  bool chatglm = false;   // rotary = half of kv_channels; base 10000·rope_ratio (modeling_chatglm.py)
  std::string_view source;  // the modeling file the row was read from
};

std::span<const family> catalog();
// nullptr for a model_type not in the table.
const family* find(std::string_view model_type);

}  // namespace ropecheck::spec_families
