// Regressions first, in every report a maintainer reads: the example float32-recipe kernel
// (examples/c_kernel/float32_recipe_rope.c) gated under `exact` is saved as the baseline; its
// build with a seeded regression (EXAMPLE_REGRESSED: the attention factor scaled by 1 + 2^-21,
// which breaks norm_preserved at every position, m = 0 included) fails against it. In the
// terminal, Markdown, HTML and JUnit reports the first failure shown is a regression with its
// own counterexample (not the baseline's), and the known failures come after it, apart (JUnit:
// skipped, with their message). The regressed property's counterexample is shrunk past the
// baseline's worst/bound × 1.1, so it shows the new error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/cli_test_support.h"

namespace ropecheck {
namespace {

using testing::file_text;
const auto run = testing::run_ropecheck;

const std::string recipe = RECIPE_KERNEL_LIB;
const std::string regressed = RECIPE_REGRESSED_LIB;
constexpr std::string_view row_prefix = "baseline/float32_recipe/";

class RegressionsFirst : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    // Exit 1 both times: the recipe kernel is not exact (its baseline holds known failures).
    const auto base = run("gate --kernel-lib " + recipe + " --json " + path("base.json") + " > " + path("base.txt"));
    ASSERT_EQ(base.exit_code, 1) << base.output;
    const auto now = run("gate --kernel-lib " + regressed + " --baseline " + path("base.json") + " --json " +
                         path("now.json") + " --markdown " + path("now.md") + " --html " + path("now.html") +
                         " --junit " + path("now.xml") + " > " + path("now.txt"));
    ASSERT_EQ(now.exit_code, 1) << now.output;
    baseline_ = nlohmann::json::parse(file_text(path("base.json")));
    report_ = nlohmann::json::parse(file_text(path("now.json")));
    for (const auto& f : report_["fixtures"]) {
      const std::string name = f["name"];
      if (name.starts_with(row_prefix) && f["verdict"] == "fail") regressed_.insert(name.substr(row_prefix.size()));
    }
  }

  const nlohmann::json& property(const nlohmann::json& report, const std::string& name) const {
    for (const auto& p : report["kernels"][0]["properties"])
      if (p["name"] == name) return p;
    ADD_FAILURE() << "no property " << name;
    return report;
  }

  nlohmann::json baseline_, report_;
  std::set<std::string> regressed_;  // "<property>/<dtype>" of the failing baseline rows
};

// The seeded regression is seen at all, and is not the old failure.
TEST_F(RegressionsFirst, TheSeededRegressionIsARegressionWithItsOwnCounterexample) {
  ASSERT_TRUE(regressed_.count("norm_preserved/float32")) << report_["fixtures"].dump(1);
  const auto& now = property(report_, "norm_preserved/float32");
  const auto& before = property(baseline_, "norm_preserved/float32");
  EXPECT_EQ(now["verdict"], "fail");
  EXPECT_NE(now["counterexample"], before["counterexample"]);
  // Sanitizer builds run a quarter of the quick cases (property_runner.h case_count), where the
  // baseline's norm_preserved may hold: then the regression is a new failure, with nothing known
  // to hide behind, and the ratio checks below have no baseline failure to compare with.
  if (before["verdict"] != "fail") {
    EXPECT_EQ(before["verdict"], "pass");
    return;
  }
  // Shrunk past the baseline's worst/bound × 1.1, not merely past the bound: the new error.
  const std::string message = now["message"];
  EXPECT_TRUE(message.starts_with("norm_preserved regressed past the --baseline ratchet: this case's worst/bound "))
      << message;
  const double ratio = std::stod(message.substr(message.find("worst/bound ") + 12));
  EXPECT_GT(ratio, 1.1 * before["worst_over_bound"].get<double>()) << message;
  EXPECT_EQ(property(report_, "within_bound_of_reference/float32")["verdict"], "known_failure");
}

TEST_F(RegressionsFirst, TerminalLeadsWithTheRegression) {
  const std::string text = file_text(path("now.txt"));
  // The first failure block: "float32_recipe / <property>: <verdict>…" or "fixture …: …".
  const auto first = text.find("\nfloat32_recipe / ");
  ASSERT_NE(first, std::string::npos) << text;
  const std::string heading = text.substr(first + 1, text.find('\n', first + 1) - first - 1);
  const std::string name = heading.substr(std::string("float32_recipe / ").size(),
                                          heading.find(':') - std::string("float32_recipe / ").size());
  EXPECT_TRUE(regressed_.count(name)) << heading;
  EXPECT_NE(heading.find("REGRESSION"), std::string::npos) << heading;
  // Its own counterexample, in that block, before the property table and the known failures.
  const std::string& counterexample = property(report_, name)["counterexample"];
  const std::string last_line = counterexample.substr(counterexample.rfind('\n') + 1);
  const auto shown = text.find(last_line, first);
  EXPECT_LT(shown, text.find("\nkernel ")) << text;
  const auto known = text.find("known failures (failed in the baseline too");
  ASSERT_NE(known, std::string::npos);
  EXPECT_LT(text.find("\nkernel "), known);
  EXPECT_GT(text.find("within_bound_of_reference/float32: known_failure"), known);
  for (const auto& r : regressed_) {
    if (r.starts_with("seed000") || r.starts_with("golden")) continue;  // fixtures: "fixture <name>"
    EXPECT_LT(text.find("/ " + r + ": "), known) << r;
  }
}

