// atomic_file: temporary file + fsync + rename, one file or a set (see atomic_file.h).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <utility>

#include "io/io_error.h"

namespace ropecheck {

namespace {

[[noreturn]] void throw_system_error(const std::filesystem::path& path, std::string_view what,
                                     const std::filesystem::path& value, int error) {
  // A failed stream does not always set errno; say something true rather than "Success".
  throw io_error(path.string(), "file", what, value.string(),
                 error != 0 ? std::strerror(error) : "I/O error");
}

std::filesystem::path folder_of(const std::filesystem::path& path) {
  return path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
}

// Creates (O_EXCL) a fresh hidden file next to `path` with the target's permission bits if it
// exists, else 0666 minus umask; the random suffix keeps concurrent writers apart.
std::filesystem::path create_temporary_beside(const std::filesystem::path& path) {
  struct stat existing {};
  const bool keep_mode = ::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode);
  std::random_device entropy;
  int last_error = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path candidate = path;
    candidate.replace_filename(fmt::format(".{}.tmp-{:08x}", path.filename().string(), entropy()));
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      if (keep_mode) ::fchmod(fd, existing.st_mode & 07777);
      ::close(fd);
      return candidate;
    }
    last_error = errno;
    if (last_error != EEXIST) break;
  }
  throw_system_error(path, "cannot create temporary file in", folder_of(path), last_error);
}

void sync_to_disk(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;  // best effort: durability, not atomicity, depends on it
  ::fsync(fd);
  ::close(fd);
}

// Exclusive flock(2) on each distinct folder, taken in (device, inode) order so two runs
// locking overlapping sets cannot deadlock; released (closed) on destruction.
class folder_locks {
 public:
  explicit folder_locks(const std::vector<planned_file>& files) {
    std::vector<std::pair<std::pair<dev_t, ino_t>, std::filesystem::path>> folders;
    for (const auto& f : files) {
      struct stat info {};
      const std::filesystem::path folder = folder_of(f.path);
      if (::stat(folder.c_str(), &info) == 0) folders.push_back({{info.st_dev, info.st_ino}, folder});
    }
    std::sort(folders.begin(), folders.end());
    folders.erase(std::unique(folders.begin(), folders.end(),
                              [](const auto& a, const auto& b) { return a.first == b.first; }),
                  folders.end());
    for (const auto& [id, folder] : folders) {
      const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;  // best effort: without the lock the set is still all or nothing
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      fds_.push_back(fd);
    }
  }
  folder_locks(const folder_locks&) = delete;
  folder_locks& operator=(const folder_locks&) = delete;
  ~folder_locks() {
    for (const int fd : fds_) ::close(fd);
  }

 private:
  std::vector<int> fds_;
};

}  // namespace

staged_file::staged_file(const std::filesystem::path& target, const file_writer& write)
    : target_(target), temporary_(create_temporary_beside(target)) {
  try {
    errno = 0;
    std::ofstream out(temporary_, std::ios::binary | std::ios::trunc);
    if (!out) throw_system_error(target_, "cannot open temporary file", temporary_, errno);
    write(out);
    out.flush();
    if (!out) throw_system_error(target_, "cannot write temporary file", temporary_, errno);
    out.close();
    if (out.fail()) throw_system_error(target_, "cannot close temporary file", temporary_, errno);
    sync_to_disk(temporary_, O_RDONLY);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
    throw;
  }
}

staged_file::staged_file(staged_file&& other) noexcept
    : target_(std::move(other.target_)), temporary_(std::exchange(other.temporary_, {})) {}

staged_file::~staged_file() {
  if (!temporary_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
}

void staged_file::commit() {
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    throw_system_error(target_, "cannot rename temporary file onto target", temporary_, errno);
  }
  temporary_.clear();
  sync_to_disk(folder_of(target_), O_RDONLY | O_DIRECTORY);
}

void write_file_atomically(const std::filesystem::path& path, const file_writer& write) {
  staged_file(path, write).commit();
}

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> contents) {
  write_file_atomically(path, [contents](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(contents.data()),
              static_cast<std::streamsize>(contents.size()));
  });
}

void write_files_together(const std::vector<planned_file>& files) {
  std::vector<staged_file> staged;
  staged.reserve(files.size());
  for (const auto& f : files) staged.emplace_back(f.path, f.write);
  const folder_locks locks(files);
  for (auto& s : staged) s.commit();
}

}  // namespace ropecheck
