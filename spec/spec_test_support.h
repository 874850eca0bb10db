// spec_test_support: what the spec reader's tests share — the repository's real configs
// (fixtures/model-configs/, sources in each file) and the reader's error message for a config,
// "no error" when it reads. Tests only.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "spec/spec_reader.h"

namespace ropecheck::spec_testing {

inline const std::string configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";

inline nlohmann::json load(const std::string& file) { return nlohmann::json::parse(std::ifstream(configs + file)); }

// The spec_error a config read as "S.json" gives, or "no error".
inline std::string error_of(const nlohmann::json& config, const spec_options& options = {}) {
  try {
    parse_spec(config, "S.json", options);
  } catch (const spec_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace ropecheck::spec_testing
