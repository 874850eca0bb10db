// report merge (gate_merge.h) on hand-written shard reports: what adds up, what is a maximum,
// that every failure is kept with its replay line, and every refusal (each kind of mismatch, a
// shard given twice, a missing shard named). The end-to-end check that the merge of real
// shards equals the unsharded run is cli/gate_shard_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/io_error.h"
#include "reports/gate_merge.h"

namespace ropecheck::reports {
namespace {

property_outcome property(std::int64_t cases, double worst, std::string where, std::string detail) {
  property_outcome p;
  p.name = "within_bound_of_reference/float32";
  p.cases = cases;
  p.worst_over_bound = worst;
  p.worst.text = std::move(where);
  p.worst.dtype = "float32";
  p.detail = std::move(detail);
  p.points = {{static_cast<std::int64_t>(cases), worst}};
  return p;
}

gate_report shard(int index, int count, property_outcome p) {
  gate_report r;
  r.tool_version = "0.1.0";
  r.profile = "deep";
  r.seed = 7;
  r.shard_index = index;
  r.shard_count = count;
  property_outcome skipped;
  skipped.name = "norm_preserved/float16";
  skipped.status = "skipped";
  skipped.detail = "skipped: the kernel does not support dtype float16";
  r.kernels.push_back({"k", p.passed, {std::move(p), skipped}, {}});
  if (index == 0) r.fixtures.push_back({"seed000_worked_example/k/float32", true, 157, 0.25, ""});
  judge(r);
  return r;
}

property_outcome failing(std::int64_t cases, double worst, const std::string& message) {
  property_outcome p = property(cases, worst, message, "worst at " + message + "; max x = 1");
  p.passed = false;
  p.failed_cases = 2;
  p.message = message;
  p.counterexample = "Falsifiable after 3 tests\n\n" + message;
  p.replay = "RC_PARAMS=\"seed=7 reproduce=" + message + "\" ropecheck gate";
  return p;
}

using files = std::vector<std::pair<std::string, gate_report>>;

TEST(GateMerge, SumsCasesTakesMaximaAndKeepsTheFirstShardsFixtures) {
  const gate_report merged = merge_gate_reports(files{
      {"s2.json", shard(2, 3, property(10, 0.5, "m=9", "worst at m=9; max x = 3 (ulps); all outputs bit-identical"))},
      // A location may hold "; " itself: it is taken whole from the worst shard.
      {"s0.json", shard(0, 3, property(10, 0.75, "m=1; yarn", "worst at m=1; yarn; max x = 2 (ulps); all outputs bit-identical"))},
      {"s1.json", shard(1, 3, property(11, 0.75, "m=5", "worst at m=5; max x = 4 (ulps); outputs differ in bits"))}});
  EXPECT_TRUE(merged.passed);
  EXPECT_EQ(merged.shard_count, 1);  // the whole run
  EXPECT_TRUE(to_json(merged)["shard"].is_null());
  ASSERT_EQ(merged.kernels.size(), 1u);
  const property_outcome& p = merged.kernels[0].properties[0];
  EXPECT_EQ(p.cases, 31);
  EXPECT_EQ(p.worst_over_bound, 0.75);
  EXPECT_EQ(p.worst.text, "m=1; yarn");  // the first shard to reach the maximum, in shard order
  EXPECT_EQ(p.detail, "worst at m=1; yarn; max x = 4 (ulps); outputs differ in bits");
  const std::vector<std::pair<std::int64_t, double>> points = {{10, 0.75}, {11, 0.75}, {10, 0.5}};
  EXPECT_EQ(p.points, points);  // shard order
  EXPECT_EQ(merged.kernels[0].properties[1].status, "skipped");
  ASSERT_EQ(merged.fixtures.size(), 1u);
  EXPECT_EQ(merged.fixtures[0].values, 157);
}

TEST(GateMerge, KeepsEveryFailureWithItsReplayLine) {
  const gate_report merged = merge_gate_reports(files{
      {"s0.json", shard(0, 3, property(10, 0.5, "m=1", "worst at m=1; max x = 1"))},
      {"s1.json", shard(1, 3, failing(10, 3, "first"))},
      {"s2.json", shard(2, 3, failing(10, 9, "second"))}});
  EXPECT_FALSE(merged.passed);
  EXPECT_FALSE(merged.kernels[0].passed);
  const property_outcome& p = merged.kernels[0].properties[0];
  EXPECT_FALSE(p.passed);
  EXPECT_EQ(p.failed_cases, 4);
  EXPECT_EQ(p.worst_over_bound, 9);
  EXPECT_EQ(p.worst.text, "second");
  EXPECT_EQ(p.detail, "worst at second; max x = 1");
  EXPECT_EQ(p.message, "first");  // the stream's first failure: the unsharded run's
  EXPECT_EQ(p.replay, "RC_PARAMS=\"seed=7 reproduce=first\" ropecheck gate");
  EXPECT_EQ(p.counterexample.rfind("Falsifiable after 3 tests\n\nfirst", 0), 0u) << p.counterexample;
  EXPECT_NE(p.counterexample.find("Also failed in shard 2/3 (s2.json): second"), std::string::npos)
      << p.counterexample;
  EXPECT_NE(p.counterexample.find("replay: RC_PARAMS=\"seed=7 reproduce=second\" ropecheck gate"),
            std::string::npos)
      << p.counterexample;
  EXPECT_NE(render_junit(merged).find("reproduce=second"), std::string::npos);
}

// Each way two reports can fail to be shards of one run is refused naming the file and field.
TEST(GateMerge, RefusesReportsOfDifferentRuns) {
  const std::vector<std::pair<std::string, std::function<void(gate_report&)>>> mismatches = {
      {"tool_version", [](gate_report& r) { r.tool_version = "0.2.0"; }},
      {"profile", [](gate_report& r) { r.profile = "quick"; }},
      {"seed", [](gate_report& r) { r.seed = 8; }},
      {"contract", [](gate_report& r) { r.contract = "float32_angles"; }},
      {"max_position", [](gate_report& r) { r.max_position = 4096; }},
      {"selected_properties", [](gate_report& r) { r.selected_properties = {"norm_preserved"}; }},
      {"kernels", [](gate_report& r) { r.kernels[0].name = "other"; }},
      {"kernels[0].properties", [](gate_report& r) { r.kernels[0].properties.pop_back(); }},
      {"shard.count", [](gate_report& r) { r.shard_count = 3; }},
  };
  for (const auto& [field, change] : mismatches) {
    gate_report other = shard(1, 2, property(10, 0.5, "m=1", "worst at m=1"));
    change(other);
    try {
      merge_gate_reports(files{{"a.json", shard(0, 2, property(10, 0.5, "m=1", "worst at m=1"))},
                               {"b.json", other}});
      ADD_FAILURE() << field << " mismatch accepted";
    } catch (const io_error& e) {
      EXPECT_EQ(e.file(), "b.json") << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find("differs from a.json's"), std::string::npos) << e.what();
    }
  }
}

TEST(GateMerge, NamesTheMissingShardAndRefusesDuplicates) {
  const auto p = property(10, 0.5, "m=1", "worst at m=1");
  try {
    merge_gate_reports(files{{"a.json", shard(0, 4, p)}, {"b.json", shard(1, 4, p)}, {"d.json", shard(3, 4, p)}});
    ADD_FAILURE() << "a missing shard accepted";
  } catch (const bad_input& e) {
    EXPECT_NE(std::string(e.what()).find("shard 2/4 is missing"), std::string::npos) << e.what();
  }
  try {
    merge_gate_reports(files{{"a.json", shard(0, 2, p)}, {"b.json", shard(0, 2, p)}, {"c.json", shard(1, 2, p)}});
    ADD_FAILURE() << "a duplicate shard accepted";
  } catch (const bad_input& e) {
    EXPECT_NE(std::string(e.what()).find("shard 0/2 is given twice (a.json and b.json)"), std::string::npos)
        << e.what();
  }
  // Unsharded reports are whole runs, not shards: nothing to merge.
  EXPECT_THROW(merge_gate_reports(files{{"a.json", shard(0, 1, p)}, {"b.json", shard(0, 1, p)}}), io_error);
}

TEST(GateMerge, ShardFieldRoundTripsThroughJson) {
  const gate_report r = shard(2, 3, property(10, 0.5, "m=1", "worst at m=1"));
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["shard"], (nlohmann::json{{"index", 2}, {"count", 3}}));
  EXPECT_EQ(j["schema_version"], 3);
  const gate_report back = gate_report_from_json(j);
  EXPECT_EQ(back.shard_index, 2);
  EXPECT_EQ(back.shard_count, 3);
  nlohmann::json bad = j;
  bad["shard"]["index"] = 3;
  EXPECT_THROW(gate_report_from_json(bad), std::invalid_argument);
}

}  // namespace
}  // namespace ropecheck::reports
