// The largest call each property sent (token-heads) and the plots of error/bound against
// position, pair index j and head_dim: through the JSON and back, in every rendering, and held to
// the saved report's rules (no negative size, no point past the limit). The values are written
// here by hand, not computed by the code under test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "reports/gate_report.h"
#include "reports/saved_report.h"

namespace ropecheck::reports {
namespace {

gate_report sample() {
  gate_report r;
  r.tool_version = "0.1.0";
  r.profile = "quick";
  r.seed = 7;
  property_outcome p;
  p.name = "call_size_invariant/float32";
  p.passed = false;
  p.cases = 20;
  p.failed_cases = 3;
  p.worst_over_bound = 12.5;
  p.message = "call_size_invariant violated";
  p.worst = {"float32", "half", 128, 96, 40000, 17, 3.0, "Q float32 half d=128/96 m=40000 j=17"};
  p.points = {{3, 0.25}, {40000, 12.5}};
  p.pair_points = {{2, 0.25}, {17, 12.5}};
  p.head_dim_points = {{64, 0.25}, {128, 12.5}};
  p.largest_call_token_heads = 16384;
  property_outcome q;
  q.name = "norm_preserved/float32";
  q.cases = 40;
  q.worst_over_bound = 0.5;
  q.largest_call_token_heads = 60;
  r.kernels.push_back({"k", false, {p, q}, {}});
  judge(r);
  return r;
}

TEST(CallSizeAndPlots, SurviveTheJsonRoundTrip) {
  const gate_report r = sample();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["kernels"][0]["properties"][0]["largest_call_token_heads"], 16384);
  EXPECT_EQ(j["kernels"][0]["properties"][0]["points_by_pair"][1][0], 17);
  EXPECT_EQ(j["kernels"][0]["properties"][0]["points_by_head_dim"][0][0], 64);
  EXPECT_EQ(to_json(gate_report_from_json(j)).dump(), j.dump());
  validate_report(gate_report_from_json(j), "sample.json");
}

TEST(CallSizeAndPlots, OlderReportsWithoutThemStillRead) {
  nlohmann::json j = to_json(sample());
  for (auto& p : j["kernels"][0]["properties"]) {
    p.erase("largest_call_token_heads");
    p.erase("points_by_pair");
    p.erase("points_by_head_dim");
  }
  const gate_report back = gate_report_from_json(j);
  EXPECT_EQ(back.kernels[0].properties[0].largest_call_token_heads, 0);
  EXPECT_TRUE(back.kernels[0].properties[0].pair_points.empty());
}

TEST(CallSizeAndPlots, EveryRenderingStatesTheLargestCall) {
  const gate_report r = sample();
  const std::string terminal = render_terminal(r);
  EXPECT_NE(terminal.find("largest call: 16384 token-heads"), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("largest call\n"), std::string::npos) << terminal;  // the table's column
  EXPECT_NE(terminal.find("0.500            60"), std::string::npos) << terminal;
  const std::string markdown = render_markdown(r);
  EXPECT_NE(markdown.find("**Largest call:** 16384 token-heads"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 16384 |"), std::string::npos) << markdown;  // the kernel's largest
  const std::string html = render_html(r);
  EXPECT_NE(html.find("<b>Largest call:</b> 16384 token-heads"), std::string::npos);
  EXPECT_NE(html.find("<td>16384</td>"), std::string::npos);
  // Three plots for the failure, each with its worst case circled at its own coordinate.
  for (const char* axis : {"versus |position m| (log scale)", "versus pair index j", "versus head_dim (log scale)"})
    EXPECT_NE(html.find(axis), std::string::npos) << axis;
  EXPECT_NE(html.find("<title>j = 17: 12.500</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>head_dim = 128: 12.500</title>"), std::string::npos);
  // Long replay lines (and counterexample lines) wrap.
  EXPECT_NE(html.find("section.failure pre{white-space:pre-wrap}"), std::string::npos);
  EXPECT_NE(html.find("<section class=\"failure"), std::string::npos);
}

TEST(CallSizeAndPlots, TheSavedReportRulesHoldThem) {
  gate_report r = sample();
  r.kernels[0].properties[0].largest_call_token_heads = -1;
  EXPECT_THROW(validate_report(r, "bad.json"), std::exception);
  r = sample();
  r.kernels[0].properties[0].pair_points.assign(max_points_per_property + 1, {1, 0.5});
  EXPECT_THROW(validate_report(r, "bad.json"), std::exception);
}

}  // namespace
}  // namespace ropecheck::reports
