// End to end through `ropecheck gate`: the CLI's mutant wiring, and the built-in kernels pass the
// gate with 20 different seeds (no false alarms).
//
// That every mutant is killed is proved in process by cli/mutant_kills_test: each mutant's
// claimed properties fail through properties::check_kernel_property (the runner the gate's
// mutant run calls, with the gate's quick profile and default seed), in the form the gate
// reports, and every kernel property is claimed. Here, at a fraction of the cost of gating all
// mutants with every property:
//  * `--mutants` gates every mutant of the registry, each in the JSON `mutants` array and the
//    kill matrix, and a survivor fails the gate (one cheap property selected, so most survive);
//  * a representative subset (a kernel mutant, an fp8 one, a stream one; the scaling one alone
//    below) gated with every property next to a correct kernel: each killed, by a property with
//    the property's message (never RapidCheck's macro text) and by its claimed properties,
//    fixture kills named by their fixture (all three kinds among the subset), the verdict pass,
//    and the report rendered again from its JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/cli_test_support.h"
#include "mutants/mutant_registry.h"

namespace ropecheck {
namespace {

using testing::run_ropecheck;

class mutants_gate : public testing::scratch_dir_test {};

// Fixture kills are named by their fixture (golden/…, seed000_…, dynamic_ntk_…); the kind, or
// empty for a property's kill.
std::string fixture_kind(const std::string& killer) {
  for (const char* kind : {"golden/", "seed000_", "dynamic_ntk_"})
    if (killer.starts_with(kind)) return kind;
  return {};
}

// A property's kill reads as the gate reports it: its last line the property's own message, no
// RapidCheck macro text, the seed named.
void expect_property_kill_text(const std::string& mutant, const std::string& killer, const std::string& text) {
  const auto property = killer.substr(0, killer.find('/'));
  const auto last = text.substr(text.find_last_of('\n', text.find_last_not_of('\n')) + 1);
  EXPECT_TRUE(last.starts_with(property + " violated")) << mutant << ": " << last;
  for (const char* macro : {"RC_FAIL(", "RC_ASSERT(", "RC_PRE("})
    EXPECT_EQ(text.find(macro), std::string::npos) << mutant << ": " << text;
  EXPECT_NE(text.find("(seed "), std::string::npos) << mutant << ": " << text;
}

// The kill matrix's row of `mutant` in a gate's terminal output ("name  killed  X . X ...").
std::string matrix_row(const std::string& output, const std::string& mutant) {
  const auto at = output.find("\n" + mutant + " ", output.find("kill matrix"));
  if (at == std::string::npos) return {};
  return output.substr(at + 1, output.find('\n', at + 1) - at - 1);
}

TEST_F(mutants_gate, every_registered_mutant_is_gated_and_a_survivor_fails_the_gate) {
  // rejects_invalid_calls alone: the cheapest property, claimed by one mutant; the others survive
  // it (but those a fixture kills).
  const std::string property = "rejects_invalid_calls";
  const std::string json = path("all.json");
  const auto run = run_ropecheck("gate --mutants --kernel cache_simd --property " + property + " --json " + json);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("kill matrix"), std::string::npos) << run.output;
  const auto report = nlohmann::json::parse(testing::file_text(json));
  EXPECT_EQ(report["verdict"], "fail");
  ASSERT_EQ(report["mutants"].size(), mutants::mutant_registry().size());
  std::size_t killed = 0, claimed = 0, survivors = 0;
  for (std::size_t i = 0; i < report["mutants"].size(); ++i) {
    const auto& m = report["mutants"][i];
    const mutants::mutant& registered = mutants::mutant_registry()[i];
    const auto name = m["name"].get<std::string>();
    EXPECT_EQ(name, registered.kernel.name);  // every mutant, in the registry's order
    EXPECT_EQ(m["killed"].get<bool>(), !m["killed_by"].empty()) << name;
    killed += m["killed"].get<bool>() ? 1 : 0;
    bool by_property = false;
    for (std::size_t k = 0; k < m["killed_by"].size(); ++k) {
      const auto killer = m["killed_by"][k].get<std::string>();
      if (!fixture_kind(killer).empty()) continue;
      // The selection holds for the mutants too (the frequency property is not a kernel property).
      if (killer != "scaled_frequencies_within_4_ulps") {
        EXPECT_TRUE(killer.starts_with(property + "/")) << name << ": " << killer;
      }
      if (killer.starts_with(property + "/")) by_property = true;
      expect_property_kill_text(name, killer, m["counterexamples"][k].get<std::string>());
    }
    // The gate agrees with the registry's claim where the claim names the selected property.
    if (std::find(registered.must_fail.begin(), registered.must_fail.end(), property) != registered.must_fail.end()) {
      ++claimed;
      EXPECT_TRUE(by_property) << name << " claims " << property << " but the gate's run of it passed";
    }
    if (!m["killed"].get<bool>()) {  // its kill matrix row says so
      ++survivors;
      EXPECT_TRUE(matrix_row(run.output, name).find(" NO ") != std::string::npos) << name << "\n" << run.output;
    }
  }
  EXPECT_GT(claimed, 0u) << "no mutant claims " << property << ": the agreement above checked nothing";
  ASSERT_GT(survivors, 0u) << "no survivor: the gate's failure on one is not shown";
  EXPECT_NE(run.output.find("mutants: " + std::to_string(killed) + " of " +
                            std::to_string(report["mutants"].size()) + " killed"),
            std::string::npos)
      << run.output;
}

TEST_F(mutants_gate, representative_mutants_are_killed_by_their_properties_and_correct_kernels_pass) {
  const std::vector<std::string> subset = {"sin_sign_flipped", "fp8_scale_ignored", "mrope_sections_swapped"};
  const std::string json = path("mutants.json");
  std::string args = "gate --kernel cache_simd --json " + json;
  for (const auto& name : subset) args += " --mutant " + name;
  const auto run = run_ropecheck(args);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("kill matrix"), std::string::npos);
  const auto report = nlohmann::json::parse(testing::file_text(json));
  ASSERT_EQ(report["mutants"].size(), subset.size());
  ASSERT_EQ(report["kernels"].size(), 1u);
  EXPECT_EQ(report["kernels"][0]["name"], "cache_simd");
  std::set<std::string> fixture_kinds;
  for (std::size_t i = 0; i < subset.size(); ++i) {
    const auto& m = report["mutants"][i];
    EXPECT_EQ(m["name"], subset[i]);
    EXPECT_TRUE(m["killed"].get<bool>()) << m["name"];
    std::set<std::string> properties;
    for (std::size_t k = 0; k < m["killed_by"].size(); ++k) {
      const auto killer = m["killed_by"][k].get<std::string>();
      if (const auto kind = fixture_kind(killer); !kind.empty()) {
        fixture_kinds.insert(kind);
        continue;
      }
      properties.insert(killer.substr(0, killer.find('/')));
      expect_property_kill_text(subset[i], killer, m["counterexamples"][k].get<std::string>());
    }
    EXPECT_FALSE(properties.empty()) << subset[i] << " is killed by fixtures only";
    for (std::string_view claimed : mutants::find_mutant(subset[i])->must_fail)
      EXPECT_TRUE(properties.contains(std::string(claimed))) << subset[i] << " survived its claimed " << claimed;
  }
  // sin_sign_flipped is killed by every kind of fixture: each named by its fixture.
  EXPECT_EQ(fixture_kinds, (std::set<std::string>{"golden/", "seed000_", "dynamic_ntk_"}));
  EXPECT_EQ(report["verdict"], "pass");
  // The report renders again from its JSON, mutants included.
  const auto again = run_ropecheck("report " + json);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("mutants: 3 of 3 killed"), std::string::npos) << again.output;
}

