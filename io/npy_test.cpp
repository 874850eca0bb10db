// Tests for io/npy.h. Byte streams are built here by hand from the format spec
// (numpy.lib.format / NEP 1) — no numpy at test time. Every malformed input must be an
// io_error naming the file, the field and the offending value.
#include "io/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
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

// How the raw-bits dtype of a type is named to the reader (bfloat16 for the 16-bit, itself for fp8).
dtype raw_of(dtype type) { return is_float8(type) ? type : dtype::bfloat16; }

// magic | major minor | header length (u16 for 1.x, u32 otherwise) | header | data
std::vector<std::byte> npy_bytes(int major, std::string_view header,
                                 std::span<const std::byte> data = {}, int minor = 0) {
  std::vector<std::byte> out;
  append(out, "\x93NUMPY");
  out.push_back(static_cast<std::byte>(major));
  out.push_back(static_cast<std::byte>(minor));
  append_le(out, header.size(), major == 1 ? 2 : 4);
  append(out, header);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

void write_bytes(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Distinct, exactly representable values for every dtype, so round trips compare bytes.
tensor sample_tensor(dtype type, std::vector<std::int64_t> shape) {
  const std::optional<std::int64_t> count = checked_element_count(shape);
  std::vector<double> values;
  for (std::int64_t i = 0; i < *count; ++i) {
    values.push_back(is_floating(type) ? (static_cast<double>(i) - 3.0) * 0.375
                                       : static_cast<double>(i * 1000 - 7));
  }
  return from_float64(values, std::move(shape), type);
}

std::vector<std::vector<std::int64_t>> shapes_of_rank_0_to_4() {
  return {{}, {5}, {2, 3}, {2, 1, 4}, {2, 3, 1, 2}, {0}, {2, 0, 3}};
}

TEST(npy, round_trips_every_dtype_and_rank_through_a_file) {
  const scratch_dir dir;
  for (const dtype type : all_dtypes) {
    for (const auto& shape : shapes_of_rank_0_to_4()) {
      const tensor original = sample_tensor(type, shape);
      const auto path = dir / "t.npy";
      write_npy(path, original);
      const tensor back = read_npy(path, raw_of(type));
      ASSERT_EQ(back, original) << to_string(type) << " " << format_shape(shape);
      ASSERT_EQ(parse_npy(encode_npy(original), "mem", raw_of(type)), original);
      ASSERT_EQ(read_tensor(path, std::nullopt, raw_of(type)), original);
    }
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"t.npy"});
}

TEST(npy, writer_follows_the_format_exactly) {
  const tensor t = from_float64(std::vector<double>{1, 2, 3}, {3}, dtype::float32);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  // numpy pads with spaces and ends with '\n' so the data starts at a multiple of 64.
  const std::string header = dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  const auto expected = npy_bytes(1, header, bytes_of(std::vector<float>{1, 2, 3}));
  EXPECT_EQ(encode_npy(t), expected);
}

TEST(npy, writer_aligns_data_to_64_bytes_and_spells_each_descr) {
  const std::pair<dtype, std::string_view> descrs[] = {
      {dtype::float64, "'<f8'"},  {dtype::float32, "'<f4'"}, {dtype::float16, "'<f2'"},
      {dtype::bfloat16, "'<u2'"}, {dtype::int32, "'<i4'"},   {dtype::int64, "'<i8'"},
      {dtype::float8_e4m3fn, "'|u1'"}, {dtype::float8_e5m2, "'|u1'"}};
  for (const auto& [type, descr] : descrs) {
    for (const auto& shape : shapes_of_rank_0_to_4()) {
      const std::vector<std::byte> bytes = encode_npy(sample_tensor(type, shape));
      const npy_layout layout = parse_npy_layout(bytes, "mem", raw_of(type));
      EXPECT_EQ(layout.major_version, 1);
      EXPECT_EQ(layout.data_offset % 64, 0u);
      EXPECT_EQ(static_cast<char>(bytes[layout.data_offset - 1]), '\n');
      const std::string text(reinterpret_cast<const char*>(bytes.data()), layout.data_offset);
      EXPECT_NE(text.find(descr), std::string::npos) << text;
    }
  }
}

TEST(npy, writer_switches_to_version_2_for_huge_headers) {
  std::vector<std::int64_t> shape(30000, 1);  // "1, " x 30000 does not fit a u16 length
  const std::vector<std::byte> bytes = encode_npy(tensor(dtype::float32, shape));
  EXPECT_EQ(static_cast<int>(bytes[6]), 2);
  const tensor back = parse_npy(bytes, "mem");
  EXPECT_EQ(back.shape, shape);
}

TEST(npy, reads_hand_built_version_1_2_and_3_headers) {
  const auto data = bytes_of(std::vector<float>{1.5f, -2.0f});
  for (const int major : {1, 2, 3}) {
    const tensor t = parse_npy(
        npy_bytes(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", data),
        "mem");
    EXPECT_EQ(t.type, dtype::float32);
    EXPECT_EQ(t.shape, std::vector<std::int64_t>{2});
    EXPECT_EQ(t.values<float>()[1], -2.0f);
  }
}

TEST(npy, header_dict_parsing_is_tolerant_of_python_literal_spelling) {
  const auto eight_floats = bytes_of(std::vector<float>(8, 0.25f));
  const std::pair<std::string_view, std::vector<std::int64_t>> cases[] = {
      {"{'descr':'<f4','fortran_order':False,'shape':(8,)}", {8}},  // no spaces
      {"{ 'shape' : ( 2 , 4 ) , 'descr' : '<f4' , 'fortran_order' : False }\n", {2, 4}},
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 2, 2),}", {2, 2, 2}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (8L,), }", {8}},  // Python 2 long
      {"{'descr': '<f4',\n 'fortran_order': False,\t'shape': (1, 8,)}   \n", {1, 8}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (8), }", {}},  // (8) is 8, not a tuple
  };
  for (const auto& test_case : cases) {
    const auto& header = test_case.first;
    const auto& shape = test_case.second;
    if (shape.empty()) {
      expect_io_error([&] { (void)parse_npy(npy_bytes(1, header, eight_floats), "x.npy"); },
                      {"x.npy", "header field 'shape'", "'(8)'"});
      continue;
    }
    const tensor t = parse_npy(npy_bytes(1, header, eight_floats), "mem");
    EXPECT_EQ(t.shape, shape) << header;
  }
  const tensor scalar =
      parse_npy(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
                          bytes_of(std::vector<double>{4.5})),
                "mem");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.values<double>()[0], 4.5);
}

