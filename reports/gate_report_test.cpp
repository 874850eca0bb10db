// Gate reports survive a JSON round trip, render deterministically, and escape what they quote.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/gate_report.h"

namespace ropecheck::reports {
namespace {

gate_report sample_report() {
  gate_report r;
  r.tool_version = "0.1.0";
  r.profile = "quick";
  r.seed = 42;
  r.passed = false;
  r.kernels.push_back({"good_kernel", true, {{"within_bound_of_reference", true, 100, 0.61, "", ""}}});
  r.kernels.push_back({"bad_kernel",
                       false,
                       {{"within_bound_of_reference", false, 7, 1234.5,
                         "position 131072 & <x> = \"1\"", "RC_PARAMS=\"seed=42\" ropecheck gate"}}});
  r.fixtures.push_back({"seed000_worked_example/good_kernel/float32", true, 157, 0.2, ""});
  return r;
}

TEST(GateReport, JsonRoundTripsExactly) {
  const gate_report r = sample_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["kernels"][1]["properties"][0]["worst_over_bound"], 1234.5);
  EXPECT_EQ(to_json(gate_report_from_json(j)).dump(), j.dump());
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
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"3\" failures=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("&amp; &lt;x&gt; = &quot;1&quot;"), std::string::npos) << junit;
  EXPECT_EQ(junit.find("<x>"), std::string::npos);
  EXPECT_NE(render_markdown(r).find("`bad_kernel` | fail | 1234.500"), std::string::npos);
  const std::string html = render_html(r);
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // no external assets
  EXPECT_EQ(render_junit(r), render_junit(sample_report()));
}

}  // namespace
}  // namespace ropecheck::reports
