// The mutant zoo itself: each mutant named once, described, with the real-world failure it
// imitates and the properties that must fail on it (cli/mutant_kills_test runs those claims and
// the defect-free control); none visible in the kernel registry users see; the documented tables
// listing exactly the registry's mutants (a mutant added without regenerating them,
// scripts/mutant-tables.py, fails here); and the peer-style yardstick behaving as the recipe
// says it must.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fast/kernels.h"
#include "mutants/mutant_registry.h"
#include "mutants/peer_style.h"

namespace ropecheck::mutants {
namespace {

TEST(mutant_registry, every_mutant_named_once_described_and_claimed) {
  ASSERT_FALSE(mutant_registry().empty());
  std::set<std::string_view> names;
  for (const auto& m : mutant_registry()) {
    EXPECT_TRUE(names.insert(m.kernel.name).second) << m.kernel.name << " is registered twice";
    EXPECT_NE(m.kernel.name, defect_free_kernel().name);
    EXPECT_FALSE(m.kernel.description.empty()) << m.kernel.name;
    EXPECT_FALSE(m.imitates.empty()) << m.kernel.name;
    for (std::string_view line : {m.kernel.description, m.imitates})
      EXPECT_EQ(line.find('\n'), std::string_view::npos) << m.kernel.name << ": one line each";
    EXPECT_FALSE(m.must_fail.empty()) << m.kernel.name << " names no property that must fail on it";
    EXPECT_EQ(std::set<std::string_view>(m.must_fail.begin(), m.must_fail.end()).size(), m.must_fail.size())
        << m.kernel.name << " names a property twice";
    EXPECT_FALSE(m.kernel.dtypes.empty()) << m.kernel.name;
    EXPECT_EQ(find_mutant(m.kernel.name), &m);
  }
  EXPECT_EQ(find_mutant("no_such_mutant"), nullptr);
}

// The tables (ropecheck_mutant_tables, written into the docs by scripts/mutant-tables.py): the
// one document holding them lists every mutant of the registry once, in order, in both tables,
// and the kill table's heading counts them.
std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The `name` of each table row "| `name`… |" from the line after `heading` to the first line
// that is not a table row; correct kernels ("(correct)") are not mutants. (Hand parsers: GCC 12's
// std::regex trips -Wmaybe-uninitialized under the sanitizers.)
std::vector<std::string> table_mutants(const std::string& text, std::size_t heading) {
  std::vector<std::string> names;
  std::istringstream lines(text.substr(text.find('\n', heading) + 1));
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (!line.starts_with("|")) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (!line.starts_with("| `")) continue;
    const std::size_t end = line.find('`', 3);
    if (end == std::string::npos) continue;
    const std::string name = line.substr(3, end - 3);
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    });
    if (plain && !line.substr(end + 1).starts_with(" (correct)")) names.push_back(name);
  }
  return names;
}

// "#… ropecheck gate --mutants (profile …): K of N mutants killed": where it starts and N.
struct kill_heading {
  std::size_t position = std::string::npos;
  unsigned long mutants = 0;
  std::string line;
};
kill_heading find_kill_heading(const std::string& text) {
  for (std::size_t at = text.find("ropecheck gate --mutants (profile "); at != std::string::npos;
       at = text.find("ropecheck gate --mutants (profile ", at + 1)) {
    const std::size_t start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
    const std::string line = text.substr(start, text.find('\n', at) - start);
    if (!line.starts_with("#")) continue;
    const std::size_t of = line.find(" of "), killed = line.find(" mutants killed");
    if (of == std::string::npos || killed == std::string::npos || killed < of) continue;
    return {start, std::stoul(line.substr(of + 4, killed - of - 4)), line};
  }
  return {};
}

TEST(mutant_tables, the_documented_tables_list_the_registry) {
  std::vector<std::filesystem::path> holding;
  std::string text;
  kill_heading heading;
  for (const char* doc : {"docs/mutants.md", "README.md"}) {
    const std::filesystem::path path = std::filesystem::path(ROPECHECK_SOURCE_DIR) / doc;
    if (!std::filesystem::exists(path)) continue;
    std::string candidate = text_of(path);
    const kill_heading found = find_kill_heading(candidate);
    if (found.position == std::string::npos) continue;
    holding.push_back(path);
    text = std::move(candidate);
    heading = found;
  }
  ASSERT_EQ(holding.size(), 1u) << "the mutant tables must be in exactly one of docs/mutants.md, README.md";
  std::vector<std::string> registry;
  for (const auto& m : mutant_registry()) registry.emplace_back(m.kernel.name);
  EXPECT_EQ(heading.mutants, registry.size()) << holding[0] << ": " << heading.line;
  EXPECT_EQ(table_mutants(text, heading.position), registry)
      << holding[0] << ": the kill table is not the registry's (run scripts/mutant-tables.py)";
  const auto peer = text.find("Peer-style test", heading.position);
  ASSERT_NE(peer, std::string::npos) << holding[0] << " has no peer-style table after the kill table";
  EXPECT_EQ(table_mutants(text, peer), registry)
      << holding[0] << ": the peer-style table is not the registry's (run scripts/mutant-tables.py)";
}

