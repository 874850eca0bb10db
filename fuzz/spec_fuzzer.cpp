// libFuzzer target: the spec reader on arbitrary JSON returns a spec or throws spec_error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "spec/spec_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto config = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return 0;
  try {
    (void)ropecheck::parse_spec(config, "fuzz.json");
  } catch (const ropecheck::spec_error&) {
  }
  return 0;
}
