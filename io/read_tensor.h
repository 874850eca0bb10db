// read_tensor: the single entry point the CLI uses to load a tensor file, dispatching on the
// extension: .npy (io/npy.h) or .safetensors (io/safetensors.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "io/tensor.h"
#include "numeric/dtype.h"

namespace ropecheck {

// `name` selects a tensor inside a .safetensors file (optional when it holds one tensor) and
// must be absent for .npy, which holds exactly one. `raw16` says how to read raw 16-bit .npy
// data ('<u2' / '|V2': dtype::bfloat16) and raw 8-bit data ('|u1' / '|V1': float8_e4m3fn or
// float8_e5m2). Throws io_error.
tensor read_tensor(const std::filesystem::path& path,
                   const std::optional<std::string>& name = std::nullopt,
                   std::optional<dtype> raw16 = std::nullopt);

}  // namespace ropecheck
