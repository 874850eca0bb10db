// Tests for io/safetensors.h. Files are built by hand from the format README (u64 LE header
// length, JSON header, data buffer); every malformed input must be an io_error naming the
// file, the field and the offending value.
#include "io/safetensors.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "io/file_bytes.h"
#include "io/io_error.h"
#include "io/read_tensor.h"
#include "io/test_support.h"

namespace ropecheck {
namespace {

using ropecheck::testing::append;
using ropecheck::testing::append_le;
using ropecheck::testing::expect_io_error;
using ropecheck::testing::scratch_dir;

constexpr dtype all_dtypes[] = {dtype::float64,  dtype::float32, dtype::float16,
                                dtype::bfloat16, dtype::int32,   dtype::int64,
                                dtype::float8_e4m3fn, dtype::float8_e5m2};

std::vector<std::byte> st_bytes(std::string_view header, std::size_t data_bytes,
                                std::optional<std::uint64_t> declared_length = std::nullopt) {
  std::vector<std::byte> out;
  append_le(out, declared_length.value_or(header.size()), 8);
  append(out, header);
  for (std::size_t i = 0; i < data_bytes; ++i) out.push_back(static_cast<std::byte>(i));
  return out;
}

tensor sample_tensor(dtype type, std::vector<std::int64_t> shape) {
  const std::optional<std::int64_t> count = checked_element_count(shape);
  std::vector<double> values;
  for (std::int64_t i = 0; i < *count; ++i) {
    values.push_back(is_floating(type) ? (static_cast<double>(i) - 2.0) * 0.625
                                       : static_cast<double>(i * 99 - 5));
  }
  return from_float64(values, std::move(shape), type);
}

TEST(safetensors, round_trips_every_dtype_and_rank_in_one_file) {
  const scratch_dir dir;
  named_tensors tensors;
  const std::vector<std::vector<std::int64_t>> shapes{{},        {5},          {2, 3},
                                                      {2, 1, 4}, {2, 3, 1, 2}, {0}};
  for (const dtype type : all_dtypes) {
    for (const auto& shape : shapes) {
      tensors.emplace_back(fmt::format("{}.rank{}{}", to_string(type), shape.size(),
                                       shape == std::vector<std::int64_t>{0} ? "_empty" : ""),
                           sample_tensor(type, shape));
    }
  }
  const auto path = dir / "model.safetensors";
  write_safetensors(path, tensors);
  for (const auto& [name, original] : tensors) {
    ASSERT_EQ(read_safetensors(path, name), original) << name;
    ASSERT_EQ(read_tensor(path, name), original) << name;
  }
  EXPECT_EQ(safetensors_tensor_names(path).size(), tensors.size());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
}

TEST(safetensors, writer_aligns_the_data_buffer_to_8_bytes) {
  for (std::size_t name_length = 1; name_length < 10; ++name_length) {
    const std::vector<std::byte> bytes =
        encode_safetensors({{std::string(name_length, 'n'), sample_tensor(dtype::float64, {2})}});
    std::uint64_t header_length = 0;
    std::memcpy(&header_length, bytes.data(), 8);
    EXPECT_EQ((8 + header_length) % 8, 0u);
    EXPECT_EQ(parse_safetensors(bytes, "mem").values<double>()[1], -0.625);
  }
}

TEST(safetensors, single_tensor_needs_no_name_and_metadata_is_ignored) {
  const std::string header = R"({"__metadata__": {"format": "pt"},
      "q": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  const tensor t = parse_safetensors(st_bytes(header, 8), "mem");
  EXPECT_EQ(t.type, dtype::float32);
  EXPECT_EQ(t.shape, std::vector<std::int64_t>{2});
}

// safetensors names torch's fp8 F8_E4M3 / F8_E5M2 (safetensors' Dtype enum); one byte each.
TEST(safetensors, reads_fp8_by_their_safetensors_names) {
  const std::string header = R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]},)"
                             R"("b":{"dtype":"F8_E5M2","shape":[2],"data_offsets":[2,4]}})";
  std::vector<std::byte> bytes = st_bytes(header, 0);
  for (const int b : {0x38, 0xc0, 0x38, 0x7b}) bytes.push_back(static_cast<std::byte>(b));
  const tensor a = parse_safetensors(bytes, "mem", "a");
  EXPECT_EQ(a.type, dtype::float8_e4m3fn);
  EXPECT_EQ(to_float64(a), (std::vector<double>{1.0, -2.0}));
  const tensor b = parse_safetensors(bytes, "mem", "b");
  EXPECT_EQ(b.type, dtype::float8_e5m2);
  EXPECT_EQ(to_float64(b), (std::vector<double>{0.5, 57344.0}));
}

