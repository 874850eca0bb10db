// What a failing property reports (property_runner.cpp): the shrunk counterexample ends with the
// property's own message on one line — never RapidCheck's "RC_FAIL(<source text>)" — and carries
// the seed; the replay line reproduces it; an assertion without a message and a run that gave
// up (every case discarded) still say what happened, with the seed and a replay line.
#include <gtest/gtest.h>

#include <string>

#include "properties/generators.h"
#include "properties/property_runner.h"

namespace ropecheck::properties {
namespace {

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  const auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

run_settings settings() {
  return settings_from_rc_params(profile::quick, default_seed, "<replay command>");
}

const std::string seed_text = std::to_string(default_seed);

TEST(property_runner, failure_ends_with_the_message_and_carries_seed_and_replay) {
  observation seen;
  const property_result r = run_testable(
      "runner/fails", "fails",
      [] {
        const std::int64_t v = *gen::uniform_int(0, 1000);
        if (v >= 10) RC_FAIL("value " + std::to_string(v) + " exceeds the bound 9");
      },
      100, settings(), seen);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(last_line(r.counterexample), "value 10 exceeds the bound 9") << r.counterexample;
  EXPECT_EQ(r.counterexample.find("RC_FAIL"), std::string::npos) << r.counterexample;
  EXPECT_EQ(r.counterexample.find("property_runner_test.cpp"), std::string::npos) << r.counterexample;
  EXPECT_NE(r.counterexample.find("(seed " + seed_text + ")"), std::string::npos) << r.counterexample;
  EXPECT_NE(r.replay.find("seed=" + seed_text + " reproduce="), std::string::npos) << r.replay;
  EXPECT_NE(r.replay.find("<replay command>"), std::string::npos) << r.replay;
}

TEST(property_runner, assertion_without_message_is_one_line_with_location_and_expansion) {
  observation seen;
  const property_result r = run_testable(
      "runner/asserts", "asserts",
      [] {
        const std::int64_t v = *gen::uniform_int(0, 1000);
        RC_ASSERT(v < 10);
      },
      100, settings(), seen);
  ASSERT_FALSE(r.passed);
  const std::string line = last_line(r.counterexample);
  EXPECT_NE(line.find("property_runner_test.cpp:"), std::string::npos) << line;
  EXPECT_NE(line.find("RC_ASSERT(v < 10) failed; expands to: 10 < 10"), std::string::npos) << line;
}

TEST(property_runner, giving_up_reports_the_discard_reason_seed_and_replay) {
  observation seen;
  const property_result r = run_testable(
      "runner/discards", "discards", [] { RC_DISCARD("no comparator for this pairing"); }, 100,
      settings(), seen);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.counterexample.rfind("Gave up after 0 tests", 0), 0u) << r.counterexample;
  EXPECT_EQ(last_line(r.counterexample), "last discarded: no comparator for this pairing")
      << r.counterexample;
  EXPECT_NE(r.counterexample.find("(seed " + seed_text + ")"), std::string::npos);
  EXPECT_NE(r.replay.find("seed=" + seed_text), std::string::npos) << r.replay;
}

// The deep profile splits a property's cases over the runs that share it, rounding up, and
// RC_PARAMS max_success still decides when given.
TEST(property_runner, deep_cases_are_a_share_of_the_property_budget) {
  EXPECT_EQ(deep_share(deep_cases_per_property, 12), 83'334);
  EXPECT_EQ(deep_share(1'200, 12), 100);
  EXPECT_EQ(deep_share(deep_cases_per_property, 1), deep_cases_per_property);
  EXPECT_EQ(deep_share(10, 3), 4);
  run_settings s;
  s.level = profile::deep;
  s.deep_cases = deep_share(deep_cases_per_property, 3);
  EXPECT_EQ(case_count(s, 100), 333'334);
  s.max_success_override = 7;
  EXPECT_EQ(case_count(s, 100), 7);
  s.level = profile::quick;
  s.max_success_override = 0;
  EXPECT_GT(case_count(s, 100), 0);
}

}  // namespace
}  // namespace ropecheck::properties
