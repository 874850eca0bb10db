// A saved report is trusted only once its invariants hold (saved_report.h): each invariant is
// broken once here, on a gate and an audit report the tools could have written, and must be
// refused naming the field path and the value; `report merge` refuses a whole run's report,
// and sums that overflow; and every report file is valid UTF-8 (report_text.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "io/io_error.h"
#include "reports/gate_merge.h"
#include "reports/report_text.h"
#include "reports/saved_report.h"

namespace ropecheck::reports {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

property_outcome property(std::string name, bool passed, std::int64_t cases, double worst) {
  property_outcome p;
  p.name = std::move(name);
  p.passed = passed;
  p.cases = cases;
  p.worst_over_bound = worst;
  p.points = {{0, worst / 2}, {7, worst}};
  if (!passed) {
    p.failed_cases = 3;
    p.message = "violated";
  }
  return p;
}

// A failing gate report of two kernels, as the gate writes one: a pass, a failure, a skipped
// property, a known failure, a fixture and a killed mutant.
gate_report gate_sample() {
  gate_report r;
  r.tool_version = "0.1.0";
  r.profile = "quick";
  r.seed = 42;
  r.kernels.push_back({"good", true, {property("within_bound_of_reference/float32", true, 100, 0.5)}, {}});
  property_outcome skipped = property("norm_preserved/float16", true, 0, 0);
  skipped.points.clear();
  skipped.status = "skipped";
  property_outcome known = property("strategies_agree/float32", false, 80, 46);
  known.status = "known_failure";
  r.kernels.push_back({"bad", false, {property("within_bound_of_reference/float32", false, 7, inf), skipped, known}, {}});
  r.fixtures.push_back({"seed000_worked_example/good/float32", true, 157, 0.2, ""});
  r.mutants.push_back({"sign_flip", "a sign error", true, {"norm_preserved/float32"}, {"counterexample"}});
  judge(r);
  return r;
}

audit_report audit_sample() {
  audit_report r;
  r.tool_version = "0.1.0";
  r.dtype = "float32";
  r.tolerance_units = 2.5;
  r.outputs = 4096;
  r.ulp_outputs = 4000;
  r.passthrough_checked = 64;
  r.max_abs_error = 1e-7;
  r.max_rel_pair_error = 6e-8;
  r.max_rel_pair_error_units = 1.0;
  r.max_rel_pair_error_dtype_units = 1.0;
  r.worst.error = 1e-7;
  r.worst.allowed = 3e-7;
  r.by_position.push_back({"[1, 2)", 1, 1, 4096, 1.0});
  r.by_frequency.push_back({"0", 0, 0, 4096, 1.0});
  r.by_frequency_and_position = {{1.0}};
  r.diagnosis.push_back({"position_outside_context", "2 rows past max_position_embeddings", 0, ""});
  r.attribution.push_back({"output_rounding", 1, 0.5});
  return r;
}

// The report must be refused, with the field path and value in the one-line message.
template <class Report>
void expect_refused(const Report& r, const std::string& path, const std::string& value,
                    report_use use = report_use::whole) {
  try {
    if constexpr (std::is_same_v<Report, gate_report>) validate_report(r, "r.json", use);
    else validate_report(r, "r.json");
    ADD_FAILURE() << "accepted; expected a refusal of " << path;
  } catch (const saved_report_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("r.json: field '" + path + "': ", 0), 0u) << what;
    EXPECT_NE(what.find("'" + value + "'"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(SavedReport, TheToolsOwnReportsAreValid) {
  EXPECT_NO_THROW(validate_report(gate_sample(), "r.json"));
  EXPECT_NO_THROW(validate_report(audit_sample(), "r.json"));
  // And they survive the JSON round trip, infinite ratios of failing rows included.
  const auto back = saved_report_from_json(nlohmann::json::parse(json_text(to_json(gate_sample()))), "r.json");
  EXPECT_EQ(std::get<gate_report>(back).kernels[1].properties[0].points[1].second, inf);
  EXPECT_NO_THROW(saved_report_from_json(nlohmann::json::parse(json_text(to_json(audit_sample()))), "r.json"));
}

TEST(SavedReport, GateCountsAreNonNegativeAndFailedCasesWithinCases) {
  const std::string at = "kernels[1].properties[0]";
  expect_refused([&] { auto r = gate_sample(); r.kernels[1].properties[0].cases = -5; return r; }(), at + ".cases", "-5");
  expect_refused([&] { auto r = gate_sample(); r.kernels[1].properties[0].failed_cases = -1; return r; }(),
                 at + ".failed_cases", "-1");
  expect_refused([&] { auto r = gate_sample(); r.kernels[1].properties[0].failed_cases = 8; return r; }(),
                 at + ".failed_cases", "8");
  expect_refused([&] { auto r = gate_sample(); r.fixtures[0].values = -157; return r; }(), "fixtures[0].values", "-157");
  expect_refused([&] { auto r = gate_sample(); r.profile = "fast"; return r; }(), "profile", "fast");
  expect_refused([&] { auto r = gate_sample(); r.shard_index = 2; r.shard_count = 2; return r; }(), "shard", "2/2");
  // A skipped property ran nothing.
  expect_refused([&] { auto r = gate_sample(); r.kernels[1].properties[1].cases = 9; return r; }(),
                 "kernels[1].properties[1].cases", "9");
}

TEST(SavedReport, RatiosAreNumbersAtLeastZeroAndFiniteWherePassed) {
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].properties[0].worst_over_bound = -1; return r; }(),
                 "kernels[0].properties[0].worst_over_bound", "-1");
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].properties[0].worst_over_bound = NAN; return r; }(),
                 "kernels[0].properties[0].worst_over_bound", "nan");
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].properties[0].worst_over_bound = inf; return r; }(),
                 "kernels[0].properties[0].worst_over_bound", "inf");
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].properties[0].points[1].second = inf; return r; }(),
                 "kernels[0].properties[0].points[1][1]", "inf");
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].properties[0].worst.units = -3; return r; }(),
                 "kernels[0].properties[0].worst.units", "-3");
  expect_refused([&] { auto r = gate_sample(); r.fixtures[0].worst_over_bound = inf; return r; }(),
                 "fixtures[0].worst_over_bound", "inf");
  // A failing row's ratio may be infinite (an output with no bound): see TheToolsOwnReportsAreValid.
}