TEST(safetensors, reads_a_hand_built_file_with_unpadded_header_and_misaligned_data) {
  const scratch_dir dir;
  std::string header = R"({"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})";
  if ((8 + header.size()) % 8 == 0) header += " ";  // force the data off 8-byte alignment
  std::vector<std::byte> bytes = st_bytes(header, 0);
  const double values[2] = {0.1, -3.5};
  bytes.resize(bytes.size() + sizeof values);
  std::memcpy(bytes.data() + bytes.size() - sizeof values, values, sizeof values);
  {
    std::ofstream out(dir / "odd.safetensors", std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  const tensor t = read_safetensors(dir / "odd.safetensors");
  EXPECT_EQ(t.values<double>()[0], 0.1);
  EXPECT_EQ(t.values<double>()[1], -3.5);
}

TEST(safetensors, large_files_are_memory_mapped_and_read_correctly) {
  const scratch_dir dir;
  const tensor big = sample_tensor(dtype::bfloat16, {1024, 1024});  // 2 MiB
  write_safetensors(dir / "big.safetensors",
                    {{"w", big}, {"b", sample_tensor(dtype::float32, {3})}});
  EXPECT_TRUE(load_file(dir / "big.safetensors").mapped);
  EXPECT_EQ(read_safetensors(dir / "big.safetensors", "w"), big);
}

// --- choosing a tensor ---------------------------------------------------------------

const std::string two_tensors =
    R"({"alpha": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
        "beta": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})";

TEST(safetensors_errors, ambiguous_or_unknown_names_list_the_choices) {
  expect_io_error([] { (void)parse_safetensors(st_bytes(two_tensors, 8), "m.safetensors"); },
                  {"m.safetensors", "tensor name", "several tensors", "alpha, beta"});
  expect_io_error(
      [] { (void)parse_safetensors(st_bytes(two_tensors, 8), "m.safetensors", "gamma"); },
      {"m.safetensors", "tensor name", "no such tensor", "'gamma'", "alpha, beta"});
  EXPECT_EQ(parse_safetensors(st_bytes(two_tensors, 8), "m", "beta").elements(), 1);
  expect_io_error(
      [] { (void)parse_safetensors(st_bytes(R"({"__metadata__": {}})", 0), "m.safetensors"); },
      {"m.safetensors", "tensor name", "no tensors"});
}

// --- malformed input -----------------------------------------------------------------

TEST(safetensors_errors, unreadable_file) {
  const scratch_dir dir;
  expect_io_error([&] { (void)read_safetensors(dir / "gone.safetensors"); },
                  {"gone.safetensors", "file", "No such file or directory"});
}

TEST(safetensors_errors, header_length) {
  expect_io_error(
      [] {
        (void)parse_safetensors(ropecheck::testing::to_bytes(std::string_view("\x05\x00\x00", 3)),
                                "h.st");
      },
      {"h.st", "header length", "truncated file", "'3 bytes'"});
  expect_io_error([] { (void)parse_safetensors(st_bytes("{}", 0, 500), "h.st"); },
                  {"h.st", "header length", "truncated header", "'500'"});
  expect_io_error(
      [] { (void)parse_safetensors(st_bytes("{}", 0, std::uint64_t{1} << 62), "h.st"); },
      {"h.st", "header length", "implausibly large", "'4611686018427387904'"});
}

TEST(safetensors_errors, a_repeated_tensor_name_is_an_error_naming_it) {
  const std::string entry = R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  expect_io_error(
      [&] { (void)parse_safetensors(st_bytes("{\"x\": " + entry + ", \"x\": " + entry + "}", 8), "d.st"); },
      {"d.st", "header field 'x'", "duplicate key", "'x'"});
}

TEST(safetensors_errors, header_json) {
  expect_io_error([] { (void)parse_safetensors(st_bytes(R"({"a": {"dtype": )", 0), "j.st"); },
                  {"j.st", "header", "invalid JSON"});
  expect_io_error([] { (void)parse_safetensors(st_bytes("[1, 2]", 0), "j.st"); },
                  {"j.st", "header", "expected a JSON object", "'[1,2]'"});
  expect_io_error([] { (void)parse_safetensors(st_bytes(R"({"a": 5})", 0), "j.st"); },
                  {"j.st", "tensor 'a'", "expected a JSON object", "'5'"});
  expect_io_error([] { (void)parse_safetensors(st_bytes(R"({"__metadata__": 5})", 0), "j.st"); },
                  {"j.st", "header field '__metadata__'", "'5'"});
  expect_io_error(
      [] {
        (void)parse_safetensors(
            st_bytes(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "extra": 1}})",
                     4),
            "j.st");
      },
      {"j.st", "tensor 'a'", "unexpected key", "'extra'"});
}

std::string entry_header(std::string_view dtype_json, std::string_view shape_json,
                         std::string_view offsets_json) {
  return fmt::format(R"({{"t": {{"dtype": {}, "shape": {}, "data_offsets": {}}}}})", dtype_json,
                     shape_json, offsets_json);
}

