// atomic_file: temporary file + fsync + rename, one file or a set (see atomic_file.h).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstring>
#include <random>
#include <streambuf>
#include <string>
#include <system_error>
#include <utility>

#include "io/io_error.h"

namespace ropecheck {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void throw_system_error(const fs::path& path, std::string_view what, const fs::path& value,
                                     int error) {
  // A failed stream does not always set errno; say something true rather than "Success".
  throw io_error(path.string(), "file", what, value.string(),
                 error != 0 ? std::strerror(error) : "I/O error");
}

fs::path folder_of(const fs::path& path) {
  return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

// This host, as 8 hex digits (FNV-1a of its name): a pid names a process on one host only, and
// a folder may be shared between hosts.
const std::string& host_tag() {
  static const std::string tag = [] {
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
    std::uint32_t hash = 2166136261u;
    for (const char* c = name; *c != '\0'; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
    return fmt::format("{:08x}", hash);
  }();
  return tag;
}

constexpr std::string_view temporary_stem = ".ropecheck-tmp-";

fs::path fresh_temporary_name(const fs::path& folder, std::random_device& entropy) {
  return folder / fmt::format("{}{:08x}", temporary_name_prefix(::getpid()), entropy());
}

// Removes the named temporaries in `folder` that a process of this host left when it was
// killed mid-write (its pid no longer runs). Best effort: an unreadable folder is left alone.
void remove_stale_temporaries(const fs::path& folder) {
  const std::string prefix = fmt::format("{}{}-", temporary_stem, host_tag());
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    long pid = 0;
    const char* first = name.data() + prefix.size();
    const auto [stop, parsed] = std::from_chars(first, name.data() + name.size(), pid);
    if (parsed != std::errc() || stop == first || *stop != '-' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    ::unlink(it->path().c_str());
  }
}

std::string proc_fd_path(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

// The temporary beside `path`, open for writing, with the target's permission bits if it
// exists, else 0666 minus umask: unnamed (O_TMPFILE) where the file system supports it and
// /proc lets it be linked later; else named, O_EXCL with a random suffix to keep concurrent
// writers apart. The mode is set on the open descriptor, so a read-only mode does not stop
// the write.
struct temporary_file {
  int fd = -1;
  fs::path name;  // empty: unnamed
};

temporary_file create_temporary_beside(const fs::path& path) {
  const fs::path folder = folder_of(path);
  remove_stale_temporaries(folder);
  struct stat existing {};
  const bool keep_mode = ::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode);
  temporary_file t;
  t.fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (t.fd >= 0 && ::access(proc_fd_path(t.fd).c_str(), F_OK) != 0) {
    ::close(t.fd);
    t.fd = -1;
  }
  std::random_device entropy;
  int last_error = 0;
  for (int attempt = 0; t.fd < 0 && attempt < 100; ++attempt) {
    const fs::path candidate = fresh_temporary_name(folder, entropy);
    t.fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (t.fd >= 0) {
      t.name = candidate;
      break;
    }
    last_error = errno;
    if (last_error != EEXIST) break;
  }
  if (t.fd < 0) throw_system_error(path, "cannot create temporary file in", folder, last_error);
  if (keep_mode) ::fchmod(t.fd, existing.st_mode & 07777);
  return t;
}

// An std::ostream's buffer onto a file descriptor; remembers the first write error.
class fd_buffer : public std::streambuf {
 public:
  explicit fd_buffer(int fd) : fd_(fd), buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < epptr() - pptr()) {
      std::memcpy(pptr(), s, static_cast<std::size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    return drain() && write_all(s, static_cast<std::size_t>(n)) ? n : 0;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return ok;
  }
  bool write_all(const char* data, std::size_t size) {
    while (size > 0 && error_ == 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        break;
      }
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  std::vector<char> buffer_;
};

void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: durability, not atomicity, depends on it
  ::fsync(fd);
  ::close(fd);
}

// Exclusive flock(2) on each distinct folder, taken in (device, inode) order so two runs
// locking overlapping sets cannot deadlock; released (closed) on destruction.
class folder_locks {
 public:
  explicit folder_locks(const std::vector<planned_file>& files) {
    std::vector<std::pair<std::pair<dev_t, ino_t>, fs::path>> folders;
    for (const auto& f : files) {
      struct stat info {};
      const fs::path folder = folder_of(f.path);
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

std::string temporary_name_prefix(long pid) {
  return fmt::format("{}{}-{}-", temporary_stem, host_tag(), pid);
}

staged_file::staged_file(const fs::path& target, const file_writer& write) : target_(target) {
  temporary_file t = create_temporary_beside(target);
  fd_ = t.fd;
  temporary_ = std::move(t.name);
  try {
    fd_buffer buffer(fd_);
    std::ostream out(&buffer);
    write(out);
    out.flush();
    if (!out || buffer.error() != 0)
      throw_system_error(target_, "cannot write temporary file in", folder_of(target_), buffer.error());
    if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS)
      throw_system_error(target_, "cannot write temporary file in", folder_of(target_), errno);
  } catch (...) {
    ::close(std::exchange(fd_, -1));
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
    throw;
  }
}

staged_file::staged_file(staged_file&& other) noexcept
    : target_(std::move(other.target_)),
      temporary_(std::exchange(other.temporary_, {})),
      fd_(std::exchange(other.fd_, -1)) {}

staged_file::~staged_file() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void staged_file::commit() {
  const fs::path folder = folder_of(target_);
  if (temporary_.empty()) {
    // The unnamed temporary gets a name in the folder (linkat cannot replace a file), then is
    // renamed onto the target: a crash between the two leaves a complete, recognisable file.
    std::random_device entropy;
    int error = EEXIST;
    for (int attempt = 0; attempt < 100 && error == EEXIST; ++attempt) {
      const fs::path candidate = fresh_temporary_name(folder, entropy);
      error = ::linkat(AT_FDCWD, proc_fd_path(fd_).c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0
                  ? 0
                  : errno;
      if (error == 0) temporary_ = candidate;
    }
    if (error != 0) throw_system_error(target_, "cannot name temporary file in", folder, error);
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0)
    throw_system_error(target_, "cannot rename temporary file onto target", temporary_, errno);
  temporary_.clear();
  ::close(std::exchange(fd_, -1));
  sync_folder(folder);
}

void write_file_atomically(const fs::path& path, const file_writer& write) {
  staged_file(path, write).commit();
}

void write_file_atomically(const fs::path& path, std::span<const std::byte> contents) {
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
