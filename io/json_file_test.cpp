// Tests for io/json_file.h: duplicate keys, out-of-range numbers and syntax errors are
// io_errors naming the file and the field path; non-regular and oversized files are refused
// before they are read.
#include "io/json_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "io/test_support.h"

namespace ropecheck {
namespace {

using ropecheck::testing::expect_io_error;
using ropecheck::testing::scratch_dir;

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(read_json_file, reads_a_document) {
  const scratch_dir dir;
  write(dir / "s.json", R"({"head_dim": 64, "rope_scaling": {"factor": 8.0}, "l": [1, [2, 3]]})");
  const auto j = read_json_file(dir / "s.json");
  EXPECT_EQ(j.at("head_dim").get<int>(), 64);
  EXPECT_EQ(j.at("rope_scaling").at("factor").get<double>(), 8.0);
  EXPECT_EQ(j.at("l").dump(), "[1,[2,3]]");
  EXPECT_EQ(parse_json_strict("[]", "t").dump(), "[]");
  EXPECT_EQ(parse_json_strict("3", "t").get<int>(), 3);
}

TEST(read_json_file, a_number_beyond_double_names_the_file_and_field) {
  const scratch_dir dir;
  write(dir / "s.json", R"({"head_dim": 64, "rope_theta": 1e999})");
  expect_io_error([&] { read_json_file(dir / "s.json"); },
                  {"s.json", "field 'rope_theta'", "number out of range", "'1e999'"});
  expect_io_error([&] { parse_json_strict(R"({"rope_scaling": {"factor": -1e400}})", "c.json"); },
                  {"c.json", "field 'rope_scaling.factor'", "'-1e400'"});
  expect_io_error([&] { parse_json_strict(R"({"a": [1, 2, 1e999]})", "c.json"); },
                  {"field 'a[2]'"});
}

TEST(read_json_file, a_repeated_key_is_an_error_naming_it) {
  expect_io_error([] { parse_json_strict(R"({"head_dim":32,"head_dim":64})", "s.json"); },
                  {"s.json", "field 'head_dim'", "duplicate key", "'head_dim'"});
  expect_io_error(
      [] { parse_json_strict(R"({"rope_scaling": {"factor": 2, "factor": 4}})", "s.json"); },
      {"field 'rope_scaling.factor'", "duplicate key"});
  // The same key in two objects is not a repeat.
  EXPECT_NO_THROW(parse_json_strict(R"([{"a": 1}, {"a": 2}])", "s.json"));
}

TEST(read_json_file, syntax_errors_name_the_file_on_one_line) {
  expect_io_error([] { parse_json_strict("{\"a\": tru}", "s.json"); },
                  {"s.json: JSON: invalid JSON", "line 1"});
  expect_io_error([] { parse_json_strict("", "empty.json"); }, {"empty.json", "invalid JSON"});
  expect_io_error([] { parse_json_strict("{} {}", "s.json"); }, {"s.json", "invalid JSON"});
}

TEST(read_json_file, deep_nesting_is_refused) {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  expect_io_error([&] { parse_json_strict(deep, "d.json"); }, {"d.json", "nested too deeply"});
}

TEST(read_json_file, a_directory_is_refused_naming_the_file) {
  const scratch_dir dir;
  expect_io_error([&] { read_json_file(dir.path()); },
                  {dir.path().string(), "is a directory, not a regular file"});
}

TEST(read_json_file, a_fifo_is_refused_without_blocking) {
  const scratch_dir dir;
  ASSERT_EQ(::mkfifo((dir / "f.json").c_str(), 0600), 0);
  expect_io_error([&] { read_json_file(dir / "f.json"); }, {"f.json", "is a FIFO"});
}

TEST(read_json_file, a_file_over_the_cap_is_refused_before_reading) {
  const scratch_dir dir;
  write(dir / "big.json", "[" + std::string(100, ' ') + "]");
  expect_io_error([&] { read_json_file(dir / "big.json", 64); }, {"big.json", "is too large"});
  expect_io_error([&] { read_json_file("/dev/zero"); }, {"/dev/zero", "is a character device"});
}

}  // namespace
}  // namespace ropecheck
