// libFuzzer target: the strict JSON reader (io/json_file.h) and the spec reader behind it, on
// arbitrary bytes: a spec comes back, or io_error (malformed JSON, a repeated key, a number
// beyond double, nesting too deep) or spec_error is thrown — nothing else, no crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "io/io_error.h"
#include "io/json_file.h"
#include "spec/spec_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json config;
  try {
    config = ropecheck::parse_json_strict(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const ropecheck::io_error&) {
    return 0;
  }
  try {
    (void)ropecheck::parse_spec(config, "fuzz.json");
  } catch (const ropecheck::spec_error&) {
  }
  return 0;
}
