// Tests for io/file_bytes.h and the tensor readers on top of it: only regular files are
// read; a FIFO, a directory or /dev/zero (also through a link, also named .npy or
// .safetensors) is an io_error naming the file and what it is, before a byte is read.
#include "io/file_bytes.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "io/read_tensor.h"
#include "io/test_support.h"

namespace ropecheck {
namespace {

using ropecheck::testing::expect_io_error;
using ropecheck::testing::scratch_dir;

TEST(load_file, reads_a_regular_file) {
  const scratch_dir dir;
  std::ofstream(dir / "a.bin", std::ios::binary) << "abc";
  const file_bytes f = load_file(dir / "a.bin");
  ASSERT_EQ(f.size, 3u);
  EXPECT_EQ(std::to_integer<char>(f.bytes()[2]), 'c');
  EXPECT_EQ(load_file(dir / "a.bin", 3).size, 3u);
  expect_io_error([&] { load_file(dir / "a.bin", 2); }, {"a.bin", "is too large", "'3 bytes'"});
}

TEST(load_file, a_fifo_is_refused_without_blocking) {
  const scratch_dir dir;
  for (const char* name : {"f.npy", "f.safetensors"}) {
    ASSERT_EQ(::mkfifo((dir / name).c_str(), 0600), 0);
    expect_io_error([&] { read_tensor(dir / name); }, {name, "is a FIFO (named pipe), not a regular file"});
  }
  expect_io_error([&] { require_regular_file(dir / "f.npy"); }, {"f.npy", "is a FIFO"});
}

TEST(load_file, an_endless_device_is_refused_also_through_a_link) {
  const scratch_dir dir;
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    for (const char* name : {"z.npy", "z.safetensors"}) {
      std::filesystem::remove(dir / name);
      std::filesystem::create_symlink(device, dir / name);
      expect_io_error([&] { read_tensor(dir / name); }, {name, "is a character device"});
    }
  }
}

TEST(load_file, a_directory_and_a_missing_file_are_refused_naming_them) {
  const scratch_dir dir;
  std::filesystem::create_directory(dir / "d.npy");
  expect_io_error([&] { read_tensor(dir / "d.npy"); }, {"d.npy", "is a directory"});
  expect_io_error([&] { read_tensor(dir / "missing.npy"); }, {"missing.npy", "cannot open"});
}

}  // namespace
}  // namespace ropecheck
