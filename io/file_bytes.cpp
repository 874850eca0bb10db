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

#include <fmt/format.h>

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

[[noreturn]] void throw_not_regular(const std::filesystem::path& path, mode_t mode) {
  throw io_error(path.string(), "file", fmt::format("is {}, not a regular file", file_type_name(mode)),
                 path.string(), "input files must be regular files");
}

// Reads exactly `size` bytes (the size fstat reported); a file that shrank meanwhile is an
// error, one that grew is read only as far as it was when opened.
std::vector<std::byte> read_exactly(int fd, const std::filesystem::path& path, std::size_t size) {
  std::vector<std::byte> buffer(size);
  std::size_t used = 0;
  while (used < size) {
    const ssize_t n = ::read(fd, buffer.data() + used, size - used);
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

std::string_view file_type_name(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

void require_regular_file(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw_system_error(path, "cannot open", errno);
  if (!S_ISREG(info.st_mode)) throw_not_regular(path, info.st_mode);
}

file_bytes load_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one; it
  // is refused by the fstat below, and regular files ignore the flag.
  const file_descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) throw_system_error(path, "cannot open", errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw_system_error(path, "cannot stat", errno);
  if (!S_ISREG(info.st_mode)) throw_not_regular(path, info.st_mode);
  const auto size = static_cast<std::size_t>(info.st_size);
  if (size > max_bytes) {
    throw io_error(path.string(), "file", "is too large", fmt::format("{} bytes", size),
                   fmt::format("limit {} bytes", max_bytes));
  }
  if (size >= mmap_threshold_bytes) {
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
  auto contents = std::make_shared<std::vector<std::byte>>(read_exactly(fd.get(), path, size));
  file_bytes result;
  result.size = contents->size();
  if (result.size > 0) result.data = std::shared_ptr<const std::byte>(contents, contents->data());
  return result;
}

}  // namespace ropecheck
