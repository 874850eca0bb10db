// The gate's knobs end to end through the ropecheck executable, on the float32 recipe example
// kernel (examples/c_kernel/float32_recipe_rope.c): accuracy contracts by name and from a
// JSON file (and bad ones refused with exit 2 naming the field), --property, --max-position,
// a replay showing the other properties as not run, `kernels --kernel-lib` and
// `apply --kernel-lib`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"
#include "io/read_tensor.h"

namespace ropecheck {
namespace {

using testing::file_text;
const auto run = testing::run_ropecheck;

const std::string recipe = RECIPE_KERNEL_LIB;

class GateOptionsTest : public testing::scratch_dir_test {
 protected:
  nlohmann::json report(const std::string& name) const {
    return nlohmann::json::parse(file_text(path(name)));
  }
};

// A JSON contract holding the recipe of the catalog's float32_repeated_product_frequencies
// (without its attention-factor and unfused-arithmetic stages, which this kernel's recipe
// shares only in part): the kernel passes it; the same file with an empty recipe is `exact`,
// which it fails.
std::string contract_json(bool with_recipe) {
  const nlohmann::json recipe = with_recipe ? nlohmann::json{{"inverse_frequencies", "repeated_product float32"},
                                                             {"angle", "float32"},
                                                             {"trig", "float32"},
                                                             {"attention_factor", "after_cache"},
                                                             {"arithmetic", "float32"}}
                                            : nlohmann::json::object();
  return nlohmann::json{{"name", "my_recipe"}, {"recipe", recipe}}.dump();
}

TEST_F(GateOptionsTest, ContractFromAFileIsAppliedAndNamed) {
  write_text("contract.json", contract_json(true));
  const auto pass = run("gate --kernel-lib " + recipe + " --contract " + path("contract.json") +
                        " --property within_bound_of_reference --json " + path("pass.json"));
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_EQ(report("pass.json")["contract"]["name"], "my_recipe");
  write_text("zero.json", contract_json(false));
  const auto fail = run("gate --kernel-lib " + recipe + " --contract " + path("zero.json") +
                        " --property within_bound_of_reference");
  EXPECT_EQ(fail.exit_code, 1) << fail.output;
}

// A kernel passes the contract of its own recipe and fails a stricter one: the mutants that
// imitate a recipe (mutants/mutant_registry.cpp) survive the gate under its contract.
TEST_F(GateOptionsTest, MutantsPassTheContractOfTheirRecipeAndFailStricterOnes) {
  const auto killed = [&](const std::string& mutant, const std::string& contract) {
    // The properties a contract widens (the others hold bit for bit whatever the contract):
    // enough to tell the recipes apart, at a fraction of a whole gate's cost.
    const auto r = run("gate --mutant " + mutant + " --contract " + contract +
                       " --property within_bound_of_reference --property norm_preserved"
                       " --property relative_offset_invariance --json " + path("m.json"));
    EXPECT_NE(r.exit_code, 2) << r.output;
    const auto j = report("m.json");
    EXPECT_EQ(j["contract"]["name"], contract);
    return j["mutants"][0]["killed"].get<bool>();
  };
  EXPECT_FALSE(killed("float32_angles", "float32_angles"));
  EXPECT_TRUE(killed("float32_angles", "exact"));
  EXPECT_FALSE(killed("bfloat16_cos_sin_cache", "bfloat16_arithmetic"));
  EXPECT_TRUE(killed("bfloat16_cos_sin_cache", "bfloat16_cos_sin_cache"));
}

TEST_F(GateOptionsTest, BadContractsAreRefusedNamingTheField) {
  const auto unknown = run("gate --kernel-lib " + recipe + " --contract no_such_contract");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find(
                "--contract: is neither a contract, a STAGE=CHOICE list nor a file 'no_such_contract' (contracts: "
                "exact, float32_angles"),
            std::string::npos)
      << unknown.output;
  nlohmann::json j = nlohmann::json::parse(contract_json(true));
  j["recipe"]["angel"] = "float32";
  write_text("typo.json", j.dump());
  const auto typo = run("gate --kernel-lib " + recipe + " --contract " + path("typo.json"));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find("typo.json: recipe.angel: is not a recipe stage 'angel'"), std::string::npos)
      << typo.output;
  j = nlohmann::json::parse(contract_json(true));
  j["recipe"]["angle"] = "float31";
  write_text("choice.json", j.dump());
  const auto choice = run("gate --kernel-lib " + recipe + " --contract " + path("choice.json"));
  EXPECT_EQ(choice.exit_code, 2);
  EXPECT_NE(choice.output.find("choice.json: recipe.angle: is not a choice of this stage '\"float31\"' (choices: "
                               "float64, float32, float32_repeated_product)"),
            std::string::npos)
      << choice.output;
  j = nlohmann::json::parse(contract_json(true));
  j.erase("recipe");
  write_text("missing.json", j.dump());
  const auto missing = run("gate --kernel-lib " + recipe + " --contract " + path("missing.json"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("missing.json: recipe: give exactly one of recipe (every dtype) and recipes (per "
                                "dtype) 'neither'"),
            std::string::npos)
      << missing.output;
  const auto property = run("gate --kernel-lib " + recipe + " --property no_such_property");
  EXPECT_EQ(property.exit_code, 2);
  EXPECT_NE(property.output.find("--property: unknown kernel property 'no_such_property'"),
            std::string::npos);
}

TEST_F(GateOptionsTest, PropertyAndMaxPositionLimitTheRun) {
  const auto r = run("gate --kernel-lib " + recipe + " --property norm_preserved --max-position 4096 --json " +
                     path("r.json"));
  ASSERT_NE(r.exit_code, 2) << r.output;
  const auto j = report("r.json");
  EXPECT_EQ(j["max_position"], 4096);
  EXPECT_EQ(j["selected_properties"], nlohmann::json::array({"norm_preserved"}));
  EXPECT_TRUE(j["fixtures"].empty());
  int ran = 0;
  for (const auto& p : j["kernels"][0]["properties"]) {
    const std::string name = p["name"];
    if (name == "norm_preserved/float32") {
      ++ran;
      EXPECT_GT(p["cases"].get<int>(), 0);
      for (const auto& point : p["points"]) EXPECT_LE(std::abs(point[0].get<std::int64_t>()), 4096);
    } else if (name.rfind("norm_preserved/", 0) == 0) {
      EXPECT_EQ(p["verdict"], "skipped") << name;  // float16, bfloat16: not in the library
      EXPECT_NE(p["detail"].get<std::string>().find("does not support dtype"), std::string::npos);
    } else {
      EXPECT_EQ(p["verdict"], "not_run") << name;
    }
  }
  EXPECT_EQ(ran, 1);
  EXPECT_NE(r.output.find("max position: |m| <= 4096"), std::string::npos) << r.output;
}

TEST_F(GateOptionsTest, AFailureIsLocatedAndItsReplayRunsOnlyIt) {
  const auto r = run("gate --kernel-lib " + recipe + " --property within_bound_of_reference --json " +
                     path("r.json"));
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const auto j = report("r.json");
  const auto& p = j["kernels"][0]["properties"][0];
  ASSERT_EQ(p["verdict"], "fail");
  EXPECT_GT(p["failed_cases"].get<int>(), 0);
  EXPECT_EQ(p["worst"]["dtype"], "float32");
  EXPECT_GT(p["worst"]["position"].get<std::int64_t>(), 65536);  // float32 angles drift with m
  EXPECT_GT(p["worst"]["units"].get<double>(), 1000);
  EXPECT_FALSE(p["counterexample_location"].is_null());
  const std::string counterexample = p["counterexample"];
  EXPECT_NE(counterexample.find("head_dim: "), std::string::npos) << counterexample;
  EXPECT_NE(counterexample.find("positions ("), std::string::npos) << counterexample;
  EXPECT_EQ(counterexample.find("long:"), std::string::npos) << counterexample;
  EXPECT_EQ(p["message"], counterexample.substr(counterexample.rfind('\n') + 1));
  // The replay line: RC_PARAMS=… ropecheck gate … — run it; every other property is not run.
  const std::string replay = p["replay"];
  const auto quote = replay.find('"'), end = replay.find('"', quote + 1);
  ASSERT_NE(end, std::string::npos) << replay;
  ASSERT_EQ(setenv("RC_PARAMS", replay.substr(quote + 1, end - quote - 1).c_str(), 1), 0);
  const auto again = run("gate --kernel-lib " + recipe + " --json " + path("again.json"));
  unsetenv("RC_PARAMS");
  EXPECT_EQ(again.exit_code, 1) << again.output;
  const auto again_report = report("again.json");  // a named object: the loop reads into it
  for (const auto& q : again_report["kernels"][0]["properties"]) {
    const std::string name = q["name"];
    if (name == "within_bound_of_reference/float32") EXPECT_EQ(q["verdict"], "fail");
    else EXPECT_TRUE(q["verdict"] == "not_run" || q["verdict"] == "skipped") << name << " " << q["verdict"];
  }
}

TEST_F(GateOptionsTest, KernelsAndApplyTakeALibrary) {
  const auto listed = run("kernels --json --kernel-lib " + recipe);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto kernels = nlohmann::json::parse(listed.output);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["name"], "float32_recipe");
  // apply: the recipe's output against the 256-bit reference's at positions 0…4, within the
  // float32_repeated_product_frequencies contract at such positions (a few 2^-24 of |x|).
  std::vector<double> x(5 * 2 * 8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7) - 3;
  write_npy(path("x.npy"), from_float64(x, {5, 2, 8}, dtype::float32));
  const std::vector<double> positions = {0, 1, 2, 3, 4};
  write_npy(path("pos.npy"), from_float64(positions, {5}, dtype::int64));
  write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0})");
  const std::string inputs = " --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  const auto applied = run("apply --kernel-lib " + recipe + " --kernel float32_recipe" + inputs +
                           " --out " + path("y.npy"));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_EQ(run("reference" + inputs + " --out " + path("ref.npy")).exit_code, 0);
  const auto y = to_float64(read_tensor(path("y.npy"), std::nullopt, std::nullopt));
  const auto ref = to_float64(read_tensor(path("ref.npy"), std::nullopt, std::nullopt));
  ASSERT_EQ(y.size(), ref.size());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 32 * 0x1p-24 * 5) << i;
  const auto unknown = run("apply --kernel-lib " + recipe + " --kernel cache_simd" + inputs +
                           " --out " + path("z.npy"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("unknown kernel 'cache_simd'"), std::string::npos) << unknown.output;
}

}  // namespace
}  // namespace ropecheck
