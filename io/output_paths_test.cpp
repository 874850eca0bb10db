// Tests for io/output_paths.h and atomic_file.h write_files_together: bad output paths are
// refused before anything is written; a set of files is written all or nothing.
#include "io/output_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/test_support.h"

namespace ropecheck {
namespace {

using ropecheck::testing::expect_io_error;
using ropecheck::testing::scratch_dir;

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(check_outputs, accepts_distinct_writable_paths_and_skips_empty_ones) {
  const scratch_dir dir;
  EXPECT_NO_THROW(check_outputs({{"--json", dir / "a.json"}, {"--html", ""}, {"--junit", dir / "a.xml"}},
                                {{"--x", dir / "x.npy"}}));
}

TEST(check_outputs, a_missing_folder_is_refused) {
  const scratch_dir dir;
  expect_io_error([&] { check_outputs({{"--html", dir / "missing-dir" / "r.html"}}, {}); },
                  {"r.html", "--html", "its folder does not exist", "missing-dir"});
  std::ofstream(dir / "file") << "x";
  expect_io_error([&] { check_outputs({{"--json", dir / "file" / "r.json"}}, {}); },
                  {"--json", "r.json"});
}

TEST(check_outputs, two_outputs_on_one_path_are_refused) {
  const scratch_dir dir;
  expect_io_error([&] { check_outputs({{"--json", dir / "same"}, {"--html", dir / "same"}}, {}); },
                  {"same", "--html", "is the same file as the output of --json"});
  // Another spelling of the same path.
  std::filesystem::create_directory(dir / "out");
  expect_io_error(
      [&] { check_outputs({{"--json", dir / "out" / "r"}, {"--junit", dir / "out" / "." / ".." / "out" / "r"}}, {}); },
      {"--junit", "same file as the output of --json"});
}

TEST(check_outputs, an_output_that_is_an_input_is_refused_also_through_links) {
  const scratch_dir dir;
  std::ofstream(dir / "y.npy") << "data";
  expect_io_error([&] { check_outputs({{"--json", dir / "y.npy"}}, {{"--y", dir / "y.npy"}}); },
                  {"y.npy", "--json", "is the input file of --y"});
  std::filesystem::create_symlink(dir / "y.npy", dir / "link.npy");
  expect_io_error([&] { check_outputs({{"--json", dir / "link.npy"}}, {{"--y", dir / "y.npy"}}); },
                  {"--json", "input file of --y"});
  std::filesystem::create_hard_link(dir / "y.npy", dir / "hard.npy");
  expect_io_error([&] { check_outputs({{"--json", dir / "hard.npy"}}, {{"--y", dir / "y.npy"}}); },
                  {"--json", "input file of --y"});
  std::filesystem::create_directory_symlink(dir.path(), dir / "again");
  expect_io_error([&] { check_outputs({{"--json", dir / "again" / "y.npy"}}, {{"--y", dir / "y.npy"}}); },
                  {"--json", "input file of --y"});
}

TEST(check_outputs, directories_and_devices_are_refused) {
  const scratch_dir dir;
  std::filesystem::create_directory(dir / "d");
  expect_io_error([&] { check_outputs({{"--json", dir / "d"}}, {}); }, {"--json", "is a directory"});
  expect_io_error([&] { check_outputs({{"--json", "/dev/null"}}, {}); },
                  {"/dev/null", "is a character device"});
  ASSERT_EQ(::mkfifo((dir / "f").c_str(), 0600), 0);
  expect_io_error([&] { check_outputs({{"--html", dir / "f"}}, {}); }, {"--html", "is a FIFO"});
}

TEST(write_files_together, writes_every_file_or_none) {
  const scratch_dir dir;
  std::ofstream(dir / "old.json") << "old";
  const auto ok = [](const char* text) { return [text](std::ostream& out) { out << text; }; };
  EXPECT_THROW(write_files_together({{dir / "old.json", ok("new")},
                                     {dir / "b.html", [](std::ostream&) { throw std::runtime_error("render failed"); }}}),
               std::runtime_error);
  EXPECT_EQ(slurp(dir / "old.json"), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"old.json"});
  expect_io_error([&] { write_files_together({{dir / "old.json", ok("new")}, {dir / "no" / "b.html", ok("b")}}); },
                  {"b.html"});
  EXPECT_EQ(slurp(dir / "old.json"), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"old.json"});
  write_files_together({{dir / "old.json", ok("new")}, {dir / "b.html", ok("b")}});
  EXPECT_EQ(slurp(dir / "old.json"), "new");
  EXPECT_EQ(slurp(dir / "b.html"), "b");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"b.html", "old.json"}));
}

TEST(write_files_together, an_existing_file_keeps_its_mode) {
  const scratch_dir dir;
  std::ofstream(dir / "r.json") << "old";
  ::chmod((dir / "r.json").c_str(), 0444);
  write_files_together({{dir / "r.json", [](std::ostream& out) { out << "new"; }}});
  struct stat info {};
  ASSERT_EQ(::stat((dir / "r.json").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0444u);
  EXPECT_EQ(slurp(dir / "r.json"), "new");
}

// What the write will fail on is refused before the run: a symbolic link loop (the rename
// would replace the link), a name longer than NAME_MAX, a folder that is a loop.
TEST(check_outputs, a_link_loop_and_a_name_too_long_are_refused) {
  const scratch_dir dir;
  std::filesystem::create_symlink("loop", dir / "loop");
  expect_io_error([&] { check_outputs({{"--json", dir / "loop"}}, {}); },
                  {"loop", "--json", "cannot be used", "Too many levels of symbolic links"});
  expect_io_error([&] { check_outputs({{"--json", dir / "loop" / "r.json"}}, {}); },
                  {"--json", "its folder cannot be reached", "Too many levels of symbolic links"});
  expect_io_error([&] { check_outputs({{"--html", dir / (std::string(256, 'n') + ".html")}}, {}); },
                  {"--html", "cannot be used", "File name too long"});
  EXPECT_NO_THROW(check_outputs({{"--html", dir / (std::string(250, 'n') + ".html")}}, {}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"loop"});
}

// In a sticky folder (/tmp) rename(2) may not replace another user's file: refused up front.
TEST(check_outputs, another_users_file_in_a_sticky_folder_is_refused_as_a_user) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a file of another user";
  const scratch_dir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 01777), 0);
  std::ofstream(dir / "r.json") << "root's";
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    try {
      check_outputs({{"--json", dir / "r.json"}}, {});
    } catch (const io_error& e) {
      ::_exit(std::string(e.what()).find("sticky folder") != std::string::npos ? 0 : 2);
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace ropecheck
