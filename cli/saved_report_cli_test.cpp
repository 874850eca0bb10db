// Saved reports are checked before they are trusted, end to end through the ropecheck
// executable: a real gate report (whole and in 4 shards) and a real audit report, each corrupted
// the ways a hand edit corrupts them (a negative count, more failed cases than cases, a negative
// or NaN ratio, a "pass" that lists failures, a count near 2^63), must give exit 2 — one line
// naming the file, the field path and the value, no output file — from `report`, from `report
// merge` and from `gate --baseline`. A shard report is no baseline, and one whole run's report
// is no merge.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

using testing::file_text;

const std::string clean_env = "env -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_STATUS_FILE -u RC_PARAMS ";

testing::run_result run(const std::string& args) { return testing::run_ropecheck_prefixed(clean_env, args); }

// A gate of one small property: a fraction of a second.
const std::string small_gate = "gate --kernel cache_scalar --property norm_preserved";

struct corruption {
  std::string name;
  std::function<void(nlohmann::json&)> apply;
  std::string field;  // the field path the refusal names
  std::string value;  // the value it shows
};

nlohmann::json& first_property(nlohmann::json& report) {
  for (auto& p : report["kernels"][0]["properties"])
    if (p["verdict"] == "pass") return p;
  throw std::logic_error("no passing property");
}

// The index of first_property in kernels[0].properties, for the field path.
std::string first_property_path(const nlohmann::json& report) {
  const auto& ps = report["kernels"][0]["properties"];
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (ps[i]["verdict"] == "pass") return "kernels[0].properties[" + std::to_string(i) + "]";
  return "";
}

class SavedReport : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    const auto whole = run(small_gate + " --json " + path("whole.json"));
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    for (int i = 0; i < 4; ++i) {
      const auto shard = run(small_gate + " --shard " + std::to_string(i) + "/4 --json " + path(shard_name(i)));
      ASSERT_EQ(shard.exit_code, 0) << shard.output;
    }
  }

  static std::string shard_name(int i) { return "shard" + std::to_string(i) + ".json"; }
  nlohmann::json json_of(const std::string& name) const { return nlohmann::json::parse(file_text(path(name))); }

  // exit 2, one line starting "ropecheck: <file>", naming the field and the value; no output.
  void expect_refused(const testing::run_result& r, const std::string& file, const std::string& field,
                      const std::string& value, const std::string& what) const {
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.output;
    EXPECT_EQ(r.output.rfind("ropecheck: " + path(file), 0), 0u) << what << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << what << ": " << r.output;
    EXPECT_NE(r.output.find(field), std::string::npos) << what << " lacks " << field << ": " << r.output;
    EXPECT_NE(r.output.find(value), std::string::npos) << what << " lacks " << value << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("out.json"))) << what;
  }

  std::vector<corruption> corruptions(const nlohmann::json& report) const {
    const std::string at = first_property_path(report);
    const std::int64_t cases = report["kernels"][0]["properties"][at.empty() ? 0 : std::stoi(at.substr(at.rfind('[') + 1))]["cases"];
    return {
        {"negative cases", [](nlohmann::json& j) { first_property(j)["cases"] = -5; }, at + ".cases", "-5"},
        {"negative worst/bound", [](nlohmann::json& j) { first_property(j)["worst_over_bound"] = -1; },
         at + ".worst_over_bound", "-1"},
        {"NaN worst/bound", [](nlohmann::json& j) { first_property(j)["worst_over_bound"] = "NaN"; },
         at + ".worst_over_bound", "nan"},
        {"failed cases beyond cases",
         [cases](nlohmann::json& j) { first_property(j)["failed_cases"] = cases + 1; }, at + ".failed_cases",
         std::to_string(cases + 1)},
        {"a pass with failed cases", [](nlohmann::json& j) { first_property(j)["failed_cases"] = 1; },
         at + ".verdict", "pass"},
        {"a passing report with a failing property",
         [](nlohmann::json& j) {
           auto& p = first_property(j);
           p["verdict"] = "fail";
           p["failed_cases"] = 1;
         },
         "kernels[0].verdict", "pass"},
        {"a failing report where nothing fails", [](nlohmann::json& j) { j["verdict"] = "fail"; }, "'verdict'", "fail"},
        {"an unknown verdict", [](nlohmann::json& j) { first_property(j)["verdict"] = "passed"; }, "'verdict'",
         "\"passed\""},
    };
  }
};

TEST_F(SavedReport, ReportRefusesEachCorruptedGateReport) {
  const auto whole = json_of("whole.json");
  ASSERT_EQ(run("report " + path("whole.json")).exit_code, 0);
  for (const auto& c : corruptions(whole)) {
    nlohmann::json bad = whole;
    c.apply(bad);
    write_text("bad.json", bad.dump());
    expect_refused(run("report " + path("bad.json") + " --json " + path("out.json")), "bad.json", c.field,
                   c.value, "report: " + c.name);
  }
}

