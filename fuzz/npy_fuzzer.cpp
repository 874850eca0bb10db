// libFuzzer target: parse_npy on arbitrary bytes must return a tensor or throw io_error —
// never crash, read out of bounds, or throw anything else.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/io_error.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  for (const auto raw16 : {std::optional<ropecheck::dtype>{}, std::optional{ropecheck::dtype::bfloat16}}) {
    try {
      const ropecheck::tensor t = ropecheck::parse_npy(bytes, "fuzz.npy", raw16);
      (void)ropecheck::to_float64(t, "fuzz.npy");
    } catch (const ropecheck::io_error&) {
    }
  }
  return 0;
}
