// file_bytes: read or mmap a whole file (see file_bytes.h).
#include "io/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_error.h"

namespace ropecheck {

namespace {

class file_descriptor {
 public:
  explicit file_descriptor(int fd) : fd_(fd) {}
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void throw_system_error(const std::filesystem::path& path, std::string_view what,
                                     int error) {
  throw io_error(path.string(), "file", what, path.string(), std::strerror(error));
}

// Reads until EOF; works for regular files and for pipes whose size fstat cannot tell.
std::vector<std::byte> read_all(int fd, const std::filesystem::path& path, std::size_t hint) {
  std::vector<std::byte> buffer(hint > 0 ? hint : 65536);
  std::size_t used = 0;
  for (;;) {
    if (used == buffer.size()) buffer.resize(buffer.size() * 2);
    const ssize_t n = ::read(fd, buffer.data() + used, buffer.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error(path, "cannot read", errno);
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  buffer.resize(used);
  return buffer;
}

}  // namespace

file_bytes load_file(const std::filesystem::path& path) {
  const file_descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw_system_error(path, "cannot open", errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw_system_error(path, "cannot stat", errno);
  if (S_ISDIR(info.st_mode)) throw_system_error(path, "cannot read", EISDIR);

  const bool regular = S_ISREG(info.st_mode);
  const auto size = static_cast<std::size_t>(info.st_size);
  if (regular && size >= mmap_threshold_bytes) {
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (mapping == MAP_FAILED) throw_system_error(path, "cannot map", errno);
    file_bytes result;
    result.data = std::shared_ptr<const std::byte>(
        static_cast<const std::byte*>(mapping),
        [size](const std::byte* p) { ::munmap(const_cast<std::byte*>(p), size); });
    result.size = size;
    result.mapped = true;
    return result;
  }

  // A regular file may still grow or shrink between fstat and read; read_all copes.
  auto contents =
      std::make_shared<std::vector<std::byte>>(read_all(fd.get(), path, regular ? size + 1 : 0));
  file_bytes result;
  result.size = contents->size();
  if (result.size > 0) result.data = std::shared_ptr<const std::byte>(contents, contents->data());
  return result;
}

}  // namespace ropecheck
