// Gate reports survive a JSON round trip, render deterministically, and escape what they quote.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/gate_report.h"

namespace ropecheck::reports {
namespace {

property_outcome outcome(std::string name, bool passed, std::int64_t cases, double worst,
                         std::string counterexample, std::string replay) {
  property_outcome p;
  p.name = std::move(name);
  p.passed = passed;
  p.cases = cases;
  p.worst_over_bound = worst;
  p.counterexample = std::move(counterexample);
  p.replay = std::move(replay);
  return p;
}

gate_report sample_report() {
  gate_report r;
  r.tool_version = "0.1.0";
  r.profile = "quick";
  r.seed = 42;
  r.passed = false;
  r.contract = "float32_angles";
  r.max_position = 65536;
  r.kernels.push_back({"good_kernel", true, {outcome("within_bound_of_reference", true, 100, 0.61, "", "")}, {}});
  auto bad = outcome("within_bound_of_reference", false, 7, 1234.5, "position 131072 & <x> = \"1\"",
                     "RC_PARAMS=\"seed=42\" ropecheck gate");
  bad.message = "within_bound_of_reference violated at m=65535";
  bad.failed_cases = 5;
  bad.worst = {"float32", "half", 512, 512, 65535, 3, 1.5e4, "Q float32 half d=512/512 m=65535 j=3"};
  bad.points = {{0, 0.5}, {65535, 1234.5}};
  auto skipped = outcome("norm_preserved/float16", true, 0, 0, "", "");
  skipped.status = "skipped";
  skipped.detail = "skipped: the kernel does not support dtype float16";
  auto known = outcome("strategies_agree/float32", false, 80, 46, "", "");
  known.status = "known_failure";
  r.kernels.push_back({"bad_kernel", false, {bad, skipped, known}, {}});
  r.fixtures.push_back({"seed000_worked_example/good_kernel/float32", true, 157, 0.2, ""});
  return r;
}

TEST(GateReport, JsonRoundTripsExactly) {
  const gate_report r = sample_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["kernels"][1]["properties"][0]["worst_over_bound"], 1234.5);
  EXPECT_EQ(j["kernels"][1]["properties"][0]["worst"]["position"], 65535);
  EXPECT_EQ(j["kernels"][1]["properties"][1]["verdict"], "skipped");
  EXPECT_EQ(j["kernels"][1]["properties"][2]["verdict"], "known_failure");
  EXPECT_EQ(j["contract"]["name"], "float32_angles");
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(to_json(gate_report_from_json(j)).dump(), j.dump());
}

TEST(GateReport, SchemaVersion1StillReads) {
  nlohmann::json j = to_json(sample_report());
  j["schema_version"] = 1;
  auto& props = j["kernels"][1]["properties"];  // version 1 knew only pass and fail
  props.erase(props.begin() + 1, props.end());
  const gate_report r = gate_report_from_json(j);
  EXPECT_EQ(r.contract, "exact");
  EXPECT_EQ(r.kernels[1].properties[0].worst_over_bound, 1234.5);
}

TEST(GateReport, MalformedJsonNamesTheField) {
  nlohmann::json j = to_json(sample_report());
  j["kernels"][0].erase("verdict");
  try {
    gate_report_from_json(j);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "kernels[0]: field 'verdict': missing");
  }
  EXPECT_THROW(gate_report_from_json(nlohmann::json::array()), std::invalid_argument);
}

TEST(GateReport, RenderingsNameTheFailureAndEscapeIt) {
  const gate_report r = sample_report();
  const std::string terminal = render_terminal(r);
  EXPECT_NE(terminal.find("gate: FAIL"), std::string::npos);
  EXPECT_NE(terminal.find("position 131072"), std::string::npos);
  // The failure's message and its worst case's location, the contract and the position limit.
  EXPECT_NE(terminal.find("message: within_bound_of_reference violated at m=65535"), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("worst/bound 1234.500 over all 7 cases at Q float32 half d=512/512 m=65535 j=3; 5 of 7 cases failed"),
            std::string::npos) << terminal;
  EXPECT_NE(terminal.find("contract: float32_angles"), std::string::npos);
  EXPECT_NE(terminal.find("max position: |m| <= 65536"), std::string::npos);
  EXPECT_NE(terminal.find("skipped: the kernel does not support dtype float16"), std::string::npos);
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"5\" failures=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("&amp; &lt;x&gt; = &quot;1&quot;"), std::string::npos) << junit;
  EXPECT_EQ(junit.find("<x>"), std::string::npos);
  EXPECT_NE(render_markdown(r).find("`bad_kernel` | fail | 1234.500"), std::string::npos);
  const std::string html = render_html(r);
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external assets
  EXPECT_EQ(html.find("https"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);  // the failure's error-versus-position plot
  EXPECT_NE(html.find("within_bound_of_reference violated at m=65535"), std::string::npos);
  EXPECT_NE(html.find("RC_PARAMS=&quot;seed=42&quot; ropecheck gate"), std::string::npos);
  EXPECT_EQ(render_junit(r), render_junit(sample_report()));
}

}  // namespace
}  // namespace ropecheck::reports