TEST(npy, raw_16_bit_data_is_bfloat16_only_when_asked) {
  const auto data = bytes_of(std::vector<std::uint16_t>{0x3f80, 0xc000});
  for (const std::string_view descr : {"'<u2'", "'|V2'"}) {
    const std::string header =
        "{'descr': " + std::string(descr) + ", 'fortran_order': False, 'shape': (2,), }\n";
    const tensor t = parse_npy(npy_bytes(1, header, data), "mem", dtype::bfloat16);
    EXPECT_EQ(t.type, dtype::bfloat16);
    EXPECT_EQ(to_float64(t), (std::vector<double>{1.0, -2.0}));
    expect_io_error([&] { (void)parse_npy(npy_bytes(1, header, data), "q.npy"); },
                    {"q.npy", "header field 'descr'", descr, "--dtype bfloat16"});
    expect_io_error([&] { (void)parse_npy(npy_bytes(1, header, data), "q.npy", dtype::float16); },
                    {"q.npy", "header field 'descr'", "--dtype bfloat16"});
  }
}

// uint8 .npy data is fp8 only when the format is named; the same two bytes are different
// values in each (OCP OFP8 tables: 0x38 = 1.0 in e4m3fn, 0.5 in e5m2; 0xC0 = −2.0 in both).
TEST(npy, raw_8_bit_data_is_fp8_only_when_asked) {
  const std::vector<std::byte> data{std::byte{0x38}, std::byte{0xc0}};
  for (const std::string_view descr : {"'|u1'", "'|V1'"}) {
    const std::string header =
        "{'descr': " + std::string(descr) + ", 'fortran_order': False, 'shape': (2,), }\n";
    const tensor e4 = parse_npy(npy_bytes(1, header, data), "mem", dtype::float8_e4m3fn);
    EXPECT_EQ(e4.type, dtype::float8_e4m3fn);
    EXPECT_EQ(to_float64(e4), (std::vector<double>{1.0, -2.0}));
    const tensor e5 = parse_npy(npy_bytes(1, header, data), "mem", dtype::float8_e5m2);
    EXPECT_EQ(to_float64(e5), (std::vector<double>{0.5, -2.0}));
    expect_io_error([&] { (void)parse_npy(npy_bytes(1, header, data), "y.npy"); },
                    {"y.npy", "header field 'descr'", descr, "--dtype float8_e4m3fn"});
    expect_io_error([&] { (void)parse_npy(npy_bytes(1, header, data), "y.npy", dtype::bfloat16); },
                    {"y.npy", "header field 'descr'", "raw 8-bit dtype"});
  }
}