TEST(SavedReport, VerdictsAgreeWithTheirRows) {
  // A passing property with failed cases; a "pass" report listing failures.
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].properties[0].failed_cases = 40; return r; }(),
                 "kernels[0].properties[0].verdict", "pass");
  expect_refused([&] { auto r = gate_sample(); r.kernels[1].passed = true; return r; }(), "kernels[1].verdict", "pass");
  expect_refused([&] { auto r = gate_sample(); r.passed = true; return r; }(), "verdict", "pass");
  expect_refused([&] { auto r = gate_sample(); r.kernels[0].passed = false; return r; }(), "kernels[0].verdict", "fail");
  expect_refused([&] {
    auto r = gate_sample();
    r.kernels.erase(r.kernels.begin() + 1);
    r.passed = false;  // nothing fails
    return r;
  }(), "verdict", "fail");
  expect_refused([&] { auto r = gate_sample(); r.mutants[0].killed_by.clear(); r.mutants[0].counterexamples.clear(); return r; }(),
                 "mutants[0].killed", "true");
  // A failing fixture of a kernel fails it.
  expect_refused([&] { auto r = gate_sample(); r.fixtures[0].passed = false; return r; }(), "kernels[0].verdict", "pass");
}

TEST(SavedReport, APassNeedsSomethingJudged) {
  gate_report empty = gate_sample();
  empty.kernels.erase(empty.kernels.begin() + 1);
  empty.kernels[0].properties[0].cases = 0;
  empty.kernels[0].properties[0].points.clear();
  empty.fixtures.clear();
  empty.mutants.clear();
  judge(empty);
  ASSERT_TRUE(empty.passed);
  expect_refused(empty, "kernels[0].verdict", "pass");
  // Each kernel of a whole run too: one whose every property was skipped has no verdict.
  gate_report skipped_kernel = gate_sample();
  skipped_kernel.kernels.push_back({"idle", true, {skipped_kernel.kernels[1].properties[1]}, {}});
  judge(skipped_kernel);
  expect_refused(skipped_kernel, "kernels[2].verdict", "pass");
  // A shard may hold no case (shard I of N > cases); the merged report is held to the rule.
  empty.shard_index = 1;
  empty.shard_count = 2;
  EXPECT_NO_THROW(validate_report(empty, "r.json", report_use::merge_input));
  expect_refused(empty, "verdict", "pass");  // but `report` of it: a shard that judged nothing
  gate_report other = empty;
  other.shard_index = 0;
  try {
    merge_gate_reports({{"a.json", other}, {"b.json", empty}});
    ADD_FAILURE() << "a merge of nothing judged passed";
  } catch (const saved_report_error& e) {
    EXPECT_NE(std::string(e.what()).find("report merge: field 'kernels[0].verdict': is pass, but the kernel judged no case"), std::string::npos)
        << e.what();
  }
}

