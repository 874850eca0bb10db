// libFuzzer target: parse_safetensors on arbitrary bytes returns a tensor or throws io_error.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/io_error.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  for (const auto& name : {std::optional<std::string>{}, std::optional<std::string>{"x"}}) {
    try {
      (void)ropecheck::parse_safetensors(bytes, "fuzz.safetensors", name);
    } catch (const ropecheck::io_error&) {
    }
  }
  return 0;
}
