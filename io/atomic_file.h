// atomic_file: write a file so readers see either the old contents or the complete new
// ones, never a half-written file: write a temporary file in the same directory, fsync it,
// then rename(2) it over the target (atomic within one POSIX file system).
// On any failure the temporary is removed and io_error is thrown; exceptions thrown by the
// writer callback propagate unchanged after the same cleanup.
// An existing target keeps its permission bits (a read-only report stays read-only); a new
// one gets 0666 minus the umask, as a plain open would give it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace ropecheck {

using file_writer = std::function<void(std::ostream&)>;

// A file written to a hidden temporary beside its target and not yet renamed onto it: the
// first half of write_file_atomically, for callers that write several files all or nothing.
// Destroying it uncommitted removes the temporary.
class staged_file {
 public:
  staged_file(const std::filesystem::path& target, const file_writer& write);
  staged_file(staged_file&& other) noexcept;
  staged_file& operator=(staged_file&&) = delete;
  staged_file(const staged_file&) = delete;
  staged_file& operator=(const staged_file&) = delete;
  ~staged_file();

  const std::filesystem::path& target() const { return target_; }
  void commit();  // rename(2) onto the target; throws io_error

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;  // empty once committed or moved from
};

// `write` streams the whole contents into a binary std::ostream.
void write_file_atomically(const std::filesystem::path& path, const file_writer& write);

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> contents);

// One file of a set written together.
struct planned_file {
  std::filesystem::path path;
  file_writer write;
};

// All or nothing: every file is written to its temporary first; only if all of them were
// written are they renamed, one after the other, while holding an exclusive flock(2) on each
// target folder, so two ropecheck runs writing the same set leave the files of one run, not a
// mix. If any write fails, no target is touched and every temporary is removed.
void write_files_together(const std::vector<planned_file>& files);

}  // namespace ropecheck