TEST(npy, large_files_are_memory_mapped_and_read_correctly) {
  const scratch_dir dir;
  const tensor big = sample_tensor(dtype::float32, {1024, 1024});  // 4 MiB
  write_npy(dir / "big.npy", big);
  EXPECT_TRUE(load_file(dir / "big.npy").mapped);
  EXPECT_EQ(read_npy(dir / "big.npy"), big);
}

// Resident pages of this process (/proc/self/statm, second field), file-backed ones included.
long resident_pages() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident;
}

// Streaming readers release what they are done with: a mapped tensor's pages leave resident
// memory and read back unchanged; owned storage is never touched (MADV_DONTNEED would zero it).
TEST(npy, released_pages_of_a_mapped_tensor_leave_memory_and_read_back_unchanged) {
  const scratch_dir dir;
  const tensor big = sample_tensor(dtype::float32, {4096, 1024});  // 16 MiB
  write_npy(dir / "big.npy", big);
  const tensor mapped = read_npy(dir / "big.npy");
  ASSERT_EQ(mapped, big);  // touches every page
  const long before = resident_pages();
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  for (std::int64_t first = 0; first < mapped.elements(); first += 1000 * 1024)  // in chunks
    mapped.release_pages(first, 1000 * 1024);
  const long after = resident_pages();
  // All but one page per chunk boundary (and the partial pages at both ends) are released.
  EXPECT_GT((before - after) * page_bytes, 15 << 20) << before << " -> " << after;
  EXPECT_EQ(mapped, big);

  tensor owned = big;
  owned.mutable_values<float>()[0] = 1.0f;  // a private copy now
  owned.release_pages(0, owned.elements());
  EXPECT_EQ(owned.values<float>()[1], big.values<float>()[1]);
  EXPECT_EQ(owned.values<float>()[owned.elements() - 1], big.values<float>()[big.elements() - 1]);
  tensor written = read_npy(dir / "big.npy");
  written.mutable_values<float>()[0] = 2.0f;  // copy-on-write: no longer the mapping
  written.release_pages(0, written.elements());
  EXPECT_EQ(written.values<float>()[5], big.values<float>()[5]);
}

TEST(npy, misaligned_data_is_still_read_correctly) {
  const scratch_dir dir;
  // A 51-byte header after the 10-byte preamble puts the float64 data at offset 61.
  const auto bytes =
      npy_bytes(1, "{'descr':'<f8','fortran_order':False,'shape':(2,)}" + std::string(1, '\n'),
                bytes_of(std::vector<double>{0.1, -7.0}));
  ASSERT_NE((bytes.size() - 16) % 8, 0u);
  write_bytes(dir / "odd.npy", bytes);
  EXPECT_EQ(read_npy(dir / "odd.npy").values<double>()[0], 0.1);
}

// --- malformed input -----------------------------------------------------------------

const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";

std::vector<std::byte> with_dict(std::string_view dict, std::size_t data_bytes = 8) {
  return npy_bytes(1, dict, std::vector<std::byte>(data_bytes));
}

