// The JUnit XML that `ropecheck gate --junit`, `ropecheck audit --junit` and `ropecheck report
// --junit` write is accepted by a JUnit schema (reports/junit.xsd, the Ant/Surefire/Jenkins
// format), validated in-process with libxml2, passing and failing reports alike; its counts
// match its testcases. Deliberately broken documents are rejected, so the check can fail.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

using testing::file_text;
const auto run = testing::run_ropecheck;

void collect_error(void* errors, xmlErrorPtr error) {
  auto& text = *static_cast<std::string*>(errors);
  text += std::string(error->message != nullptr ? error->message : "?");
  if (text.empty() || text.back() != '\n') text += '\n';
}

std::string attribute(xmlNodePtr node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  std::string s = value != nullptr ? reinterpret_cast<const char*>(value) : "";
  xmlFree(value);
  return s;
}

bool named(xmlNodePtr node, const char* name) {
  return node->type == XML_ELEMENT_NODE && xmlStrEqual(node->name, reinterpret_cast<const xmlChar*>(name));
}

// What XSD 1.0 cannot say: a suite's tests/failures/errors/skipped equal what it holds, and
// <testsuites> totals equal the sums over its suites.
std::string count_mismatches(xmlNodePtr root) {
  std::string problems;
  const char* kinds[] = {"failure", "error", "skipped"};
  const char* totals[] = {"failures", "errors", "skipped"};
  long sums[4] = {0, 0, 0, 0};
  const auto check = [&](xmlNodePtr node, const char* field, long counted) {
    const std::string stated = attribute(node, field);
    if (!stated.empty() && std::stol(stated) != counted)
      problems += std::string(field) + "=\"" + stated + "\" but " + std::to_string(counted) + " present\n";
  };
  const auto check_suite = [&](xmlNodePtr suite) {
    long counts[4] = {0, 0, 0, 0};
    for (xmlNodePtr c = suite->children; c != nullptr; c = c->next) {
      if (!named(c, "testcase")) continue;
      ++counts[0];
      for (int k = 0; k < 3; ++k) {
        bool has = false;
        for (xmlNodePtr p = c->children; p != nullptr; p = p->next) has = has || named(p, kinds[k]);
        counts[k + 1] += has;
      }
    }
    check(suite, "tests", counts[0]);
    for (int k = 0; k < 3; ++k) check(suite, totals[k], counts[k + 1]);
    for (int k = 0; k < 4; ++k) sums[k] += counts[k];
  };
  if (named(root, "testsuite")) {
    check_suite(root);
  } else {
    for (xmlNodePtr s = root->children; s != nullptr; s = s->next)
      if (named(s, "testsuite")) check_suite(s);
    check(root, "tests", sums[0]);
    for (int k = 0; k < 3; ++k) check(root, totals[k], sums[k + 1]);
  }
  return problems;
}

class junit_schema {
 public:
  junit_schema() {
    const std::string path = std::string(ROPECHECK_SOURCE_DIR) + "/reports/junit.xsd";
    xmlSetStructuredErrorFunc(&errors_, collect_error);
    xmlSchemaParserCtxtPtr parser = xmlSchemaNewParserCtxt(path.c_str());
    schema_ = xmlSchemaParse(parser);
    xmlSchemaFreeParserCtxt(parser);
    xmlSetStructuredErrorFunc(nullptr, nullptr);
  }
  ~junit_schema() { xmlSchemaFree(schema_); }
  junit_schema(const junit_schema&) = delete;
  junit_schema& operator=(const junit_schema&) = delete;

  bool loaded() const { return schema_ != nullptr; }
  const std::string& load_errors() const { return errors_; }

  // Empty when `xml` is well-formed, valid against the schema and its counts add up;
  // otherwise what is wrong.
  std::string problems(const std::string& xml) const {
    std::string errors;
    xmlSetStructuredErrorFunc(&errors, collect_error);
    xmlDocPtr doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "junit.xml", nullptr,
                                  XML_PARSE_NONET);
    if (doc == nullptr) {
      xmlSetStructuredErrorFunc(nullptr, nullptr);
      return errors.empty() ? "not well-formed\n" : errors;
    }
    xmlSchemaValidCtxtPtr validator = xmlSchemaNewValidCtxt(schema_);
    const int rc = xmlSchemaValidateDoc(validator, doc);
    xmlSchemaFreeValidCtxt(validator);
    xmlSetStructuredErrorFunc(nullptr, nullptr);
    if (rc != 0 && errors.empty()) errors = "invalid (libxml2 code " + std::to_string(rc) + ")\n";
    if (rc == 0) errors += count_mismatches(xmlDocGetRootElement(doc));
    xmlFreeDoc(doc);
    return errors;
  }

 private:
  std::string errors_;
  xmlSchemaPtr schema_ = nullptr;
};

class JunitSchema : public testing::scratch_dir_test {
 protected:
  static void TearDownTestSuite() { xmlCleanupParser(); }
  void SetUp() override {
    scratch_dir_test::SetUp();
    ASSERT_TRUE(schema.loaded()) << schema.load_errors();
  }
  junit_schema schema;
};

