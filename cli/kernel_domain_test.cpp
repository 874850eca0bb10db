// Declared domains, end to end (fast::kernel_domain, C ABI v3 limits, gate --positions): the
// kernels of abi/test_libraries/domain_kernels.c refuse every call outside what they serve and
// are exact inside it. Declared, the gate passes them, never sending such a call, and names
// the properties and fixtures that need what they lack as skipped (no property passes with
// 0 cases); the same kernels declaring every call fail with "refused a valid call"; --positions
// nonnegative serves a kernel that refuses negative positions, and a bad value is exit 2; the
// report states each kernel's domain, and a baseline of another domain is refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_support.h"

namespace ropecheck {
namespace {

using testing::expect_bad_input;
using testing::file_text;
using testing::run_result;

run_result run(const std::string& args) { return testing::run_ropecheck_with_timeout(args, 600); }

std::string library(const std::string& variant) {
  return std::string(DOMAIN_LIB_DIR) + "/libdomain_" + variant + ".so";
}

const nlohmann::json* find_named(const nlohmann::json& list, const std::string& name) {
  for (const auto& item : list)
    if (item["name"] == name) return &item;
  return nullptr;
}

class KernelDomain : public testing::scratch_dir_test {};

TEST_F(KernelDomain, ADeclaredDomainPassesWithWhatItLacksSkippedAndNamed) {
  const std::string json = path("declared.json");
  const run_result r = run("gate --kernel-lib " + library("declared") + " --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("domain of domain_limited: positions m >= 0, |m| <= 1000000, no inverse direction, "
                          "no attention factor (A = 1), no partial rotary (rotary_dim = head_dim), Q and K "
                          "always together"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("domain of refuses_negatives: positions m >= 0\n"), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(file_text(json));
  const auto* limited = find_named(report["kernels"], "domain_limited");
  ASSERT_NE(limited, nullptr);
  EXPECT_EQ((*limited)["domain"], nlohmann::json::parse(R"({"positions": "nonnegative", "max_position": 1000000,
      "inverse": false, "attention_factor": false, "partial_rotary": false, "absent_tensor": false})"));
  const auto* nonnegative = find_named(report["kernels"], "refuses_negatives");
  ASSERT_NE(nonnegative, nullptr);
  EXPECT_EQ((*nonnegative)["domain"], nlohmann::json::parse(R"({"positions": "nonnegative", "max_position": null,
      "inverse": true, "attention_factor": true, "partial_rotary": true, "absent_tensor": true})"));
  // What needs a capability the kernel lacks is skipped with the reason; the rest ran cases.
  const struct {
    std::string property, reason;
  } skipped[] = {{"inverse_round_trip/float32", "no inverse direction"},
                 {"pass_through_bit_exact/float32", "no partial rotary"},
                 {"q_and_k_together_equal_separate/float32", "no call with Q or K absent"}};
  for (const auto& s : skipped) {
    const auto* p = find_named((*limited)["properties"], s.property);
    ASSERT_NE(p, nullptr) << s.property;
    EXPECT_EQ((*p)["verdict"], "skipped") << s.property;
    EXPECT_NE((*p)["detail"].get<std::string>().find(s.reason), std::string::npos) << (*p)["detail"];
    // The other kernel serves them: they ran there.
    EXPECT_EQ((*find_named((*nonnegative)["properties"], s.property))["verdict"], "pass") << s.property;
  }
  for (const auto& k : report["kernels"])
    for (const auto& p : k["properties"])
      if (p["verdict"] == "pass") {
        EXPECT_GT(p["cases"].get<int>(), 0) << k["name"] << " " << p["name"];
      }
  // Golden vectors of a configuration outside the domain are not sent: skipped, with why.
  const struct {
    std::string fixture, reason;
  } fixtures[] = {
      {"golden/gpt-neox-20b/domain_limited/float32 (positions <= 1000000)", "skipped: rotary_dim 24 of head_dim 96"},
      {"golden/qwen25-7b-yarn/domain_limited/float32 (positions <= 1000000)", "skipped: attention factor"}};
  for (const auto& f : fixtures) {
    const auto* fixture = find_named(report["fixtures"], f.fixture);
    ASSERT_NE(fixture, nullptr) << f.fixture;
    EXPECT_EQ((*fixture)["values"], 0) << f.fixture;
    EXPECT_EQ((*fixture)["detail"].get<std::string>().rfind(f.reason, 0), 0u) << (*fixture)["detail"];
    EXPECT_NE(r.output.find("    " + f.reason), std::string::npos) << r.output;  // shown in the terminal too
  }
  const auto* served = find_named(report["fixtures"], "golden/llama2-7b-half/domain_limited/float32 (positions <= 1000000)");
  ASSERT_NE(served, nullptr);
  EXPECT_GT((*served)["values"].get<int>(), 0);
}

TEST_F(KernelDomain, TheSameKernelsDeclaringEveryCallFailOnTheirRefusals) {
  const run_result r = run("gate --kernel-lib " + library("undeclared") + " --kernel domain_limited");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const char* refusal : {"refused a valid call: domain_limited: no inverse direction",
                              "refused a valid call: domain_limited: Q and K must both be given",
                              "refused a valid call: domain_limited: rotary_dim must equal head_dim"})
    EXPECT_NE(r.output.find(refusal), std::string::npos) << refusal << "\n" << r.output;
}

TEST_F(KernelDomain, PositionsNonnegativeServesAKernelThatRefusesNegativePositions) {
  const std::string gate = "gate --kernel-lib " + library("undeclared") + " --kernel refuses_negatives";
  const run_result all = run(gate);
  EXPECT_EQ(all.exit_code, 1) << all.output;
  EXPECT_NE(all.output.find("refused a valid call: refuses_negatives: position -"), std::string::npos) << all.output;
  const std::string json = path("nonnegative.json");
  const run_result nonnegative = run(gate + " --positions nonnegative --json " + json);
  EXPECT_EQ(nonnegative.exit_code, 0) << nonnegative.output;
  EXPECT_NE(nonnegative.output.find("domain of refuses_negatives: positions m >= 0"), std::string::npos);
  const auto report = nlohmann::json::parse(file_text(json));
  EXPECT_EQ(report["kernels"][0]["domain"]["positions"], "nonnegative");

  // Read back, the report renders the same JSON (the domain included).
  const std::string again = path("again.json");
  EXPECT_EQ(run("report " + json + " --json " + again).exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(file_text(again)), report);

  // Shards of other domains are not one run: their merge is refused naming the field.
  const std::string shard0 = path("shard0.json"), shard1 = path("shard1.json");
  EXPECT_EQ(run(gate + " --positions nonnegative --shard 0/2 --json " + shard0).exit_code, 0);
  EXPECT_EQ(run(gate + " --shard 1/2 --json " + shard1).exit_code, 1);
  expect_bad_input(run("report merge " + shard0 + " " + shard1), {shard1, "kernels[0].domain", "positions m >= 0"});

  // A baseline of another domain compares ratios over other cases: refused, like another contract.
  const run_result other = run(gate + " --baseline " + json);
  expect_bad_input(other, {json, "kernels[0].domain", "positions m >= 0", "every call"});
  // The same domain is accepted (and passes).
  EXPECT_EQ(run(gate + " --positions nonnegative --baseline " + json).exit_code, 0);

  // A failure's replay line gates the same domain again.
  const run_result limited = run("gate --kernel-lib " + library("undeclared") +
                                 " --kernel domain_limited --positions nonnegative --property norm_preserved");
  EXPECT_EQ(limited.exit_code, 1) << limited.output;
  EXPECT_NE(limited.output.find("--positions nonnegative --kernel domain_limited"), std::string::npos)
      << limited.output;
}

TEST_F(KernelDomain, APositionsValueOtherThanAllOrNonnegativeIsExitTwo) {
  const run_result r = run("gate --kernel-lib " + library("declared") + " --positions positive");
  expect_bad_input(r, {"--positions", "positive"});
}

}  // namespace
}  // namespace ropecheck