TEST_F(RegressionsFirst, MarkdownLeadsWithTheRegression) {
  const std::string md = file_text(path("now.md"));
  const auto first = md.find("<details");
  ASSERT_NE(first, std::string::npos);
  const std::string summary = md.substr(first, md.find("</summary>", first) - first);
  EXPECT_NE(summary.find("<details open>"), std::string::npos) << summary;
  EXPECT_NE(summary.find("regression"), std::string::npos) << summary;
  const auto slash = summary.find(" / ");
  const std::string name = summary.substr(slash + 3, summary.find(':', slash) - slash - 3);
  EXPECT_TRUE(regressed_.count(name)) << summary;
  const std::string& counterexample = property(report_, name)["counterexample"];
  EXPECT_LT(md.find(counterexample), md.find("</details>", first));
  const auto known = md.find("#### Known failures");
  ASSERT_NE(known, std::string::npos);
  EXPECT_LT(md.find("| kernel |"), known);
  EXPECT_GT(md.find("within_bound_of_reference/float32: known_failure"), known);
  EXPECT_EQ(md.find("<details open>", known), std::string::npos) << "known failures are folded";
}

TEST_F(RegressionsFirst, HtmlLeadsWithTheRegressionAndFoldsSkippedRows) {
  const std::string html = file_text(path("now.html"));
  const auto first = html.find("<section class=\"failure");
  ASSERT_NE(first, std::string::npos);
  const std::string tag = html.substr(first, html.find('>', first) - first);
  EXPECT_NE(tag.find("regression"), std::string::npos) << tag;
  const auto heading = html.find("<h3>float32_recipe / ", first);
  const auto from = heading + std::string("<h3>float32_recipe / ").size();
  const std::string name = html.substr(from, html.find(':', from) - from);
  EXPECT_TRUE(regressed_.count(name)) << name;
  EXPECT_LT(first, html.find("<table")) << "the failures come before the table";
  const auto known = html.find("<section class=\"failure known\"");
  ASSERT_NE(known, std::string::npos);
  EXPECT_LT(first, known);
  EXPECT_EQ(html.find("<section class=\"failure regression\"", known), std::string::npos)
      << "no regression after the known failures";
  // Skipped rows folded under one summary; replay lines wrap.
  const auto folded = html.find("skipped or not run</summary>");
  ASSERT_NE(folded, std::string::npos);
  EXPECT_GT(html.find("<tr class=\"skipped\">"), folded);
  EXPECT_NE(html.find("pre.replay{word-break:break-all}"), std::string::npos);
  EXPECT_NE(html.find("<pre class=\"replay\">"), std::string::npos);
}

TEST_F(RegressionsFirst, JunitLeadsWithTheRegressionAndSkipsKnownFailures) {
  const std::string xml = file_text(path("now.xml"));
  const auto first = xml.find("<testcase ");
  ASSERT_NE(first, std::string::npos);
  const auto end = xml.find("</testcase>", first);
  const std::string testcase = xml.substr(first, end - first);
  const auto at = testcase.find(" name=\"") + 7;
  const std::string name = testcase.substr(at, testcase.find('"', at) - at);
  EXPECT_TRUE(regressed_.count(name)) << testcase;
  EXPECT_NE(testcase.find("<failure message=\"" + name + " regressed against the baseline"), std::string::npos)
      << testcase;
  // Its own counterexample: the RapidCheck token that reproduces it is in the failure.
  const std::string replay = property(report_, name)["replay"];
  const auto token = replay.find("reproduce=");
  ASSERT_NE(token, std::string::npos) << replay;
  EXPECT_NE(testcase.find(replay.substr(token, replay.find('"', token) - token)), std::string::npos) << testcase;
  // A known failure is a skipped test case with its message.
  const auto known = xml.find("name=\"within_bound_of_reference/float32\"");
  ASSERT_NE(known, std::string::npos);
  const std::string known_case = xml.substr(known, xml.find("</testcase>", known) - known);
  EXPECT_NE(known_case.find("<skipped message=\"known failure"), std::string::npos) << known_case;
  EXPECT_NE(known_case.find("within_bound_of_reference violated"), std::string::npos) << known_case;
  EXPECT_EQ(known_case.find("<failure"), std::string::npos) << known_case;
}

}  // namespace
}  // namespace ropecheck
