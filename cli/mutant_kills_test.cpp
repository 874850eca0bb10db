// Every property can fail: each mutant's claim (mutants/mutant_registry.h, `must_fail`: the
// properties aimed at its defect) is run through the runner the gate uses
// (properties::check_kernel_property, quick profile, the default seed or RC_PARAMS's) and each
// named property must fail on one of the mutant's dtypes, with a counterexample as reports show
// it (the property's message naming what was violated, the seed, a replay line, none of
// RapidCheck's macro text); every kernel property is named by some mutant, so a property that
// can only pass is caught here; and the mutants' kernel without its defect passes every property,
// so the failures are the defects'. Only the claimed (property, mutant) pairs run, not the whole
// gate: this is where every mutant's kill is proven; `mutants_gate_test` runs `gate --mutants`
// end to end on every mutant for one property and on representative mutants for all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "mutants/mutant_registry.h"
#include "properties/frequency_properties.h"
#include "properties/kernel_properties.h"

namespace ropecheck {
namespace {

using properties::property_result;

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return text;
  const auto start = text.rfind('\n', end);
  const auto first = start == std::string::npos ? 0 : start + 1;
  return text.substr(first, end - first + 1);
}

// What the gate's kill matrix shows of a failure (its last line) is the property's own message.
void expect_reported_as_the_gate_reports(const property_result& r, std::string_view property,
                                         std::uint64_t seed) {
  EXPECT_NE(r.counterexample.find("Falsifiable"), std::string::npos) << r.counterexample;
  EXPECT_NE(r.replay.find("reproduce="), std::string::npos) << r.replay;
  EXPECT_TRUE(last_line(r.counterexample).starts_with(std::string(property) + " violated"))
      << r.counterexample;
  for (const char* macro : {"RC_FAIL(", "RC_ASSERT(", "RC_PRE(", "Expands to"})
    EXPECT_EQ(r.counterexample.find(macro), std::string::npos) << r.counterexample;
  EXPECT_NE(r.counterexample.find("(seed " + std::to_string(seed) + ")"), std::string::npos)
      << r.counterexample;
  EXPECT_NE(r.replay.find("seed=" + std::to_string(seed)), std::string::npos) << r.replay;
}

bool is_kernel_property(std::string_view name) {
  const auto names = properties::kernel_property_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> mutant_names() {
  std::vector<std::string> names;
  for (const auto& m : mutants::mutant_registry()) names.emplace_back(m.kernel.name);
  return names;
}

class mutant_claims : public ::testing::TestWithParam<std::string> {};

TEST_P(mutant_claims, each_named_property_fails_on_the_mutant) {
  const mutants::mutant& m = *mutants::find_mutant(GetParam());
  const std::uint64_t seed = properties::seed_from_environment();
  ASSERT_FALSE(m.must_fail.empty()) << m.kernel.name << " names no property that must fail on it";
  for (std::string_view property : m.must_fail) {
    if (property == properties::scaled_frequencies_property) {
      ASSERT_NE(m.frequencies, nullptr) << m.kernel.name << ": its defect is not in the frequency code";
      const property_result r = properties::check_scaled_frequencies(
          [&m](const rope_spec& spec, std::int64_t length) {
            return mutants::mutant_frequencies(m, spec, length);
          },
          properties::profile::quick, seed, "ropecheck gate --mutant " + std::string(m.kernel.name));
      EXPECT_FALSE(r.passed) << m.kernel.name << " passed " << property << " (" << r.cases << " cases)";
      continue;
    }
    ASSERT_TRUE(is_kernel_property(property)) << m.kernel.name << " names an unknown property " << property;
    // As the gate counts a kill: the property fails on any of the mutant's dtypes.
    std::string tried;
    bool failed = false;
    for (dtype storage : m.kernel.dtypes) {
      const property_result r = properties::check_kernel_property(
          m.kernel, property, storage, properties::profile::quick, seed,
          "ropecheck gate --mutant " + std::string(m.kernel.name));
      tried += " " + std::string(to_string(storage)) + ": " +
               (r.state == properties::run_state::skipped ? "skipped (" + r.detail + ")"
                                                          : std::to_string(r.cases) + " cases passed");
      if (r.state != properties::run_state::ran || r.passed) continue;
      failed = true;
      expect_reported_as_the_gate_reports(r, property, seed);
      std::printf("[ killed   ] %-32s by %-34s %-14s %s\n", std::string(m.kernel.name).c_str(),
                  std::string(property).c_str(), std::string(to_string(storage)).c_str(),
                  last_line(r.counterexample).substr(0, 160).c_str());
      break;
    }
    EXPECT_TRUE(failed) << m.kernel.name << " survived " << property << ":" << tried;
  }
}

INSTANTIATE_TEST_SUITE_P(catalog, mutant_claims, ::testing::ValuesIn(mutant_names()),
                         [](const auto& info) { return info.param; });

// A property no mutant is aimed at could be one that cannot fail.
TEST(mutant_claims_cover, every_kernel_property_is_named_by_a_mutant) {
  std::set<std::string_view> named;
  for (const auto& m : mutants::mutant_registry()) named.insert(m.must_fail.begin(), m.must_fail.end());
  for (std::string_view property : properties::kernel_property_names())
    EXPECT_TRUE(named.contains(property)) << property << " is named by no mutant: nothing shows it can fail";
  EXPECT_TRUE(named.contains(properties::scaled_frequencies_property));
}

// The control: the mutants' kernel without a defect passes every property on its dtypes (so a
// claim above fails for the defect, not for the scalar kernel the mutants share).
class defect_free_control : public ::testing::TestWithParam<std::string> {};

TEST_P(defect_free_control, passes) {
  const fast::kernel_info& kernel = mutants::defect_free_kernel();
  for (dtype storage : kernel.dtypes) {
    const property_result r = properties::check_kernel_property(
        kernel, GetParam(), storage, properties::profile::quick, properties::seed_from_environment());
    EXPECT_EQ(r.state, properties::run_state::ran) << GetParam() << " " << to_string(storage) << ": " << r.detail;
    EXPECT_TRUE(r.passed) << GetParam() << " " << to_string(storage) << "\n" << r.counterexample;
  }
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (std::string_view p : properties::kernel_property_names())
    if (p != "rounded_once_within_half_ulp") names.emplace_back(p);  // the control rounds twice
  return names;
}

INSTANTIATE_TEST_SUITE_P(every_property, defect_free_control, ::testing::ValuesIn(property_names()),
                         [](const auto& info) { return info.param; });

// Why within_bound_of_reference checks K in the Q+K call: the bit-exact comparison with a K-alone
// call cannot see a K that is never rotated (both calls leave it as it was).
TEST(mutant_claims_limits, key_not_rotated_passes_q_and_k_together_equal_separate) {
  const property_result r = properties::check_kernel_property(
      mutants::find_mutant("key_not_rotated")->kernel, "q_and_k_together_equal_separate",
      dtype::float32, properties::profile::quick, properties::seed_from_environment());
  EXPECT_EQ(r.state, properties::run_state::ran);
  EXPECT_TRUE(r.passed) << r.counterexample;
}

}  // namespace
}  // namespace ropecheck
