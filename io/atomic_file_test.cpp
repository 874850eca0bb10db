// Tests for io/atomic_file.h: the target holds either its old or its complete new contents,
// and no temporary file survives success or failure.
#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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

}  // namespace
}  // namespace ropecheck