TEST_F(mutants_gate, scaling_mutant_alone_is_killed_by_the_frequency_property_and_llama3_golden) {
  // The defect of llama3_factors_swapped lives in the scaling only (the kernel is correct): no
  // kernel property can see it; the frequency property (properties/frequency_properties.h) and
  // the Llama-3.1/3.2 golden vectors must. --mutant runs it alone.
  const auto run = run_ropecheck("gate --mutant llama3_factors_swapped --json " + path("one.json"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const auto report = nlohmann::json::parse(testing::file_text(path("one.json")));
  ASSERT_EQ(report["mutants"].size(), 1u);
  EXPECT_TRUE(report["kernels"].empty());
  bool golden = false, frequency_property = false;
  for (const auto& k : report["mutants"][0]["killed_by"]) {
    golden = golden || k.get<std::string>().starts_with("golden/llama3");
    frequency_property = frequency_property || k.get<std::string>() == "scaled_frequencies_within_4_ulps";
  }
  EXPECT_TRUE(golden) << report["mutants"][0].dump();
  EXPECT_TRUE(frequency_property) << report["mutants"][0].dump();
  EXPECT_EQ(run_ropecheck("gate --mutant no_such_mutant").exit_code, 2);
}

class gate_seeds : public ::testing::TestWithParam<int> {};

TEST_P(gate_seeds, builtin_kernels_pass) {
  // The two SIMD kernels give identical bits (fast/kernels_test.cpp); alternating them over the
  // seeds covers both strategies at half the cost of running both on every seed.
  const std::string kernel = GetParam() % 2 == 0 ? "on_the_fly_simd" : "cache_simd";
  const auto run = run_ropecheck("gate --kernel " + kernel + " --seed " + std::to_string(GetParam()));
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

INSTANTIATE_TEST_SUITE_P(twenty_seeds, gate_seeds, ::testing::Range(1, 21));

}  // namespace
}  // namespace ropecheck
