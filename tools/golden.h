// Golden vectors: RoPE outputs of real model configurations at >= 40 significant digits,
// computed by the 256-bit reference (elementwise form) and stored as text in fixtures/golden/.
// The fixture test regenerates every file with golden_text() and fails on any changed digit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/rope_spec.h"

namespace ropecheck::golden {

struct golden_config {
  std::string name;     // file stem in fixtures/golden/
  std::string models;   // which public models use this configuration
  std::string config;   // the model-config file(s) in fixtures/model-configs/ it comes from
  rope_spec spec;
  nlohmann::json json = {};  // the config as the spec reader read it (patched by "with")
  // What the spec must read as, written out from the config's published numbers: head_dim,
  // rotary_dim, base, pairing ("half" or "adjacent") and rope_scaling (its one-line description).
  nlohmann::json reads_as = {};
};

// A file of fixtures/model-configs/: its name there and its text.
struct model_config_text {
  std::string_view name;
  std::string_view text;
};

// The golden configurations the model configs declare: each config's "_golden" array lists its
// golden files, each entry
//   {"name": FILE STEM, "models": WHO USES IT, "also_in": [OTHER CONFIGS WITH THE SAME RoPE],
//    "with": A JSON MERGE PATCH (RFC 7396) OR THE NAME OF A KEY OF THIS CONFIG HOLDING ONE,
//    "reads_as": {"head_dim", "rotary_dim", "base", "pairing", "rope_scaling"}: WRITTEN OUT}
// ("also_in" and "with" optional; golden_test holds the spec to "reads_as"). The spec is the config, patched, read by the spec reader.
// std::runtime_error naming the file and field for a malformed entry.
std::vector<golden_config> golden_configs(std::span<const model_config_text> model_configs);

// Positions: 0, 1, and 2^k − 1, 2^k + 1 for k = 1 … 31 (without 2^31 + 1).
std::vector<std::int64_t> golden_positions();

// The input vector, exact in binary: x_c = ((37·c) mod 29 − 14) / 8 + (c + 1) / 1024.
double golden_input(int c);

// The whole text of one golden file.
std::string golden_text(const golden_config& config);

// Golden vectors with position streams (M-RoPE, 2-D vision RoPE): a real configuration read
// from its fixtures/model-configs/ file (`tower` "vision" for a vision tower) and tokens at
// real image-grid positions, one position per stream each (`why` says how they were made).
struct stream_golden_config {
  std::string name;
  std::string models;
  std::string config;  // the fixtures/model-configs/ file
  std::string tower;   // "" (text model) or "vision"
  std::string why;     // how the positions were made (a header line)
  std::vector<std::vector<std::int64_t>> tokens;  // per token: one position per stream
};

std::span<const stream_golden_config> stream_golden_configs();

// The spec a stream golden configuration reads from its config file in `model_configs` (the
// source tree's fixtures/model-configs/: only the generator and the tests read it).
rope_spec stream_golden_spec(const stream_golden_config& config,
                             const std::filesystem::path& model_configs);

// The whole text of one stream golden file: per token a line 'positions p0 p1 [p2]', then the
// rotated dims as in golden_text.
std::string stream_golden_text(const stream_golden_config& config,
                               const std::filesystem::path& model_configs);

}  // namespace ropecheck::golden