TEST_F(SavedReport, MergeRefusesEachCorruptedShardAndSumsThatOverflow) {
  const auto shard = json_of(shard_name(1));
  std::string others = " " + path(shard_name(0)) + " " + path(shard_name(2)) + " " + path(shard_name(3));
  ASSERT_EQ(run("report merge " + path(shard_name(1)) + others).exit_code, 0);
  for (const auto& c : corruptions(shard)) {
    nlohmann::json bad = shard;
    c.apply(bad);
    write_text("bad.json", bad.dump());
    expect_refused(run("report merge " + path("bad.json") + others + " --json " + path("out.json")), "bad.json",
                   c.field, c.value, "merge: " + c.name);
  }
  // Cases of 2^63 - 1 in two shards: the sum is refused, not wrapped negative.
  const std::string at = first_property_path(shard);
  for (const std::string name : {"big1.json", "big2.json"}) {
    nlohmann::json big = json_of(name == "big1.json" ? shard_name(1) : shard_name(2));
    first_property(big)["cases"] = std::numeric_limits<std::int64_t>::max();
    write_text(name, big.dump());
  }
  const auto overflow = run("report merge " + path(shard_name(0)) + " " + path("big1.json") + " " +
                            path("big2.json") + " " + path(shard_name(3)) + " --json " + path("out.json"));
  expect_refused(overflow, "big", at + ".cases", std::to_string(std::numeric_limits<std::int64_t>::max()),
                 "merge: overflow");
  EXPECT_NE(overflow.output.find("2^63 - 1"), std::string::npos) << overflow.output;
}

TEST_F(SavedReport, MergeRefusesOneWholeRunsReport) {
  const auto one = run("report merge " + path("whole.json") + " --json " + path("out.json"));
  expect_refused(one, "whole.json", "shard", "null", "merge of one unsharded report");
  EXPECT_NE(one.output.find("not of a shard"), std::string::npos) << one.output;
}

TEST_F(SavedReport, BaselineRefusesCorruptedReportsAndShards) {
  ASSERT_EQ(run(small_gate + " --baseline " + path("whole.json")).exit_code, 0);
  const auto whole = json_of("whole.json");
  for (const auto& c : corruptions(whole)) {
    nlohmann::json bad = whole;
    c.apply(bad);
    write_text("bad.json", bad.dump());
    expect_refused(run(small_gate + " --baseline " + path("bad.json") + " --json " + path("out.json")), "bad.json",
                   c.field, c.value, "baseline: " + c.name);
  }
  const auto shard = run(small_gate + " --baseline " + path(shard_name(1)) + " --json " + path("out.json"));
  expect_refused(shard, shard_name(1), "field 'shard'", "1/4", "a shard as baseline");
  EXPECT_NE(shard.output.find("a baseline compares whole runs"), std::string::npos) << shard.output;
}

TEST_F(SavedReport, ReportRefusesACorruptedAuditReport) {
  write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0})");
  std::vector<double> x(4 * 8), positions = {0, 1, 2, 3};
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
  write_npy(path("x.npy"), from_float64(x, {4, 1, 8}, dtype::float32));
  write_npy(path("pos.npy"), from_float64(positions, {4}, dtype::int64));
  const std::string inputs = " --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  ASSERT_EQ(run("reference" + inputs + " --out " + path("y.npy")).exit_code, 0);
  const auto audit = run("audit" + inputs + " --y " + path("y.npy") + " --json " + path("audit.json"));
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  ASSERT_EQ(run("report " + path("audit.json")).exit_code, 0);
  const auto saved = json_of("audit.json");
  const std::vector<corruption> audit_corruptions = {
      {"negative outputs", [](nlohmann::json& j) { j["outputs"] = -1; }, "'outputs'", "-1"},
      {"beyond tolerance past outputs",
       [](nlohmann::json& j) { j["outputs_beyond_tolerance"] = j["outputs"].get<std::int64_t>() + 1; },
       "'outputs_beyond_tolerance'", std::to_string(saved["outputs"].get<std::int64_t>() + 1)},
      {"a pass with outputs beyond tolerance", [](nlohmann::json& j) { j["outputs_beyond_tolerance"] = 1; },
       "'verdict'", "pass"},
      {"a negative error", [](nlohmann::json& j) { j["max_abs_error"] = -1; }, "'max_abs_error'", "-1"},
      {"an infinite error on a pass", [](nlohmann::json& j) { j["max_rel_pair_error"] = "Infinity"; },
       "'max_rel_pair_error'", "inf"},
      {"a pass of nothing",
       [](nlohmann::json& j) {
         j["outputs"] = 0;
         j["ulp"]["outputs"] = 0;
         j["passthrough"]["checked"] = 0;
       },
       "'verdict'", "pass"},
  };
  for (const auto& c : audit_corruptions) {
    nlohmann::json bad = saved;
    c.apply(bad);
    write_text("bad.json", bad.dump());
    expect_refused(run("report " + path("bad.json") + " --json " + path("out.json")), "bad.json", c.field, c.value,
                   "audit report: " + c.name);
  }
  // An audit report is no baseline.
  expect_refused(run(small_gate + " --baseline " + path("audit.json") + " --json " + path("out.json")), "audit.json",
                 "field 'report'", "\"audit\"", "an audit report as baseline");
}

}  // namespace
}  // namespace ropecheck
