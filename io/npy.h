// npy: read and write numpy .npy files (format versions 1.0, 2.0, 3.0), per the
// numpy.lib.format specification (NEP 1):
//   "\x93NUMPY" major minor | header length (u16 LE for 1.x, u32 LE for 2.x/3.x) |
//   header: a Python literal dict {'descr': ..., 'fortran_order': ..., 'shape': (...), }
//   (latin-1 for 1.x/2.x, utf-8 for 3.x), padded with spaces and '\n' | raw C-order data.
// Supported: little-endian '<f8' '<f4' '<f2' '<i4' '<i8', C order only. bfloat16 has no
// numpy dtype; it travels as raw bits ('<u2', or '|V2' from ml_dtypes) and is read as
// bfloat16 only when the caller says so (raw16 = dtype::bfloat16, the CLI's --dtype). The same
// for fp8: uint8 bits ('|u1', or '|V1') are read as float8_e4m3fn / float8_e5m2 only with
// raw16 naming one of them; without it a uint8 array is refused (io_error).
//
// The parser works on a byte span and never reads outside it (it is fuzzed); every
// malformed input becomes an io_error naming the file, the field and the offending value.
// The file is expected to end exactly where the data does: trailing bytes are an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

#include "io/tensor.h"
#include "numeric/dtype.h"

namespace ropecheck {

// Where the pieces of a validated .npy byte stream are.
struct npy_layout {
  int major_version = 1;
  dtype type = dtype::float64;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;  // from the start of the file
  std::size_t data_size = 0;    // bytes; the file ends right after the data
};

// Validates the whole stream (header and data size) without copying the data.
npy_layout parse_npy_layout(std::span<const std::byte> file, std::string_view name_for_messages,
                            std::optional<dtype> raw16 = std::nullopt);

// Parses and copies the data into a new tensor.
tensor parse_npy(std::span<const std::byte> file, std::string_view name_for_messages,
                 std::optional<dtype> raw16 = std::nullopt);

// Reads a file; large files are memory-mapped and the tensor points into the mapping.
tensor read_npy(const std::filesystem::path& path, std::optional<dtype> raw16 = std::nullopt);

// Format 1.0 (2.0 if the header would not fit a u16 length), header padded so the data
// starts at a multiple of 64 bytes, bfloat16 written as '<u2'.
void write_npy(std::ostream& out, const tensor& t);
std::vector<std::byte> encode_npy(const tensor& t);
// Atomically (io/atomic_file.h): never leaves a partial file behind.
void write_npy(const std::filesystem::path& path, const tensor& t);

}  // namespace ropecheck
