// Sharded gate runs end to end through the ropecheck executable: the 4 shards of
// a small run merged with `report merge` give the unsharded run's JSON, JUnit, Markdown and HTML
// byte for byte; a failing kernel's merge keeps the unsharded counterexample and replay line and
// adds the other shards' failures; GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS shard as --shard does
// (and GTEST_SHARD_STATUS_FILE is written); bad shard settings, a missing shard and reports of
// another run are refused with exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli/cli_test_support.h"

namespace ropecheck {
namespace {

using testing::file_text;

// The sharding variables of whatever runs this test are not the gate's.
const std::string clean_env = "env -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_STATUS_FILE ";

testing::run_result run(const std::string& args, const std::string& env = {}) {
  return testing::run_ropecheck_prefixed(clean_env + env, args);
}

// Small and fast: one kernel, one accuracy and one exactness property, the quick profile.
const std::string small_run =
    "gate --kernel cache_simd --property within_bound_of_reference --property in_place_equals_out_of_place";
const std::string recipe = RECIPE_KERNEL_LIB;
const std::string failing_run = "gate --kernel-lib " + recipe + " --property within_bound_of_reference";

class GateShardTest : public testing::scratch_dir_test {
 protected:
  nlohmann::json json_of(const std::string& name) const { return nlohmann::json::parse(file_text(path(name))); }
  std::string outputs(const std::string& stem) const {
    return " --json " + path(stem + ".json") + " --junit " + path(stem + ".xml") + " --markdown " +
           path(stem + ".md") + " --html " + path(stem + ".html");
  }
  // Runs `gate` unsharded and in `count` shards, then merges them; returns the merge's result.
  testing::run_result shard_and_merge(const std::string& gate, int count, int expected_exit) {
    const auto whole = run(gate + outputs("whole"));
    EXPECT_EQ(whole.exit_code, expected_exit) << whole.output;
    std::string shards;
    for (int i = 0; i < count; ++i) {
      const std::string name = "shard" + std::to_string(i) + ".json";
      const auto r = run(gate + " --shard " + std::to_string(i) + "/" + std::to_string(count) +
                         " --json " + path(name));
      EXPECT_EQ(r.exit_code, expected_exit) << r.output;
      EXPECT_EQ(json_of(name)["shard"], (nlohmann::json{{"index", i}, {"count", count}}));
      shards += " " + path(name);
    }
    return run("report merge" + shards + outputs("merged"));
  }
};

TEST_F(GateShardTest, FourShardsMergeIntoTheUnshardedReport) {
  const auto merged = shard_and_merge(small_run, 4, 0);
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  const nlohmann::json whole = json_of("whole.json");
  EXPECT_EQ(json_of("merged.json"), whole);
  // Not vacuous: every property ran cases, split over the shards.
  for (const auto& p : whole["kernels"][0]["properties"]) {
    if (p["verdict"] == "pass") {
      EXPECT_GE(p["cases"].get<int>(), 4) << p["name"];
    }
  }
  EXPECT_GE(json_of("shard1.json")["kernels"][0]["properties"][0]["cases"].get<int>(), 1);
  EXPECT_LT(json_of("shard1.json")["kernels"][0]["properties"][0]["cases"],
            whole["kernels"][0]["properties"][0]["cases"]);
  for (const char* ext : {".xml", ".md", ".html"})
    EXPECT_EQ(file_text(path(std::string("merged") + ext)), file_text(path(std::string("whole") + ext))) << ext;
}

TEST_F(GateShardTest, MergedFailureKeepsTheUnshardedCounterexampleAndEveryShardsReplay) {
  const auto merged = shard_and_merge(failing_run, 4, 1);
  ASSERT_EQ(merged.exit_code, 1) << merged.output;  // the merged verdict is the exit code
  const nlohmann::json whole = json_of("whole.json")["kernels"][0]["properties"][0];
  const nlohmann::json joined = json_of("merged.json")["kernels"][0]["properties"][0];
  ASSERT_EQ(whole["verdict"], "fail");
  EXPECT_EQ(joined["verdict"], "fail");
  for (const char* field : {"cases", "failed_cases", "worst_over_bound", "worst", "message", "replay",
                            "counterexample_location", "detail", "points"})
    EXPECT_EQ(joined[field], whole[field]) << field;
  const std::string counterexample = joined["counterexample"];
  EXPECT_EQ(counterexample.rfind(whole["counterexample"].get<std::string>(), 0), 0u) << counterexample;
  // The later shards found failures of their own: each is kept with its replay line.
  std::size_t also = 0;
  for (auto at = counterexample.find("Also failed in shard "); at != std::string::npos;
       at = counterexample.find("Also failed in shard ", at + 1))
    ++also;
  EXPECT_GE(also, 1u) << counterexample;
  std::size_t replays = 0;
  for (auto at = counterexample.find("\nreplay: RC_PARAMS="); at != std::string::npos;
       at = counterexample.find("\nreplay: RC_PARAMS=", at + 1))
    ++replays;
  EXPECT_EQ(replays, also);
}

TEST_F(GateShardTest, EnvironmentShardsAsTheFlagDoesAndWritesTheStatusFile) {
  const auto flag = run(small_run + " --shard 1/4 --json " + path("flag.json"));
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  const std::string status = path("status");
  const auto env = run(small_run + " --json " + path("env.json"),
                       "GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_STATUS_FILE=" + status + " ");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  EXPECT_EQ(json_of("env.json"), json_of("flag.json"));
  EXPECT_TRUE(std::filesystem::exists(status));
  // Both given and agreeing is fine; disagreeing is refused.
  const auto agree = run(small_run + " --shard 1/4", "GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=4 ");
  EXPECT_EQ(agree.exit_code, 0) << agree.output;
  const auto disagree = run(small_run + " --shard 2/4", "GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=4 ");
  EXPECT_EQ(disagree.exit_code, 2) << disagree.output;
  EXPECT_NE(disagree.output.find("--shard: disagrees with GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS = 1/4 '2/4'"),
            std::string::npos)
      << disagree.output;
}

TEST_F(GateShardTest, BadShardSettingsAreRefused) {
  for (const char* bad : {"4/4", "1", "-1/4", "1/0", "a/4", "1/4/2", " 1/4"}) {
    const auto r = run(small_run + " --shard '" + bad + "'");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--shard"), std::string::npos) << r.output;
  }
  const auto half = run(small_run, "GTEST_TOTAL_SHARDS=4 ");
  EXPECT_EQ(half.exit_code, 2) << half.output;
  EXPECT_NE(half.output.find("GTEST_TOTAL_SHARDS: is set without GTEST_SHARD_INDEX"), std::string::npos)
      << half.output;
  const auto beyond = run(small_run, "GTEST_SHARD_INDEX=4 GTEST_TOTAL_SHARDS=4 ");
  EXPECT_EQ(beyond.exit_code, 2) << beyond.output;
  write_text("old.json", "{}");
  const auto baseline = run(small_run + " --shard 0/2 --baseline " + path("old.json"));
  EXPECT_EQ(baseline.exit_code, 2) << baseline.output;
  EXPECT_NE(baseline.output.find("--baseline: compares whole runs"), std::string::npos) << baseline.output;
}

TEST_F(GateShardTest, MergeNamesAMissingShardAndRefusesAnotherRun) {
  for (int i : {0, 1, 3}) {
    const auto r = run(small_run + " --shard " + std::to_string(i) + "/4 --json " + path(std::to_string(i) + ".json"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto missing = run("report merge " + path("0.json") + " " + path("1.json") + " " + path("3.json") +
                           " --json " + path("merged.json"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("shard 2/4 is missing"), std::string::npos) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(path("merged.json")));
  const auto other_seed = run(small_run + " --seed 5 --shard 2/4 --json " + path("2.json"));
  ASSERT_EQ(other_seed.exit_code, 0) << other_seed.output;
  const auto mismatch = run("report merge " + path("0.json") + " " + path("1.json") + " " + path("2.json") +
                            " " + path("3.json"));
  EXPECT_EQ(mismatch.exit_code, 2) << mismatch.output;
  EXPECT_NE(mismatch.output.find(path("2.json") + ": seed: differs from " + path("0.json") + "'s 20240611 '5'"),
            std::string::npos)
      << mismatch.output;
}

}  // namespace
}  // namespace ropecheck
