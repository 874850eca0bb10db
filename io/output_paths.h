// output_paths: the files a run will write, checked before the run starts, so that a bad
// output path is exit 2 before minutes of work and never after some outputs were written
// (atomic_file.h write_files_together then writes them all or nothing). Refused, each as an
// io_error naming the path, the flag and the reason:
//   * a folder that does not exist, is not a folder, or cannot be written (the write creates a
//     temporary there and renames it onto the path, so an existing read-only file is replaced,
//     keeping its mode; in a sticky folder, another user's file is refused);
//   * a path that is a directory, or an existing file that is not a regular file (a FIFO,
//     /dev/null: renaming over it would replace the device node);
//   * a path that cannot be used at all: a name longer than NAME_MAX, a symbolic link loop;
//   * two outputs on one path (also through a link), which would silently keep only one;
//   * an output that is one of the run's inputs (same file, also through a symbolic or hard
//     link): ropecheck never overwrites what it reads.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ropecheck {

struct flagged_path {
  std::string flag;  // the option that named it: "--json", "--x", "IN.json"
  std::filesystem::path path;
};

// Empty paths are outputs not asked for and are skipped.
void check_outputs(const std::vector<flagged_path>& outputs, const std::vector<flagged_path>& inputs);

}  // namespace ropecheck
