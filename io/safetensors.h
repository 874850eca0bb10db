// safetensors: read (and, for tests and fixtures, write) Hugging Face .safetensors files,
// per the format README (github.com/huggingface/safetensors):
//   u64 LE header length N | N bytes of JSON header | data buffer.
// The header maps tensor names to {"dtype", "shape", "data_offsets": [begin, end)}, offsets
// relative to the start of the data buffer; the optional "__metadata__" entry (string to
// string) is ignored. Supported dtypes: F64 F32 F16 BF16 I32 I64.
//
// Validation follows the reference implementation: header length sane and in the file,
// valid JSON object, every entry well-formed, end - begin == product(shape) * element size,
// and the entries tiling the data buffer exactly (no gaps, overlaps or trailing bytes).
// Every failure is an io_error naming the file, the field and the offending value.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/tensor.h"

namespace ropecheck {

// Header lengths above this are rejected as corrupt (the reference reader's limit).
inline constexpr std::size_t safetensors_max_header_bytes = 100'000'000;

// The tensor called `name`, or the only tensor in the file when name is absent (an error
// listing the names when there are several). Large files are memory-mapped.
tensor read_safetensors(const std::filesystem::path& path,
                        std::optional<std::string> name = std::nullopt);

// Same, from bytes already in memory (the fuzzing entry point); copies the tensor's data.
tensor parse_safetensors(std::span<const std::byte> file, std::string_view name_for_messages,
                         std::optional<std::string> name = std::nullopt);

// Names of all tensors in the file, sorted ("__metadata__" excluded).
std::vector<std::string> safetensors_tensor_names(const std::filesystem::path& path);

using named_tensors = std::vector<std::pair<std::string, tensor>>;

// The header is padded with spaces so the data buffer starts 8-byte aligned.
std::vector<std::byte> encode_safetensors(const named_tensors& tensors);
// Atomically (io/atomic_file.h).
void write_safetensors(const std::filesystem::path& path, const named_tensors& tensors);

}  // namespace ropecheck
