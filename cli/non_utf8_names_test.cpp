// File names that are not UTF-8, end to end: a Linux file name may hold any byte but '/' and
// NUL, and reports embed file names (audit inputs, the gate's baseline, the kernels of a
// library). Given X, a spec and a baseline whose names hold byte 0xff, every report written —
// JSON, HTML, Markdown, JUnit — is valid UTF-8 with U+FFFD in place of the byte (not exit 3
// with a JSON library's type error), and `report` reads the JSON back unchanged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"
#include "reports/report_text.h"

namespace ropecheck {
namespace {

using testing::file_text;

const std::string fffd = "\xef\xbf\xbd";  // U+FFFD

testing::run_result run(const std::string& args) {
  return testing::run_ropecheck_prefixed("env -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS -u RC_PARAMS ", args);
}

class NonUtf8Names : public testing::scratch_dir_test {
 protected:
  std::string quoted(const std::string& name) const { return "'" + path(name) + "'"; }
  std::string outputs(const std::string& stem) const {
    return " --json " + path(stem + ".json") + " --html " + path(stem + ".html") + " --markdown " +
           path(stem + ".md") + " --junit " + path(stem + ".xml");
  }
  // Each rendering is well-formed UTF-8 (valid_utf8 changes nothing) and shows U+FFFD.
  void expect_valid_utf8(const std::string& stem) const {
    for (const char* ext : {".json", ".html", ".md", ".xml"}) {
      const std::string text = file_text(path(stem + ext));
      ASSERT_FALSE(text.empty()) << stem << ext;
      EXPECT_EQ(reports::valid_utf8(text), text) << stem << ext << " is not valid UTF-8";
      EXPECT_EQ(text.find('\xff'), std::string::npos) << stem << ext;
    }
  }
};

TEST_F(NonUtf8Names, AuditReportsOfAnXAndSpecNamedWithByteFF) {
  const std::string x = "x\xff.npy", spec = "spec\xff.json";
  write_text(spec, R"({"head_dim": 8, "rope_theta": 10000.0})");
  std::vector<double> values(4 * 8), positions = {0, 1, 2, 3};
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
  write_npy(path(x), from_float64(values, {4, 1, 8}, dtype::float32));
  write_npy(path("pos.npy"), from_float64(positions, {4}, dtype::int64));
  const std::string inputs = " --spec " + quoted(spec) + " --x " + quoted(x) + " --pos " + path("pos.npy");
  ASSERT_EQ(run("reference" + inputs + " --out " + path("y.npy")).exit_code, 0);
  const auto audit = run("audit" + inputs + " --y " + path("y.npy") + outputs("audit"));
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  expect_valid_utf8("audit");
  const auto report = nlohmann::json::parse(file_text(path("audit.json")));
  EXPECT_EQ(report["inputs"]["x"], path("x" + fffd + ".npy"));
  EXPECT_EQ(report["inputs"]["spec"], path("spec" + fffd + ".json"));
  // Read back and written again: the same JSON.
  const auto again = run("report " + path("audit.json") + outputs("again"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  expect_valid_utf8("again");
  EXPECT_EQ(file_text(path("again.json")), file_text(path("audit.json")));
  // identify reads the same X.
  const auto identify = run("identify --x " + quoted(x) + " --pos " + path("pos.npy") + " --y " + path("y.npy") +
                            " --json " + path("identify.json"));
  EXPECT_NE(identify.exit_code, 3) << identify.output;
  if (identify.exit_code <= 1) {
    const std::string text = file_text(path("identify.json"));
    EXPECT_EQ(reports::valid_utf8(text), text);
  }
}

TEST_F(NonUtf8Names, GateReportsOfABaselineNamedWithByteFF) {
  const std::string gate = "gate --kernel cache_scalar --property norm_preserved";
  ASSERT_EQ(run(gate + " --json " + path("before.json")).exit_code, 0);
  const std::string baseline = "before\xff.json";
  write_text(baseline, file_text(path("before.json")));
  const auto r = run(gate + " --baseline " + quoted(baseline) + outputs("gate"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_valid_utf8("gate");
  EXPECT_EQ(nlohmann::json::parse(file_text(path("gate.json")))["baseline"], path("before" + fffd + ".json"));
  const auto again = run("report " + path("gate.json") + " --json " + path("again.json"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(file_text(path("again.json")), file_text(path("gate.json")));
}

}  // namespace
}  // namespace ropecheck
