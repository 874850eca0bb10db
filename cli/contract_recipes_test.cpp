// Contracts spelled as recipes, end to end through the ropecheck executable, on the example
// cache kernel (examples/c_kernel/cache_rope.c: float32 angles, cosf/sinf, A folded into a
// float16 cos/sin cache, positions [0, 65536), no inverse, no partial rotary): green under its
// recipe in stage names and under the recipe its own audit finds (apply → audit →
// gate --contract-from), red under `exact`; its float32-cache build green under the float32
// recipe, under which the float16 build — the regression — is red. Bad spellings are exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

using testing::file_text;
const auto run = testing::run_ropecheck;

const std::string cache16 = CACHE_KERNEL_LIB;
const std::string cache32 = CACHE_KERNEL_FLOAT32_LIB;
// The example's recipe, as the audit prints it and `--contract` reads it.
const std::string recipe16 = "'angle=float32,trig=float32,trig_cache=float16,arithmetic=float32'";
const std::string recipe32 = "'angle=float32,trig=float32,arithmetic=float32'";
// The properties a contract widens, and one exact property: enough to judge the recipe, quick.
const std::string some_properties =
    " --property within_bound_of_reference --property norm_preserved --property relative_offset_invariance";

class ContractRecipes : public testing::scratch_dir_test {
 protected:
  nlohmann::json report(const std::string& name) const { return nlohmann::json::parse(file_text(path(name))); }

  // A dump of the kernel's own output: X standard normal, positions across the cache.
  void dump(const std::string& library) {
    constexpr std::int64_t tokens = 96, heads = 2, head_dim = 64;
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal;
    std::vector<double> x(tokens * heads * head_dim);
    for (auto& v : x) v = normal(rng);
    std::vector<double> p;
    for (std::int64_t t = 0; t < tokens; ++t) p.push_back(static_cast<double>((t * 683) % 65536));
    write_npy(path("x.npy"), from_float64(x, {tokens, heads, head_dim}, dtype::float32));
    write_npy(path("pos.npy"), from_float64(p, {tokens}, dtype::int64));
    write_text("spec.json", R"({"head_dim": 64, "rope_theta": 10000.0})");
    const auto applied = run("apply --kernel-lib " + library + " --kernel cache_rope --spec " + path("spec.json") +
                             " --x " + path("x.npy") + " --pos " + path("pos.npy") + " --out " + path("y.npy"));
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
  }
};

TEST_F(ContractRecipes, CacheKernelIsGreenUnderItsRecipeAndRedUnderExact) {
  const auto green = run("gate --kernel-lib " + cache16 + " --contract " + recipe16 + some_properties +
                         " --json " + path("green.json"));
  EXPECT_EQ(green.exit_code, 0) << green.output;
  const auto j = report("green.json");
  EXPECT_EQ(j["contract"]["name"], "angle=float32,trig=float32,trig_cache=float16,arithmetic=float32");
  EXPECT_NE(j["contract"]["derivation"].get<std::string>().find("trig_cache=float16"), std::string::npos);
  const auto red = run("gate --kernel-lib " + cache16 + some_properties);
  EXPECT_EQ(red.exit_code, 1) << red.output;
  EXPECT_NE(red.output.find("within_bound_of_reference/float32: fail"), std::string::npos) << red.output;
}

TEST_F(ContractRecipes, A16BitCacheWhereTheCacheWasFloat32IsRed) {
  const auto before = run("gate --kernel-lib " + cache32 + " --contract " + recipe32 + some_properties);
  EXPECT_EQ(before.exit_code, 0) << before.output;
  const auto regressed = run("gate --kernel-lib " + cache16 + " --contract " + recipe32 + some_properties);
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  EXPECT_NE(regressed.output.find("within_bound_of_reference/float32: fail"), std::string::npos) << regressed.output;
}

