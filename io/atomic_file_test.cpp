// Tests for io/atomic_file.h: the target holds either its old or its complete new contents,
// and no temporary file survives success or failure.
#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "io/test_support.h"

namespace ropecheck {
namespace {

using ropecheck::testing::expect_io_error;
using ropecheck::testing::scratch_dir;
using ropecheck::testing::to_bytes;

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(write_file_atomically, writes_and_replaces_leaving_only_the_target) {
  const scratch_dir dir;
  const auto target = dir / "report.json";
  write_file_atomically(target, to_bytes("first"));
  EXPECT_EQ(slurp(target), "first");
  write_file_atomically(target, [](std::ostream& out) { out << "second, longer"; });
  EXPECT_EQ(slurp(target), "second, longer");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"report.json"});
}

TEST(write_file_atomically, gives_the_mode_a_plain_create_would) {
  const scratch_dir dir;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  write_file_atomically(dir / "a.bin", to_bytes("x"));
  struct stat info {};
  ASSERT_EQ(::stat((dir / "a.bin").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
}

TEST(write_file_atomically, failing_writer_leaves_nothing_new_and_keeps_old_contents) {
  const scratch_dir dir;
  const auto fresh = dir / "fresh.npy";
  EXPECT_THROW(write_file_atomically(fresh,
                                     [](std::ostream& out) {
                                       out << "half of the data";
                                       throw std::runtime_error("writer failed midway");
                                     }),
               std::runtime_error);
  EXPECT_TRUE(dir.entries().empty());

  const auto existing = dir / "existing.npy";
  write_file_atomically(existing, to_bytes("old"));
  EXPECT_THROW(write_file_atomically(existing,
                                     [](std::ostream& out) {
                                       out << "new but incomplete";
                                       throw std::runtime_error("writer failed midway");
                                     }),
               std::runtime_error);
  EXPECT_EQ(slurp(existing), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"existing.npy"});
}

TEST(write_file_atomically, missing_directory_is_an_io_error_naming_the_file) {
  const scratch_dir dir;
  const auto target = dir / "no-such-dir" / "out.npy";
  expect_io_error(
      [&] { write_file_atomically(target, to_bytes("x")); },
      {target.string(), "file", "cannot create temporary file", "No such file or directory"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(write_file_atomically, failed_rename_removes_the_temporary) {
  const scratch_dir dir;
  std::filesystem::create_directories(dir / "occupied" / "child");  // can't rename a file over it
  expect_io_error([&] { write_file_atomically(dir / "occupied", to_bytes("x")); },
                  {"occupied", "cannot rename temporary file"});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"occupied"});
}

TEST(write_file_atomically, unwritable_directory_is_an_io_error) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const scratch_dir dir;
  const auto locked = dir / "locked";
  std::filesystem::create_directory(locked);
  std::filesystem::permissions(
      locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  expect_io_error([&] { write_file_atomically(locked / "out.npy", to_bytes("x")); },
                  {"out.npy", "Permission denied"});
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  EXPECT_TRUE(std::filesystem::is_empty(locked));
}

// A name of NAME_MAX (255) bytes is valid, so its temporary's name must be too.
TEST(write_file_atomically, a_name_of_255_bytes_is_written) {
  const scratch_dir dir;
  const std::string name = std::string(250, 'r') + ".json";
  write_file_atomically(dir / name, to_bytes("x"));
  EXPECT_EQ(slurp(dir / name), "x");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{name});
}

// Runs `action` in a child process as the user nobody (when this test runs as root; else as
// the user it runs as) and returns the child's exit code: 0 done, 1 it threw.
int as_unprivileged_user(const std::function<void()>& action) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    try {
      action();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A read-only report is replaced (the rename needs the folder's permission only) and stays
// read-only, also for a user whom the file's mode binds.
TEST(write_file_atomically, a_read_only_file_is_replaced_keeping_its_mode_as_a_user) {
  const scratch_dir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const auto target = dir / "r.json";
  write_file_atomically(target, to_bytes("old"));
  ASSERT_EQ(::chmod(target.c_str(), 0444), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(target.c_str(), 65534, 65534), 0);
  }
  EXPECT_EQ(as_unprivileged_user([&] { write_file_atomically(target, to_bytes("new")); }), 0);
  EXPECT_EQ(slurp(target), "new");
  struct stat info {};
  ASSERT_EQ(::stat(target.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0444u);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.json"});
}

// A writer killed mid-write (SIGKILL: no cleanup runs) leaves no temporary once the next write
// into the folder is done: the unnamed temporary vanishes with the process, a named one is
// removed as stale.
TEST(write_file_atomically, a_write_killed_midway_leaves_nothing_after_the_next_write) {
  const scratch_dir dir;
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      write_file_atomically(dir / "big.npy", [](std::ostream& out) {
        const std::string block(1 << 20, 'x');
        for (int i = 0; i < 4; ++i) out << block;
        out.flush();
        ::raise(SIGKILL);
      });
    } catch (...) {
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  write_file_atomically(dir / "next.json", to_bytes("x"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"next.json"});
}

// A named temporary of a process that has ended is removed by the next write into its folder;
// one of a running process (this one) is left alone, as are other files.
TEST(write_file_atomically, stale_named_temporaries_are_removed) {
  const scratch_dir dir;
  const pid_t ended = ::fork();
  if (ended == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(ended, nullptr, 0), ended);
  const std::string stale = temporary_name_prefix(ended) + "0badf00d";
  const std::string live = temporary_name_prefix(::getpid()) + "0badf00d";
  for (const auto& name : {stale, live, std::string(".other.tmp-1234")}) std::ofstream(dir / name) << "partial";
  write_file_atomically(dir / "r.json", to_bytes("x"));
  auto expected = std::vector<std::string>{".other.tmp-1234", live, "r.json"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir.entries(), expected);
  EXPECT_LE(stale.size(), 64u);  // short whatever the target's name: it fits NAME_MAX
}

}  // namespace
}  // namespace ropecheck
