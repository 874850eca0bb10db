// atomic_file: write a file so readers see either the old contents or the complete new
// ones, never a half-written file: write a temporary file in the same directory, fsync it,
// then rename(2) it over the target (atomic within one POSIX file system).
// On any failure the temporary is removed and io_error is thrown; exceptions thrown by the
// writer callback propagate unchanged after the same cleanup.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <ostream>
#include <span>

namespace ropecheck {

// `write` streams the whole contents into a binary std::ostream.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> contents);

}  // namespace ropecheck