TEST(SavedReport, AuditInvariants) {
  expect_refused([] { auto r = audit_sample(); r.outputs = -1; return r; }(), "outputs", "-1");
  expect_refused([] { auto r = audit_sample(); r.outputs_beyond_tolerance = 5000; return r; }(), "outputs_beyond_tolerance", "5000");
  expect_refused([] { auto r = audit_sample(); r.passthrough_modified = 65; return r; }(), "passthrough.modified", "65");
  expect_refused([] { auto r = audit_sample(); r.non_finite = -2; return r; }(), "non_finite", "-2");
  expect_refused([] { auto r = audit_sample(); r.tolerance_units = inf; return r; }(), "tolerance_units", "inf");
  expect_refused([] { auto r = audit_sample(); r.output_scale = 0; return r; }(), "output_scale", "0");
  expect_refused([] { auto r = audit_sample(); r.max_rel_pair_error_units = -1; return r; }(), "max_rel_pair_error_units", "-1");
  expect_refused([] { auto r = audit_sample(); r.worst.allowed = inf; return r; }(), "worst.allowed", "inf");
  expect_refused([] { auto r = audit_sample(); r.by_position[0].outputs = -4; return r; }(), "by_position[0].outputs", "-4");
  expect_refused([] { auto r = audit_sample(); r.by_frequency_and_position[0][0] = NAN; return r; }(),
                 "by_frequency_and_position[0][0]", "nan");
  expect_refused([] { auto r = audit_sample(); r.diagnosis[0].share = 1.5; return r; }(), "diagnosis[0].share", "1.5");
  // The heatmap is frequency × position bucket.
  expect_refused([] { auto r = audit_sample(); r.by_frequency_and_position[0].push_back(1); return r; }(),
                 "by_frequency_and_position[0]", "2");
  expect_refused([] { auto r = audit_sample(); r.by_frequency_and_position.push_back({1}); return r; }(),
                 "by_frequency_and_position", "2");
  // The verdict: pass iff nothing is beyond tolerance, modified or non-finite, and something was judged.
  expect_refused([] { auto r = audit_sample(); r.outputs_beyond_tolerance = 40; return r; }(), "verdict", "pass");
  expect_refused([] { auto r = audit_sample(); r.non_finite = 1; return r; }(), "verdict", "pass");
  expect_refused([] { auto r = audit_sample(); r.passed = false; return r; }(), "verdict", "fail");
  expect_refused([] {
    auto r = audit_sample();
    r.outputs = r.ulp_outputs = r.passthrough_checked = 0;
    return r;
  }(), "verdict", "pass");
  // A failing audit's errors may be infinite (a zero pair rotated to a non-zero output).
  audit_report failing = audit_sample();
  failing.passed = false;
  failing.outputs_beyond_tolerance = 2;
  failing.max_rel_pair_error = failing.max_rel_pair_error_units = inf;
  EXPECT_NO_THROW(validate_report(failing, "r.json"));
}

