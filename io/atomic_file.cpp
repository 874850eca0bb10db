// atomic_file: temporary file + fsync + rename (see atomic_file.h).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

#include "io/io_error.h"

namespace ropecheck {

namespace {

[[noreturn]] void throw_system_error(const std::filesystem::path& path, std::string_view what,
                                     const std::filesystem::path& value, int error) {
  // A failed stream does not always set errno; say something true rather than "Success".
  throw io_error(path.string(), "file", what, value.string(),
                 error != 0 ? std::strerror(error) : "I/O error");
}

// Creates (O_EXCL, mode 0666 minus umask — the mode a plain open would give the target) a
// fresh hidden file next to `path`; the random suffix keeps concurrent writers apart.
std::filesystem::path create_temporary_beside(const std::filesystem::path& path) {
  std::random_device entropy;
  int last_error = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path candidate = path;
    candidate.replace_filename(fmt::format(".{}.tmp-{:08x}", path.filename().string(), entropy()));
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return candidate;
    }
    last_error = errno;
    if (last_error != EEXIST) break;
  }
  const std::filesystem::path directory = path.parent_path().empty() ? "." : path.parent_path();
  throw_system_error(path, "cannot create temporary file in", directory, last_error);
}

void sync_to_disk(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;  // best effort: durability, not atomicity, depends on it
  ::fsync(fd);
  ::close(fd);
}

// Removes the temporary file unless the rename consumed it.
class temporary_file_guard {
 public:
  explicit temporary_file_guard(std::filesystem::path path) : path_(std::move(path)) {}
  temporary_file_guard(const temporary_file_guard&) = delete;
  temporary_file_guard& operator=(const temporary_file_guard&) = delete;
  ~temporary_file_guard() {
    if (!committed_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }
  void commit() { committed_ = true; }

 private:
  std::filesystem::path path_;
  bool committed_ = false;
};

}  // namespace

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path temporary = create_temporary_beside(path);
  temporary_file_guard guard(temporary);
  {
    errno = 0;
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw_system_error(path, "cannot open temporary file", temporary, errno);
    write(out);
    out.flush();
    if (!out) throw_system_error(path, "cannot write temporary file", temporary, errno);
    out.close();
    if (out.fail()) throw_system_error(path, "cannot close temporary file", temporary, errno);
  }
  sync_to_disk(temporary, O_RDONLY);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    throw_system_error(path, "cannot rename temporary file onto target", temporary, errno);
  }
  guard.commit();
  std::filesystem::path directory = path.parent_path();
  sync_to_disk(directory.empty() ? "." : directory, O_RDONLY | O_DIRECTORY);
}

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> contents) {
  write_file_atomically(path, [contents](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(contents.data()),
              static_cast<std::streamsize>(contents.size()));
  });
}

}  // namespace ropecheck