TEST(npy_errors, unreadable_files) {
  const scratch_dir dir;
  const auto missing = dir / "missing.npy";
  expect_io_error([&] { (void)read_npy(missing); },
                  {missing.string(), "file", "No such file or directory"});
  expect_io_error([&] { (void)read_npy(dir.path()); }, {dir.path().string(), "file", "directory"});
}

TEST(npy_errors, magic_and_version) {
  expect_io_error([] { (void)parse_npy({}, "e.npy"); }, {"e.npy", "magic", "''"});
  expect_io_error(
      [] { (void)parse_npy(ropecheck::testing::to_bytes("PK\x03\x04zip file"), "z.npy"); },
      {"z.npy", "magic", "'504b03047a69'"});
  expect_io_error([] { (void)parse_npy(ropecheck::testing::to_bytes("\x93NUMPY\x01"), "t.npy"); },
                  {"t.npy", "version", "truncated"});
  expect_io_error([] { (void)parse_npy(npy_bytes(4, good_dict), "v.npy"); },
                  {"v.npy", "version", "'4.0'"});
  expect_io_error([] { (void)parse_npy(npy_bytes(1, good_dict, {}, 1), "v.npy"); },
                  {"v.npy", "version", "'1.1'"});
  expect_io_error([] { (void)parse_npy(npy_bytes(0, good_dict), "v.npy"); },
                  {"v.npy", "version", "'0.0'"});
}

TEST(npy_errors, truncated_header) {
  auto bytes = npy_bytes(2, good_dict);
  expect_io_error([&] { (void)parse_npy(std::span(bytes).first(10), "h.npy"); },
                  {"h.npy", "header length", "truncated"});
  bytes = npy_bytes(1, good_dict);
  bytes[8] = std::byte{200};  // claims 200 bytes of header; the dict is shorter
  bytes[9] = std::byte{0};
  expect_io_error([&] { (void)parse_npy(bytes, "h.npy"); },
                  {"h.npy", "header length", "truncated header", "'200'"});
}

TEST(npy_errors, malformed_dicts) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}'"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", "expected ':'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "unexpected text after"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}", "unexpected character"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", "unexpected character"},
      {"{descr: '<f4'}", "expected a string key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(((((((((((((((((((2,)))))))))))))))))))}",
       "nesting too deep"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-,)}", "expected a digit"},
      {"", "unexpected end"},
      {"{'descr': '<f4\\", "unterminated string"},
  };
  for (const auto& test_case : cases) {
    const auto& dict = test_case.first;
    const auto& problem = test_case.second;
    expect_io_error([&] { (void)parse_npy(with_dict(dict), "d.npy"); },
                    {"d.npy: header: malformed header dict", problem});
  }
  expect_io_error([] { (void)parse_npy(with_dict("[1, 2]"), "d.npy"); },
                  {"d.npy", "header", "expected a dict", "'[1, 2]'"});
}

TEST(npy_errors, dict_keys) {
  expect_io_error(
      [] { (void)parse_npy(with_dict("{'descr': '<f4', 'fortran_order': False}"), "k.npy"); },
      {"k.npy", "header", "missing key", "'shape'"});
  expect_io_error(
      [] {
        (void)parse_npy(
            with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"), "k.npy");
      },
      {"k.npy", "header", "unexpected key", "'x'"});
  expect_io_error(
      [] {
        (void)parse_npy(
            with_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"),
            "k.npy");
      },
      {"k.npy", "header", "duplicate key", "'descr'"});
}

TEST(npy_errors, unsupported_descr) {
  const auto descr_dict = [](std::string_view descr) {
    return "{'descr': " + std::string(descr) + ", 'fortran_order': False, 'shape': (2,), }";
  };
  expect_io_error([&] { (void)parse_npy(with_dict(descr_dict("'>f4'")), "X.npy"); },
                  {"X.npy: header field 'descr': unsupported dtype '>f4' (big-endian)"});
  for (const std::string_view descr : {"<c8", "|i1", "|b1", "<U4", "=f4", "<f16", ""}) {
    expect_io_error(
        [&] { (void)parse_npy(with_dict(descr_dict("'" + std::string(descr) + "'")), "X.npy"); },
        {"X.npy", "header field 'descr'", "unsupported dtype", "'" + std::string(descr) + "'"});
  }
  expect_io_error([&] { (void)parse_npy(with_dict(descr_dict("[('a', '<f4')]")), "X.npy"); },
                  {"X.npy", "header field 'descr'", "[('a', '<f4')]", "structured"});
}

TEST(npy_errors, fortran_order) {
  expect_io_error(
      [] {
        (void)parse_npy(with_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}"),
                        "F.npy");
      },
      {"F.npy", "header field 'fortran_order'", "'True'", "C-order"});
  expect_io_error(
      [] {
        (void)parse_npy(with_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}"), "F.npy");
      },
      {"F.npy", "header field 'fortran_order'", "'0'"});
}