// The README's few rows of the mutant table are the catalog's (catalog_row): a mutant renamed,
// or a claim or code changed, fails here until `ropecheck_mutant_tables --catalog-rows` is
// pasted again between the markers.
TEST(mutant_tables, the_readme_rows_are_the_catalogs) {
  const std::string text = text_of(std::filesystem::path(ROPECHECK_SOURCE_DIR) / "README.md");
  const std::string begin = "<!-- mutant-catalog:begin", end = "<!-- mutant-catalog:end -->";
  const std::size_t from = text.find(begin), to = text.find(end);
  ASSERT_NE(from, std::string::npos) << "README.md has no mutant-catalog block";
  ASSERT_NE(to, std::string::npos);
  std::istringstream lines(text.substr(from, to - from));
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (!line.starts_with("| `")) continue;
    const std::string name = line.substr(3, line.find('`', 3) - 3);
    const mutant* m = find_mutant(name);
    ASSERT_NE(m, nullptr) << "README.md lists an unknown mutant " << name;
    EXPECT_EQ(line, catalog_row(*m)) << "README.md's row of " << name
                                     << " is not the catalog's (ropecheck_mutant_tables --catalog-rows)";
    ++rows;
  }
  EXPECT_GE(rows, 1);
}

TEST(mutant_registry, never_in_the_kernel_registry) {
  for (const auto& m : mutant_registry()) {
    EXPECT_EQ(fast::find_kernel(m.kernel.name), nullptr) << m.kernel.name;
    for (const auto& k : fast::kernel_registry()) EXPECT_NE(k.entry, m.kernel.entry) << k.name;
  }
  EXPECT_EQ(fast::find_kernel(defect_free_kernel().name), nullptr);
}

TEST(mutant_registry, mutants_validate_calls_like_the_builtins) {
  const auto& m = *find_mutant("sin_sign_flipped");
  rope_spec spec{8, 8, 10000, pairing::half_split, "test"};
  auto angles = m.kernel.prepare(fast::unscaled_frequencies(spec), 4);
  ASSERT_TRUE(angles.ok());
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {};
  const std::int64_t positions[1] = {1};
  fast::rope_call call =
      fast::make_call({dtype::float32, pairing::half_split, 8, 8}, positions, fast::packed_tensor(x, y, 1, 8));
  EXPECT_TRUE(m.kernel.apply(call, *angles.value).ok());
  call.rotary_dim = 7;
  EXPECT_EQ(m.kernel.apply(call, *angles.value).code, fast::status_code::invalid_argument);
  call.rotary_dim = 8;
  call.storage = dtype::float16;
  EXPECT_FALSE(m.kernel.apply(call, *angles.value).ok());
}

// Every mutant on every dtype and pairing, partial rotation, a transposed (sbhd) layout, in place
// and extreme positions: the defects change values, never memory safety (ASan/UBSan run this).
TEST(mutant_registry, every_mutant_stays_within_its_buffers) {
  constexpr int tokens = 3, heads = 2, head_dim = 10, rotary_dim = 6;
  for (const auto& m : mutant_registry()) {
    for (dtype storage : m.kernel.dtypes) {
      for (pairing p : m.kernel.pairings) {
        rope_spec spec{head_dim, rotary_dim, 10000, p, "test"};
        const bool cached = m.kernel.strategy == fast::angle_strategy::cache;
        const std::int64_t max_position = cached ? 70000 : 0;
        auto angles = m.kernel.prepare(mutant_frequencies(m, spec, 70000), max_position);
        ASSERT_TRUE(angles.ok()) << m.kernel.name;
        const std::int64_t far = cached ? 69999 : (std::int64_t{1} << 31);
        const std::int64_t positions[tokens] = {0, 5000, cached ? far : -far};
        const std::size_t element = size_of(storage);
        for (bool in_place : {false, true}) {
          // sbhd: [heads, tokens, head_dim] memory, viewed as [tokens, heads, head_dim].
          std::vector<std::byte> in(tokens * heads * head_dim * element, std::byte{0x3c});
          std::vector<std::byte> out(in.size(), std::byte{0xA5});
          void* output = in_place ? static_cast<void*>(in.data()) : out.data();
          const fast::rope_tensor sbhd{in.data(), output, heads, head_dim, tokens * head_dim,
                                       head_dim, tokens * head_dim};
          fast::rope_call call = fast::make_call({storage, p, head_dim, rotary_dim}, positions, sbhd);
          for (fast::direction dir : {fast::direction::forward, fast::direction::inverse}) {
            call.dir = dir;
            EXPECT_TRUE(m.kernel.apply(call, *angles.value).ok()) << m.kernel.name;
          }
        }
      }
    }
  }
}

// The float32 recipe is what peer tests compare against: a kernel built on it passes them,
// while a rotation by the wrong sign does not.
TEST(peer_style, recipe_twin_passes_and_sign_flip_fails) {
  const auto recipe = peer_style_check(find_mutant("float32_angles")->kernel, dtype::float32);
  EXPECT_TRUE(recipe.passed) << recipe.worst << " " << recipe.worst_over_tolerance;
  EXPECT_GT(recipe.outputs, 0);
  const auto flipped = peer_style_check(find_mutant("sin_sign_flipped")->kernel, dtype::float32);
  EXPECT_FALSE(flipped.passed);
}

}  // namespace
}  // namespace ropecheck::mutants
