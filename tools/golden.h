// Golden vectors: RoPE outputs of real model configurations at >= 40 significant digits,
// computed by the 256-bit reference (elementwise form) and stored as text in fixtures/golden/.
// The fixture test regenerates every file with golden_text() and fails on any changed digit.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck::golden {

struct golden_config {
  std::string name;     // file stem in fixtures/golden/
  std::string models;   // which public models use this configuration
  std::string config;   // the model-config file(s) in fixtures/model-configs/ it comes from
  rope_spec spec;
};

// Every configuration with a golden file.
std::span<const golden_config> golden_configs();

// Positions: 0, 1, and 2^k − 1, 2^k + 1 for k = 1 … 31 (without 2^31 + 1).
std::vector<std::int64_t> golden_positions();

// The input vector, exact in binary: x_c = ((37·c) mod 29 − 14) / 8 + (c + 1) / 1024.
double golden_input(int c);

// The whole text of one golden file.
std::string golden_text(const golden_config& config);

}  // namespace ropecheck::golden