TEST(npy_errors, bad_shapes) {
  const auto shape_dict = [](std::string_view shape) {
    return "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(shape) + "}";
  };
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"[2]", "'[2]'"},
      {"(2, -1)", "'-1'"},
      {"(2, 'a')", "''a''"},
      {"(2, True)", "'True'"},
      {"(99999999999999999999,)", "'99999999999999999999'"},
      {"None", "'None'"},
  };
  for (const auto& test_case : cases) {
    const auto& shape = test_case.first;
    const auto& value = test_case.second;
    expect_io_error([&] { (void)parse_npy(with_dict(shape_dict(shape)), "s.npy"); },
                    {"s.npy", "header field 'shape'", value});
  }
  expect_io_error(
      [&] { (void)parse_npy(with_dict(shape_dict("(4294967296, 4294967296)")), "s.npy"); },
      {"s.npy", "header field 'shape'", "element count overflows", "'(4294967296, 4294967296)'"});
}

TEST(npy_errors, data_size_must_match_the_shape) {
  expect_io_error([] { (void)parse_npy(with_dict(good_dict, 7), "d.npy"); },
                  {"d.npy", "data", "truncated data", "'7 bytes'", "needs 8 bytes"});
  expect_io_error([] { (void)parse_npy(with_dict(good_dict, 12), "d.npy"); },
                  {"d.npy", "data", "trailing bytes", "'12 bytes'"});
}

TEST(npy_errors, write_to_a_missing_directory_leaves_nothing) {
  const scratch_dir dir;
  expect_io_error([&] { write_npy(dir / "nope" / "out.npy", tensor(dtype::float32, {2})); },
                  {"out.npy", "file", "No such file or directory"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(read_tensor, dispatches_on_the_extension) {
  const scratch_dir dir;
  const tensor t = sample_tensor(dtype::float64, {2, 2});
  write_npy(dir / "a.npy", t);
  EXPECT_EQ(read_tensor(dir / "a.npy"), t);
  expect_io_error([&] { (void)read_tensor(dir / "a.npy", "q"); }, {"a.npy", "tensor name", "'q'"});
  expect_io_error([&] { (void)read_tensor(dir / "a.bin"); },
                  {"a.bin", "file extension", "'.bin'", ".npy or .safetensors"});
}

// A poor man's fuzz pass that runs in every ctest (and under ASan/UBSan): every prefix and
// many single-byte corruptions of a valid file must parse or throw io_error — nothing else.
TEST(npy_robustness, truncations_and_byte_flips_only_ever_raise_io_error) {
  const std::vector<std::byte> valid = encode_npy(sample_tensor(dtype::float32, {2, 3}));
  for (std::size_t n = 0; n < valid.size(); ++n) {
    EXPECT_THROW((void)parse_npy(std::span(valid).first(n), "p.npy"), io_error) << n;
  }
  const char replacements[] = {'\0', ' ', '(', ')', ',', '\'', '"',    '{',   '}',
                               ':',  '9', '-', 'L', 'x', '\\', '\x7f', '\xff'};
  for (std::size_t i = 0; i < valid.size(); ++i) {
    for (const char r : replacements) {
      std::vector<std::byte> corrupt = valid;
      corrupt[i] = static_cast<std::byte>(r);
      try {
        (void)parse_npy(corrupt, "p.npy", dtype::bfloat16);
      } catch (const io_error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << " -> " << int(r) << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck
