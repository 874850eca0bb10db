// dtype_lists_test: the storage dtypes are listed once, in numeric/dtype.h's dtype_catalog, and
// every registry, option, binding, benchmark and test iterates that list (storage_dtypes, or
// ropecheck.storage_dtypes in Python). A source file that retypes the list goes stale the day
// a dtype is added, so this test fails on any source line (with the next one, for a list split
// over two lines) outside numeric/dtype.h that names all storage dtypes or all but one: a
// complete list is a copy, and an almost complete one is a copy that missed a dtype. Subsets
// (the 16-bit formats, the 8-bit ones) are fine. Switches over dtype need no check here: they
// have no default, and -Wswitch (an error under -Werror) names the missing case.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "numeric/dtype.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// How many storage dtypes `code` names as code does — dtype::NAME, "NAME" or 'NAME' — so that
// prose ("float16 and bfloat16 are held as bits") is not a list and bfloat16 is not float16.
std::size_t storage_names_in(const std::string& code) {
  std::size_t named = 0;
  for (dtype t : storage_dtypes) {
    const std::string name(to_string(t));
    const auto names_it = [&](const std::string& token, bool open_ended) {
      for (std::size_t at = code.find(token); at != std::string::npos; at = code.find(token, at + 1)) {
        const std::size_t end = at + token.size();
        if (!open_ended || end == code.size() || !word_char(code[end])) return true;
      }
      return false;
    };
    if (names_it("dtype::" + name, true) || names_it("\"" + name + "\"", false) || names_it("'" + name + "'", false))
      ++named;
  }
  return named;
}

bool retypes_the_list(const std::string& code) { return storage_names_in(code) + 1 >= storage_dtypes.size(); }

bool scanned(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cpp" || ext == ".h" || ext == ".c" || ext == ".py" || ext == ".pyi" || ext == ".sh";
}

// A line that ends in an open list or argument list goes on on the next line.
bool continued(const std::string& line) {
  const std::size_t last = line.find_last_not_of(" \t\r");
  return last != std::string::npos && std::string_view(",([{").find(line[last]) != std::string_view::npos;
}

// "file:line" of every list (a line, with the next if it continues there) that retypes the
// storage dtypes.
std::vector<std::string> retyped_lists(const fs::path& root) {
  std::vector<std::string> found;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    if (it->is_directory()) {
      // Hidden folders and build trees (a folder with a CMakeCache.txt) are not the source.
      if (p.filename().string().front() == '.' || fs::exists(p / "CMakeCache.txt")) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !scanned(p)) continue;
    const std::string file = fs::relative(p, root).generic_string();
    if (file == "numeric/dtype.h") continue;  // the catalog itself
    std::ifstream in(p);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const bool joined = continued(lines[i]) && i + 1 < lines.size();
      if (!retypes_the_list(joined ? lines[i] + "\n" + lines[i + 1] : lines[i])) continue;
      found.push_back(file + ":" + std::to_string(i + 1));
      if (joined) ++i;  // the same list, once
    }
  }
  return found;
}

TEST(DtypeCatalog, RowsAreUniqueAndRoundTrip) {
  std::set<std::string_view> names;
  std::set<dtype> types;
  for (const dtype_row& r : dtype_catalog) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_TRUE(types.insert(r.type).second) << r.name;
    EXPECT_EQ(parse_dtype(r.name), r.type) << r.name;
    EXPECT_EQ(to_string(r.type), r.name);
  }
  EXPECT_EQ(parse_dtype("float8"), std::nullopt);
}