TEST(SavedReport, SchemaErrorsNameTheFileAndArraysMustBeArrays) {
  nlohmann::json j = to_json(gate_sample());
  j["kernels"] = {{"name", "k"}};  // an object where an array belongs: refused, not indexed
  EXPECT_THROW(saved_report_from_json(j, "r.json"), saved_report_error);
  j = to_json(gate_sample());
  j["kernels"][0]["properties"][0]["points"] = {{1e300, 0.5}};  // a position beyond int64
  EXPECT_THROW(saved_report_from_json(j, "r.json"), saved_report_error);
  try {
    saved_report_from_json(nlohmann::json::array(), "r.json");
    ADD_FAILURE();
  } catch (const saved_report_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("r.json: report: field 'report': missing", 0), 0u) << e.what();
  }
}

TEST(SavedReport, MergeRefusesAWholeRunAndOverflowingSums) {
  gate_report whole = gate_sample();
  try {
    merge_gate_reports({{"whole.json", whole}});
    ADD_FAILURE() << "one unsharded report merged";
  } catch (const io_error& e) {
    EXPECT_EQ(e.field(), "shard") << e.what();
    EXPECT_EQ(e.file(), "whole.json") << e.what();
  }
  gate_report a = gate_sample(), b = gate_sample();
  a.shard_count = b.shard_count = 2;
  b.shard_index = 1;
  b.fixtures.clear();
  b.mutants.clear();
  a.kernels[0].properties[0].cases = std::numeric_limits<std::int64_t>::max();
  b.kernels[0].properties[0].cases = 1;
  try {
    merge_gate_reports({{"a.json", a}, {"b.json", b}});
    ADD_FAILURE() << "the sum wrapped";
  } catch (const io_error& e) {
    EXPECT_EQ(e.field(), "kernels[0].properties[0].cases") << e.what();
    EXPECT_NE(std::string(e.what()).find("2^63 - 1"), std::string::npos) << e.what();
  }
  // A shard count far beyond the shards given names the first missing ones, and allocates nothing for the rest.
  a.shard_count = std::numeric_limits<int>::max();
  try {
    merge_gate_reports({{"a.json", a}});
    ADD_FAILURE();
  } catch (const bad_input& e) {
    EXPECT_NE(std::string(e.what()).find("shards 1/2147483647,"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("and 2147483638 more are missing"), std::string::npos) << e.what();
  }
}

TEST(ReportText, InvalidUtf8BecomesTheReplacementCharacter) {
  EXPECT_EQ(valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(valid_utf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(valid_utf8("x\xffy"), "x" + fffd + "y");
  EXPECT_EQ(valid_utf8("\xe2\x82"), fffd);                 // a truncated sequence: one replacement
  EXPECT_EQ(valid_utf8("\xe2\x82z"), fffd + "z");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), fffd + fffd);          // an overlong form: each byte
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
  // A JSON report of a file named with byte 0xff: written (not a type error), read back.
  audit_report r = audit_sample();
  r.x = "/tmp/x\xff.npy";
  const std::string text = json_text(to_json(r));
  const auto back = std::get<audit_report>(saved_report_from_json(nlohmann::json::parse(text), "r.json"));
  EXPECT_EQ(back.x, "/tmp/x" + fffd + ".npy");
}

}  // namespace
}  // namespace ropecheck::reports
