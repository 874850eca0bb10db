// file_bytes: a whole file's contents behind a shared owner, for the tensor readers. Large
// regular files are memory-mapped (POSIX mmap, private and read-only) so a multi-GiB tensor
// is neither copied nor read twice; small ones are simply read into memory.
// A mapped file must not be truncated while tensors pointing into it are alive (SIGBUS).
// Only regular files are read: a FIFO would block forever and /dev/zero never ends, so
// anything else is refused before a byte is read, and no more than the size fstat reported
// (at most max_bytes) is ever allocated.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>

namespace ropecheck {

// Files at least this large are mapped rather than read.
inline constexpr std::size_t mmap_threshold_bytes = std::size_t{1} << 20;

struct file_bytes {
  std::shared_ptr<const std::byte> data;  // null when size == 0
  std::size_t size = 0;
  bool mapped = false;

  std::span<const std::byte> bytes() const { return {data.get(), size}; }
  // An owner pointing `offset` bytes in, sharing this file's lifetime.
  std::shared_ptr<const std::byte> at(std::size_t offset) const {
    return {data, data.get() + offset};
  }
};

// Throws io_error (field 'file') if the file is missing, unreadable, larger than max_bytes, or
// not a regular file (naming what it is: a directory, a FIFO, a character device, ...).
file_bytes load_file(const std::filesystem::path& path,
                     std::size_t max_bytes = static_cast<std::size_t>(-1));

// "a directory", "a FIFO (named pipe)", "a character device", ... for a stat(2) st_mode.
std::string_view file_type_name(unsigned mode);

// The same refusal without reading: for files another library opens (dlopen of --kernel-lib).
void require_regular_file(const std::filesystem::path& path);

}  // namespace ropecheck