// Widths from the formats' definitions (IEEE 754-2019 binary64/32/16, bfloat16 as float32's
// top half, OCP OFP8 v1.0), one dtype at a time so that none is a copy of the catalog.
TEST(DtypeCatalog, WidthsMatchTheFormats) {
  EXPECT_EQ(size_of(dtype::float64), 8u);
  EXPECT_EQ(size_of(dtype::float32), 4u);
  EXPECT_EQ(size_of(dtype::float16), sizeof(std::uint16_t));
  EXPECT_EQ(size_of(dtype::bfloat16), sizeof(std::uint16_t));
  EXPECT_EQ(size_of(dtype::int32), 4u);
  EXPECT_EQ(size_of(dtype::int64), 8u);
  EXPECT_EQ(size_of(dtype::float8_e4m3fn), sizeof(std::uint8_t));
  EXPECT_EQ(size_of(dtype::float8_e5m2), sizeof(std::uint8_t));
  // Sign + exponent + stored mantissa fill each storage dtype's width.
  for (dtype t : storage_dtypes) {
    const float_format f = format_of(t);
    int exponent_bits = 0;
    for (int e = f.max_exponent() + (f.has_infinity ? 1 : 0); e > 0; e >>= 1) ++exponent_bits;
    EXPECT_EQ(1 + exponent_bits + (f.precision_bits - 1), static_cast<int>(size_of(t) * 8)) << to_string(t);
  }
}

// What each flag means, dtype by dtype: storage is what a RoPE kernel reads and writes (not the
// float64 oracle, not the integer positions); raw bits are the dtypes numpy has no type for.
TEST(DtypeCatalog, StorageAndRawBitsFlags) {
  EXPECT_FALSE(is_storage(dtype::float64));
  EXPECT_FALSE(is_storage(dtype::int32));
  EXPECT_FALSE(is_storage(dtype::int64));
  EXPECT_TRUE(is_storage(dtype::float32));
  EXPECT_TRUE(is_storage(dtype::float16));
  EXPECT_TRUE(is_storage(dtype::bfloat16));
  EXPECT_TRUE(is_storage(dtype::float8_e4m3fn));
  EXPECT_TRUE(is_storage(dtype::float8_e5m2));
  for (dtype t : raw_bits_dtypes) EXPECT_TRUE(t == dtype::bfloat16 || is_float8(t)) << to_string(t);
  EXPECT_EQ(raw_bits_dtypes.size(), 3u);
  EXPECT_EQ(storage_dtypes.front(), dtype::float32);  // the gate's and the reports' first column
}

TEST(DtypeLists, TheScannerFlagsACompleteOrAlmostCompleteList) {
  std::string all, all_but_last;
  for (dtype t : storage_dtypes) all += "\"" + std::string(to_string(t)) + "\", ";
  for (std::size_t i = 0; i + 1 < storage_dtypes.size(); ++i)
    all_but_last += "dtype::" + std::string(to_string(storage_dtypes[i])) + ", ";
  EXPECT_TRUE(retypes_the_list(all));
  EXPECT_TRUE(retypes_the_list(all_but_last));
  EXPECT_FALSE(retypes_the_list("{dtype::float16, dtype::bfloat16}"));
  // Code tokens only: prose, a longer identifier or a longer string is no list entry.
  EXPECT_EQ(storage_names_in("float32, float16 and bfloat16 dtype::float16_x \"float8_e5m2 bits\""), 0u);
  EXPECT_EQ(storage_names_in("{dtype::bfloat16, 'float16', \"float32\"}"), 3u);
  EXPECT_TRUE(continued("  for (dtype t : {dtype::float32, dtype::float16,"));
  EXPECT_FALSE(continued("constexpr dtype sixteen_bit[] = {dtype::float16, dtype::bfloat16};"));
}

TEST(DtypeLists, NoSourceFileRetypesTheStorageDtypes) {
  const std::vector<std::string> found = retyped_lists(ROPECHECK_SOURCE_DIR);
  std::string where;
  for (const std::string& f : found) where += "\n  " + f;
  EXPECT_TRUE(found.empty()) << "these lines list the storage dtypes (or all but one) instead of iterating "
                                "numeric/dtype.h's storage_dtypes (Python: ropecheck.storage_dtypes):"
                             << where;
}

}  // namespace
}  // namespace ropecheck
