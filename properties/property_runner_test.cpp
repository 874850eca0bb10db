// What a failing property reports (property_runner.cpp): the shrunk counterexample ends with the
// property's own message on one line — never RapidCheck's "RC_FAIL(<source text>)" — and carries
// the seed; the replay line reproduces it; an assertion without a message and a run that gave
// up (every case discarded) still say what happened, with the seed and a replay line.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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

// gate --shard: the shards' blocks of a property's case stream, in shard order, are the
// unsharded stream (same generated values, same count), also when there are more shards than
// cases; a shard of an empty block runs nothing.
TEST(property_runner, shards_split_the_case_stream_into_its_blocks) {
  const auto values_of = [](int index, int count, int cases) {
    run_settings s = settings();
    s.max_success_override = cases;
    s.shard_index = index;
    s.shard_count = count;
    std::vector<std::int64_t> values;
    observation seen;
    const property_result r = run_testable(
        "runner/records", "records", [&values] { values.push_back(*gen::uniform_int(0, 1'000'000)); },
        cases, s, seen);
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.cases, std::ssize(values)) << index << "/" << count;
    return values;
  };
  for (const auto& [count, cases] : {std::pair{4, 100}, std::pair{3, 100}, std::pair{8, 5}}) {
    const std::vector<std::int64_t> whole = values_of(0, 1, cases);
    ASSERT_EQ(std::ssize(whole), cases);
    std::vector<std::int64_t> joined;
    for (int i = 0; i < count; ++i) {
      const auto part = values_of(i, count, cases);
      const case_block block = shard_block(cases, i, count);
      EXPECT_EQ(std::ssize(part), block.end - block.begin) << i << "/" << count;
      joined.insert(joined.end(), part.begin(), part.end());
    }
    EXPECT_EQ(joined, whole) << count << " shards of " << cases;
  }
}

// A failure is found by the shard whose block holds it, at the same index of the stream, and
// shrinks to the same counterexample with the same replay line; earlier shards pass.
TEST(property_runner, a_shard_finds_the_unsharded_first_failure) {
  const auto run = [](int index, int count) {
    run_settings s = settings();
    s.max_success_override = 1000;
    s.shard_index = index;
    s.shard_count = count;
    observation seen;
    return run_testable(
        "runner/fails_late", "fails_late",
        [] {
          const std::int64_t v = *gen::uniform_int(0, 1000);
          if (v >= 995) RC_FAIL("value " + std::to_string(v) + " exceeds the bound 994");
        },
        1000, s, seen);
  };
  const property_result whole = run(0, 1);
  ASSERT_FALSE(whole.passed);
  // "Falsifiable after N tests": N - 1 cases passed before it, so its block is known.
  const auto after = whole.counterexample.find("Falsifiable after ");
  ASSERT_NE(after, std::string::npos) << whole.counterexample;
  const std::int64_t index = std::stoll(whole.counterexample.substr(after + 18)) - 1;
  ASSERT_GE(index, shard_block(1000, 0, 4).end) << "pick another bound: the first failure should not be in shard 0";
  for (int shard = 0; shard < 4; ++shard) {
    const case_block block = shard_block(1000, shard, 4);
    if (block.end <= index) {
      EXPECT_TRUE(run(shard, 4).passed) << shard;
    } else {
      const property_result r = run(shard, 4);
      ASSERT_FALSE(r.passed);
      EXPECT_EQ(r.counterexample, whole.counterexample);
      EXPECT_EQ(r.replay, whole.replay);
      EXPECT_EQ(r.cases, index + 1 - block.begin);
      break;
    }
  }
}

}  // namespace
}  // namespace ropecheck::properties
