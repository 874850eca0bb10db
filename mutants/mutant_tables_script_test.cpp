// scripts/mutant-tables.py --check: the script that writes the mutant tables into the docs
// refuses a rendering that gives a verdict to a kernel the peer-style test did not run, or whose
// "lets through" counts include one, and accepts one that states which were not run. The
// renderings here are written by hand (two mutants, one of them fp8-only), not by
// ropecheck_mutant_tables.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

constexpr const char* consistent = R"(### ropecheck gate --mutants (profile quick, seed 1): 2 of 2 mutants killed

| mutant | imitates | killed | killed by (properties on any dtype; fixtures) |
|---|---|---|---|
| `sin_sign_flipped` | a sign | yes | `within_bound_of_reference` |
| `fp8_scale_ignored` | a scale | yes | `output_scale_within_bound` |

Correct kernels gated in the same run: 1, failed: 0.

### Peer-style test: allclose against a float32 copy of the recipe

Relaxed: (float32 ×125, bfloat16 ×1, float16 ×58.5).

| kernel | float32 | bfloat16 | float16 | strict tolerances | relaxed tolerances |
|---|---|---|---|---|---|
| `cache_simd` (correct) | 125 | 0.835 | 58.5 | **false alarm** | passes |
| `sin_sign_flipped` | 5.74e+05 | 3.52e+03 | n/a | caught | caught |
| `fp8_scale_ignored` | not run | not run | not run | not run | not run |

Mutants the peer-style test lets through: 0 of 1 measured with strict tolerances (which also fail every correct kernel in float32), 0 of 1 with relaxed tolerances. Not run (1 of 3 kernels: only dtypes the peer-style test has no tolerance for): `fp8_scale_ignored`.
)";

int check(const std::string& rendering) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("mutant_tables_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".md");
  std::ofstream(file) << rendering;
  const std::string command = "/usr/bin/python3 " ROPECHECK_SOURCE_DIR "/scripts/mutant-tables.py --check " +
                              file.string() + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  std::filesystem::remove(file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(mutant_tables_script, accepts_a_rendering_that_says_what_was_not_run) {
  EXPECT_EQ(check(consistent), 0);
}

TEST(mutant_tables_script, refuses_a_verdict_for_an_unmeasured_row) {
  EXPECT_EQ(check(replaced(consistent, "| not run | not run | not run | not run | not run |",
                           "| n/a | n/a | n/a | **lets it through** | **lets it through** |")),
            1);
}

TEST(mutant_tables_script, refuses_counts_that_include_an_unmeasured_row) {
  EXPECT_EQ(check(replaced(consistent, "lets through: 0 of 1 measured", "lets through: 1 of 2 measured")), 1);
}

TEST(mutant_tables_script, refuses_a_verdict_its_cells_do_not_give) {
  EXPECT_EQ(check(replaced(consistent, "| 5.74e+05 | 3.52e+03 | n/a | caught | caught |",
                           "| 0.5 | 0.5 | n/a | caught | caught |")),
            1);
}

}  // namespace
