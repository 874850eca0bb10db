// output_paths: refuse unusable output paths before the run (see output_paths.h).
#include "io/output_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>

#include "io/file_bytes.h"
#include "io/io_error.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

// The path with every existing link and dot resolved: two spellings of one file agree.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return path.lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : canonical;
}

std::optional<struct stat> stat_of(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return info;
}

bool same_file(const fs::path& a, const fs::path& b) {
  const auto sa = stat_of(a), sb = stat_of(b);
  if (sa && sb) return sa->st_dev == sb->st_dev && sa->st_ino == sb->st_ino;  // hard links too
  return resolved(a) == resolved(b);
}

void check_one(const flagged_path& out) {
  const std::string file = out.path.string();
  if (!out.path.has_filename())
    throw io_error(file, out.flag, "names a folder, not a file", file);
  const fs::path folder = out.path.parent_path().empty() ? fs::path(".") : out.path.parent_path();
  const auto folder_info = stat_of(folder);
  if (!folder_info)
    throw io_error(file, out.flag,
                   errno == ENOENT ? "cannot write: its folder does not exist" : "cannot write: its folder cannot be reached",
                   folder.string(), std::strerror(errno));
  if (!S_ISDIR(folder_info->st_mode))
    throw io_error(file, out.flag, "cannot write: its folder is not a directory", folder.string());
  // The write makes a file in the folder and renames it onto the path: the folder's permission
  // is what it needs, also for an existing read-only file (which keeps its mode).
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw io_error(file, out.flag, "cannot write: its folder is not writable", folder.string(),
                   std::strerror(errno));
  const auto info = stat_of(out.path);
  // A name too long, a symbolic link loop, a component that is not a folder: the write would fail.
  if (!info && errno != ENOENT)
    throw io_error(file, out.flag, "cannot write: the path cannot be used", file, std::strerror(errno));
  if (info && !S_ISREG(info->st_mode))
    throw io_error(file, out.flag,
                   fmt::format("cannot write: the path is {}, not a regular file",
                               file_type_name(info->st_mode)),
                   file);
  // In a sticky folder (/tmp) only the owner of a file (or of the folder) may replace it.
  struct stat link {};
  const uid_t user = ::geteuid();
  if (info && (folder_info->st_mode & S_ISVTX) != 0 && user != 0 && folder_info->st_uid != user &&
      ::lstat(out.path.c_str(), &link) == 0 && link.st_uid != user)
    throw io_error(file, out.flag, "cannot write: another user's file in a sticky folder", file,
                   "only its owner may replace it");
}

}  // namespace

void check_outputs(const std::vector<flagged_path>& outputs, const std::vector<flagged_path>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const flagged_path& out = outputs[i];
    if (out.path.empty()) continue;
    check_one(out);
    for (std::size_t j = 0; j < i; ++j) {
      if (!outputs[j].path.empty() && same_file(outputs[j].path, out.path))
        throw io_error(out.path.string(), out.flag,
                       fmt::format("is the same file as the output of {}", outputs[j].flag),
                       outputs[j].path.string(), "each output needs its own path");
    }
    for (const flagged_path& in : inputs) {
      if (!in.path.empty() && same_file(in.path, out.path))
        throw io_error(out.path.string(), out.flag,
                       fmt::format("is the input file of {}", in.flag), in.path.string(),
                       "ropecheck never overwrites its inputs");
    }
  }
}

}  // namespace ropecheck