TEST_F(JunitSchema, GateReportsPassingAndFailingAreValid) {
  const auto gate = run("gate --kernel cache_simd --seed 7 --json " + path("g.json") + " --junit " + path("g.xml"));
  ASSERT_EQ(gate.exit_code, 0) << gate.output;
  const std::string passing = file_text(path("g.xml"));
  EXPECT_EQ(schema.problems(passing), "") << passing.substr(0, 2000);
  EXPECT_NE(passing.find("<testcase"), std::string::npos);

  // The same report with one property failed, its counterexample full of markup, rendered
  // again by `report`: failures must be counted and escaped.
  auto report = nlohmann::json::parse(file_text(path("g.json")));
  auto& property = report["kernels"][0]["properties"][0];
  property["verdict"] = "fail";
  property["counterexample"] = "x = <1, 2> & \"m\" = 'big'\n]]> <!-- -->";
  property["replay"] = "RC_PARAMS=\"seed=7\" ctest -R 'x'";
  report["kernels"][0]["verdict"] = "fail";
  report["verdict"] = "fail";
  write_text("failing.json", report.dump(2));
  const auto rendered = run("report " + path("failing.json") + " --junit " + path("f.xml"));
  ASSERT_EQ(rendered.exit_code, 1) << rendered.output;  // `report` exits with the saved verdict
  const std::string failing = file_text(path("f.xml"));
  EXPECT_EQ(schema.problems(failing), "") << failing.substr(0, 2000);
  EXPECT_NE(failing.find("failures=\"1\""), std::string::npos);
  EXPECT_NE(failing.find("<failure"), std::string::npos);
}

TEST_F(JunitSchema, AuditReportsPassingAndFailingAreValid) {
  std::mt19937_64 rng(9);
  std::normal_distribution<float> normal;
  std::vector<double> x(16 * 2 * 8);
  for (auto& v : x) v = normal(rng);
  write_npy(path("x.npy"), from_float64(x, {16, 2, 8}, dtype::float32));
  std::vector<double> positions(16);
  for (int t = 0; t < 16; ++t) positions[static_cast<std::size_t>(t)] = t * 1000;
  write_npy(path("pos.npy"), from_float64(positions, {16}, dtype::int64));
  // Positions past max_position_embeddings: a finding on a passing audit (system-out).
  write_text("spec.json", R"({"head_dim": 8, "max_position_embeddings": 4096})");
  const std::string inputs = " --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  ASSERT_EQ(run("reference" + inputs + " --out " + path("y.npy") + " --out-dtype float32").exit_code, 0);

  // Passing: the reference itself. Failing: the input returned unrotated.
  const auto pass = run("audit" + inputs + " --y " + path("y.npy") + " --junit " + path("pass.xml"));
  ASSERT_EQ(pass.exit_code, 0) << pass.output;
  const auto fail = run("audit" + inputs + " --y " + path("x.npy") + " --junit " + path("fail.xml"));
  ASSERT_EQ(fail.exit_code, 1) << fail.output;
  for (const char* name : {"pass.xml", "fail.xml"}) {
    const std::string xml = file_text(path(name));
    EXPECT_EQ(schema.problems(xml), "") << name << ":\n" << xml.substr(0, 2000);
  }
  EXPECT_NE(file_text(path("fail.xml")).find("<failure"), std::string::npos);
  EXPECT_NE(file_text(path("pass.xml")).find("<system-out>[position_outside_context]"), std::string::npos);
}

TEST_F(JunitSchema, BrokenDocumentsAreRejected) {
  const std::string head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const auto suite = [&](const std::string& attributes, const std::string& body) {
    return head + "<testsuites name=\"r\" tests=\"1\" failures=\"0\" errors=\"0\">\n  <testsuite " +
           attributes + ">\n" + body + "  </testsuite>\n</testsuites>\n";
  };
  const std::string good_case = "    <testcase classname=\"c\" name=\"n\"><system-out>o</system-out></testcase>\n";
  // The well-formed baseline is accepted, with the optional parts CI tools add.
  ASSERT_EQ(schema.problems(suite("name=\"s\" tests=\"1\" failures=\"0\" time=\"0.5\" timestamp=\"2024-06-11T12:00:00\"",
                                  "    <properties><property name=\"seed\" value=\"7\"/></properties>\n" + good_case)),
            "");
  const struct {
    const char* what;
    std::string xml;
  } broken[] = {
      {"not well-formed", suite("name=\"s\" tests=\"1\"", "    <testcase classname=\"c\" name=\"n\">\n")},
      {"testsuite without a name", suite("tests=\"1\" failures=\"0\"", good_case)},
      {"a count that is not a number", suite("name=\"s\" tests=\"one\"", good_case)},
      {"a negative count", suite("name=\"s\" tests=\"1\" failures=\"-1\"", good_case)},
      {"a testcase without a name", suite("name=\"s\" tests=\"1\"", "    <testcase classname=\"c\"/>\n")},
      {"an empty classname", suite("name=\"s\" tests=\"1\"", "    <testcase classname=\"\" name=\"n\"/>\n")},
      {"an element JUnit does not have", suite("name=\"s\" tests=\"1\"", "    <testcase classname=\"c\" name=\"n\"><flaky/></testcase>\n")},
      {"a failure with markup inside", suite("name=\"s\" tests=\"1\" failures=\"1\"",
                                             "    <testcase classname=\"c\" name=\"n\"><failure message=\"m\"><b>x</b></failure></testcase>\n")},
      {"a time that is not seconds", suite("name=\"s\" tests=\"1\" time=\"1s\"", good_case)},
      {"the wrong root", head + "<testrun name=\"r\"/>\n"},
      {"tests not matching the testcases", suite("name=\"s\" tests=\"2\"", good_case)},
      {"failures not matching the failures", suite("name=\"s\" tests=\"1\" failures=\"1\"", good_case)},
  };
  for (const auto& b : broken) EXPECT_NE(schema.problems(b.xml), "") << b.what << ":\n" << b.xml;
}

}  // namespace
}  // namespace ropecheck