// An audit that blames a bug gives no contract: its recipe was fitted to the bug.
TEST_F(ContractRecipes, AnAuditThatNamesABugGivesNoContract) {
  write_text("buggy.json", R"({"report": "audit", "dtype": "float32",
      "diagnosis": [{"code": "position_offset", "message": "", "share": 1, "evidence": ""}],
      "recipe": {"positions": "exact", "inverse_frequencies": "pow float64", "angle": "float64", "trig": "float64",
                 "trig_cache": "float32", "cache_rounding": "nearest_even", "attention_factor": "in_cache",
                 "arithmetic": "float32_fma", "output_store": "nearest_even", "output": "float32",
                 "bit_exact": 1, "residual_units": 0}})");
  const auto r = run("gate --kernel-lib " + cache16 + " --contract-from " + path("buggy.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("diagnosis[0].code: names a bug or an unexplained error"), std::string::npos) << r.output;
}

TEST_F(ContractRecipes, TheAuditOfItsOwnDumpGivesAContractItPasses) {
  dump(cache16);
  const auto audited = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                           path("pos.npy") + " --y " + path("y.npy") + " --json " + path("audit.json"));
  ASSERT_NE(audited.exit_code, 2) << audited.output;
  const auto recipe = report("audit.json")["recipe"];
  EXPECT_EQ(recipe["angle"], "float32") << recipe.dump();
  EXPECT_EQ(recipe["trig_cache"], "float16") << recipe.dump();
  EXPECT_EQ(recipe["attention_factor"], "in_cache") << recipe.dump();
  const auto green = run("gate --kernel-lib " + cache16 + " --contract-from " + path("audit.json") +
                         some_properties + " --json " + path("g.json"));
  EXPECT_EQ(green.exit_code, 0) << green.output;
  EXPECT_NE(report("g.json")["contract"]["statement"].get<std::string>().find("found by the audit audit.json"),
            std::string::npos);
}

TEST_F(ContractRecipes, BadSpellingsAreRefusedNamingTheStageOrChoice) {
  const auto stage = run("gate --kernel-lib " + cache16 + " --contract 'angel=float32'");
  EXPECT_EQ(stage.exit_code, 2);
  EXPECT_NE(stage.output.find("--contract: is not a recipe stage 'angel' (stages: positions,"), std::string::npos)
      << stage.output;
  const auto choice = run("gate --kernel-lib " + cache16 + " --contract 'trig_cache=float8'");
  EXPECT_EQ(choice.exit_code, 2);
  EXPECT_NE(choice.output.find("is not a choice of stage trig_cache 'float8' (choices: float64, float32, float16, "
                               "bfloat16)"),
            std::string::npos)
      << choice.output;
  const auto twice = run("gate --kernel-lib " + cache16 + " --contract 'angle=float32,angle=float64'");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.output.find("gives a stage twice 'angle'"), std::string::npos) << twice.output;
  write_text("c.json", R"({"recipe": {"trig_cache": "float16"}, "float32": {}})");
  const auto field = run("gate --kernel-lib " + cache16 + " --contract " + path("c.json"));
  EXPECT_EQ(field.exit_code, 2);
  EXPECT_NE(field.output.find("c.json: float32: is not a contract field"), std::string::npos) << field.output;
  const auto comma = run("gate --kernel-lib " + cache16 + " --contract 'angle=float32,'");
  EXPECT_EQ(comma.exit_code, 2);
  EXPECT_NE(comma.output.find("has an empty item (a stray comma)"), std::string::npos) << comma.output;
  write_text("output.json", R"({"recipe": {"trig_cache": "float16", "output": "float16"}})");
  const auto output = run("gate --kernel-lib " + cache16 + " --contract " + path("output.json"));
  EXPECT_EQ(output.exit_code, 2);
  EXPECT_NE(output.output.find("recipe.output: names a dtype in a recipe for every dtype"), std::string::npos)
      << output.output;
  write_text("statement.json", R"({"recipe": {}, "statement": 3})");
  const auto statement = run("gate --kernel-lib " + cache16 + " --contract " + path("statement.json"));
  EXPECT_EQ(statement.exit_code, 2);
  EXPECT_NE(statement.output.find("statement: must be a string"), std::string::npos) << statement.output;
  write_text("not_audit.json", R"({"report": "gate"})");
  const auto from = run("gate --kernel-lib " + cache16 + " --contract-from " + path("not_audit.json"));
  EXPECT_EQ(from.exit_code, 2);
  EXPECT_NE(from.output.find("not_audit.json: report: is not an audit report"), std::string::npos) << from.output;
}

// A contract file in the audit's recipe language, one recipe per dtype: the dtypes the kernel
// lacks need none.
TEST_F(ContractRecipes, AFileGivesTheRecipePerDtype) {
  write_text("c.json", R"({"recipes": {"float32": {"angle": "float32", "trig": "float32", "trig_cache": "float16",
                           "arithmetic": "float32"}}, "positions": "nonnegative", "max_position": 65535})");
  const auto green = run("gate --kernel-lib " + cache16 + " --contract " + path("c.json") + some_properties +
                         " --json " + path("r.json"));
  EXPECT_EQ(green.exit_code, 0) << green.output;
  EXPECT_EQ(report("r.json")["contract"]["name"], "float32: angle=float32,trig=float32,trig_cache=float16,arithmetic=float32");
}