TEST(safetensors_errors, entry_dtype) {
  expect_io_error(
      [] {
        (void)parse_safetensors(st_bytes(entry_header(R"("U8")", "[4]", "[0, 4]"), 4), "d.st");
      },
      {"d.st", "tensor 't' field 'dtype'", "unsupported dtype", "'U8'"});
  expect_io_error(
      [] { (void)parse_safetensors(st_bytes(entry_header("7", "[1]", "[0, 4]"), 4), "d.st"); },
      {"d.st", "tensor 't' field 'dtype'", "'7'"});
  expect_io_error(
      [] {
        (void)parse_safetensors(st_bytes(R"({"t": {"shape": [1], "data_offsets": [0, 4]}})", 4),
                                "d.st");
      },
      {"d.st", "tensor 't' field 'dtype'", "missing"});
}

TEST(safetensors_errors, entry_shape) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"[-1]", "'-1'"},
      {"[2.5]", "'2.5'"},
      {"\"2\"", "'\"2\"'"},
      {"[\"a\"]", "'\"a\"'"},
      {"[18446744073709551615]", "'18446744073709551615'"}};
  for (const auto& test_case : cases) {
    const auto& shape = test_case.first;
    const auto& value = test_case.second;
    expect_io_error(
        [&] {
          (void)parse_safetensors(st_bytes(entry_header(R"("F32")", shape, "[0, 4]"), 4), "s.st");
        },
        {"s.st", "tensor 't' field 'shape'", value});
  }
  expect_io_error(
      [] {
        (void)parse_safetensors(
            st_bytes(entry_header(R"("F32")", "[4294967296, 4294967296]", "[0, 4]"), 4), "s.st");
      },
      {"s.st", "tensor 't' field 'shape'", "element count overflows"});
}

TEST(safetensors_errors, entry_offsets) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"[0, 40]", "out of range"},
      {"[4, 0]", "begin <= end"},
      {"[0]", "begin <= end"},
      {"[0, 4, 8]", "begin <= end"},
      {"[-4, 4]", "begin <= end"},
      {"\"0-4\"", "begin <= end"},
      {"[0, 8]", "size does not match shape"},
  };
  for (const auto& test_case : cases) {
    const auto& offsets = test_case.first;
    const auto& problem = test_case.second;
    expect_io_error(
        [&] {
          (void)parse_safetensors(st_bytes(entry_header(R"("F32")", "[1]", offsets), 8), "o.st");
        },
        {"o.st", "tensor 't' field 'data_offsets'", problem});
  }
}

TEST(safetensors_errors, tensors_must_tile_the_data_buffer) {
  const std::string overlap =
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
          "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})";
  expect_io_error([&] { (void)parse_safetensors(st_bytes(overlap, 8), "t.st", "a"); },
                  {"t.st", "tensor 'b' field 'data_offsets'", "overlaps", "'[4, 8]'"});
  const std::string gap =
      R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
          "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})";
  expect_io_error([&] { (void)parse_safetensors(st_bytes(gap, 12), "t.st", "a"); },
                  {"t.st", "tensor 'b' field 'data_offsets'", "gap", "'[8, 12]'"});
  expect_io_error([] { (void)parse_safetensors(st_bytes(two_tensors, 11), "t.st", "a"); },
                  {"t.st", "data", "trailing bytes", "'3 bytes'"});
}

TEST(safetensors_errors, write_to_a_missing_directory_leaves_nothing) {
  const scratch_dir dir;
  expect_io_error(
      [&] {
        write_safetensors(dir / "nope" / "m.safetensors", {{"a", tensor(dtype::float32, {1})}});
      },
      {"m.safetensors", "file", "No such file or directory"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(safetensors_robustness, truncations_and_byte_flips_only_ever_raise_io_error) {
  const std::vector<std::byte> valid = encode_safetensors(
      {{"a", sample_tensor(dtype::float16, {2, 2})}, {"b", sample_tensor(dtype::int64, {3})}});
  for (std::size_t n = 0; n < valid.size(); ++n) {
    EXPECT_THROW((void)parse_safetensors(std::span(valid).first(n), "p.st", "a"), io_error) << n;
  }
  const char replacements[] = {'\0', ' ', '[', ']', ',',  '"',    '{',    '}',   ':',
                               '9',  '-', '.', 'e', '\\', '\x7f', '\xc3', '\xff'};
  for (std::size_t i = 0; i < valid.size(); ++i) {
    for (const char r : replacements) {
      std::vector<std::byte> corrupt = valid;
      corrupt[i] = static_cast<std::byte>(r);
      try {
        (void)parse_safetensors(corrupt, "p.st", "a");
      } catch (const io_error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << " -> " << int(r) << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck
