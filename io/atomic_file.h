// atomic_file: write a file so readers see either the old contents or the complete new
// ones, never a half-written file: write a temporary file in the same directory, fsync it,
// then rename(2) it over the target (atomic within one POSIX file system).
// On any failure the temporary is removed and io_error is thrown; exceptions thrown by the
// writer callback propagate unchanged after the same cleanup.
// An existing target keeps its permission bits (a read-only report stays read-only, and is
// still replaced: the write needs only the folder's permission, as rename(2) does); a new one
// gets 0666 minus the umask, as a plain open would give it.
// The temporary is unnamed (O_TMPFILE) where the file system allows it, so a crash (SIGKILL
// mid-write) leaves nothing; it is given a name only for the rename. Elsewhere it is named
// ".ropecheck-tmp-<host>-<pid>-<random>": short, so it fits NAME_MAX whenever the target's name
// does, and recognisable, so a later write into the same folder removes the temporaries of this
// host's processes that have ended.
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

// A file written to a temporary beside its target and not yet renamed onto it: the first half
// of write_file_atomically, for callers that write several files all or nothing. Destroying it
// uncommitted removes the temporary.
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
  std::filesystem::path temporary_;  // the named temporary; empty if unnamed, committed or moved from
  int fd_ = -1;                      // the temporary, open until committed
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
// mix. If any write fails, no target is touched and every temporary is removed. (A rename
// that fails after earlier ones succeeded — the folder removed under us — leaves those earlier
// files in place: the renames themselves are not one transaction.)
void write_files_together(const std::vector<planned_file>& files);

// The name every temporary of process `pid` on this host starts with (".ropecheck-tmp-<host>-
// <pid>-"); the stale-temporary cleanup reads the pid back from it.
std::string temporary_name_prefix(long pid);

}  // namespace ropecheck