// The audit takes the gate's contracts: a dump of the float32-cache build is red under the
// exact bound and green under its recipe, spelled or from its own audit; the float16 build's dump
// (the regression) is red under that same recipe; --tolerance with a contract is exit 2.
TEST_F(ContractRecipes, TheAuditJudgesADumpUnderAContract) {
  dump(cache32);
  const std::string audit = "audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                            path("pos.npy") + " --y " + path("y.npy");
  const auto exact = run(audit + " --json " + path("exact.json"));
  EXPECT_EQ(exact.exit_code, 1) << exact.output;
  EXPECT_TRUE(report("exact.json")["tolerance_terms"]["contract"].is_null());
  const auto spelled = run(audit + " --contract " + recipe32 + " --json " + path("spelled.json"));
  EXPECT_EQ(spelled.exit_code, 0) << spelled.output;
  EXPECT_EQ(report("spelled.json")["tolerance_terms"]["contract"], "angle=float32,trig=float32,arithmetic=float32");
  EXPECT_NE(spelled.output.find("widened by the contract"), std::string::npos) << spelled.output;
  const auto own = run(audit + " --contract-from " + path("exact.json"));
  EXPECT_EQ(own.exit_code, 0) << own.output;

  dump(cache16);
  const auto regressed = run(audit + " --contract " + recipe32);
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  const auto both = run(audit + " --contract " + recipe32 + " --tolerance 3");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--tolerance: is not allowed with --contract"), std::string::npos) << both.output;
}

// Nothing passes vacuously: where a contract's recipe allows an error as large as the pair itself
// (bfloat16 positions at m ≈ 1000 move the angle by a radian or more), a zero output would pass,
// so the audit refuses (exit 2, one line naming --contract) rather than passing it.
TEST_F(ContractRecipes, AnAuditWhoseContractJudgesNothingIsRefused) {
  constexpr std::int64_t tokens = 64;
  std::vector<double> x(tokens * 2, 1.0), y(tokens * 2, 0.0), p;
  for (std::int64_t t = 0; t < tokens; ++t) p.push_back(static_cast<double>(1000 + t));
  write_npy(path("x.npy"), from_float64(x, {tokens, 1, 2}, dtype::float32));
  write_npy(path("y.npy"), from_float64(y, {tokens, 1, 2}, dtype::float32));
  write_npy(path("pos.npy"), from_float64(p, {tokens}, dtype::int64));
  write_text("spec.json", R"({"head_dim": 2})");
  const std::string audit = "audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                            path("pos.npy") + " --y " + path("y.npy");
  EXPECT_EQ(run(audit).exit_code, 1);
  const auto refused = run(audit + " --contract positions=bfloat16");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--contract: allows"), std::string::npos) << refused.output;
  EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1) << refused.output;
}

// Nothing passes vacuously: a run under a contract stops where the contract's bound reaches half
// the pair's norm. float16 positions (which overflow past 65504) round |m| by up to 2^-11·|m|,
// which moves θ_0 = 1's angle by as much: 2^13·|m| units of 2^-24 reach 2^23 at |m| = 1024. The
// report states the narrowed domain; an exact run keeps the kernel's own.
TEST_F(ContractRecipes, ARunStopsWhereItsContractStopsJudging) {
  const auto narrowed = run("gate --kernel-lib " + cache16 + " --contract 'positions=float16'" +
                            " --property within_bound_of_reference --json " + path("f16.json"));
  EXPECT_NE(narrowed.exit_code, 2) << narrowed.output;
  const auto max_position = report("f16.json")["kernels"][0]["domain"]["max_position"].get<std::int64_t>();
  EXPECT_GT(max_position, 512);
  EXPECT_LE(max_position, 1024);
  const auto exact = run("gate --kernel-lib " + cache16 + " --property within_bound_of_reference --json " +
                         path("exact.json"));
  EXPECT_EQ(report("exact.json")["kernels"][0]["domain"]["max_position"].get<std::int64_t>(), 65535);
}

}  // namespace
}  // namespace ropecheck
