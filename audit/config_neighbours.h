// config_neighbours: the specs one config mistake away from the audited one. Turning a config
// into frequencies is code of its own, before any kernel runs, and its mistakes shipped: the
// scaling computed but not applied, a factor read from the wrong key (or as 1/s, ggml's
// freq_scale), YaRN's attention factor (mscale) ignored or applied twice, `truncate: false`
// ignored, LongRoPE's long factors on a short sequence, dynamic NTK's base computed once at
// another length, a default rope_theta, partial_rotary_factor ignored, a sliding-window layer
// given the global layer's RoPE. Each neighbour is the audited spec with one field at another
// conventional value (docs/scaling.md gives each formula and convention); the audit recomputes
// Y under each (detectors.cpp, detect_config_mismatch) and names the field with both values.
// The neighbours are rows of data (config_neighbours.cpp): a new mistake is one row.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck::audit {

struct config_neighbour {
  std::string field;       // as the config spells it: "rope_scaling.factor", "rope_theta", "layer_type"
  std::string value;       // the neighbour's value of it
  std::string spec_value;  // the audited spec's
  std::string mistake;     // how a kernel's config code gets there
  rope_spec spec;
};

// The neighbours of `spec`: `sequence_length` is the length the audit's reference used for the
// length-dependent scalings (the spec's, else the dump's highest position + 1), given to every
// neighbour so that only the edited field differs; `attention_factor` is the spec's A;
// `other_layer_types` are the config's other per-layer-type RoPE setups (none for one setup).
std::vector<config_neighbour> config_neighbours(const rope_spec& spec, std::int64_t sequence_length,
                                                double attention_factor,
                                                std::span<const rope_spec> other_layer_types = {});

// The config's other layer types' RoPE setups, for audit_input::other_layer_types: each setup
// of the config at `spec_file` whose layer type is not `layer_type`, read as the spec reader
// reads it. None when no layer type was chosen (one setup), for a vision tower, or for a setup
// the reader refuses (a layer type without RoPE).
std::vector<rope_spec> other_layer_type_specs(const std::filesystem::path& spec_file, std::string_view layer_type,
                                              const std::string& tower);

}  // namespace ropecheck::audit
