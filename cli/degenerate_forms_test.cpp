// Nothing passes vacuously: every subcommand fed a degenerate form — 0 tokens, 0 heads, a batch
// of 0, empty positions, a config whose every layer skips RoPE, a spec or output scale that makes
// the tolerance infinite, a tolerance as wide as the output — refuses it with exit 2 and one
// line naming the input, instead of a pass over nothing or with an infinite tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

using testing::expect_bad_input;
using testing::run_result;

run_result run(const std::string& args) { return testing::run_ropecheck_with_timeout(args, 120); }


class DegenerateForms : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0})");
    write_x("x.npy", {4, 1, 8});
    write_positions("pos.npy", {4}, {0, 1, 2, 3});
    const auto r = run("apply --kernel cache_scalar --spec " + path("spec.json") + " --x " + path("x.npy") +
                       " --pos " + path("pos.npy") + " --out " + path("y.npy"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  void write_x(const std::string& name, std::vector<std::int64_t> shape, double value = 0.5) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = value * static_cast<double>(i % 7 + 1);
    write_npy(path(name), from_float64(v, shape, dtype::float32));
  }
  void write_positions(const std::string& name, std::vector<std::int64_t> shape, std::vector<double> values) {
    write_npy(path(name), from_float64(values, shape, dtype::int64));
  }
  // `reference`, `apply`, `audit` and `identify` on X, positions (and Y = X where a Y is taken).
  std::vector<std::pair<std::string, run_result>> every_tensor_command(const std::string& spec, const std::string& x,
                                                                       const std::string& pos) {
    const std::string in = " --x " + path(x) + " --pos " + path(pos);
    const std::string spec_flag = " --spec " + path(spec);
    return {
        {"reference", run("reference" + spec_flag + in + " --out " + path("out_ref.npy"))},
        {"apply", run("apply --kernel cache_simd" + spec_flag + in + " --out " + path("out_apply.npy"))},
        {"audit", run("audit" + spec_flag + in + " --y " + path(x))},
        {"identify", run("identify" + in + " --y " + path(x))},
    };
  }
  void expect_no_outputs() {
    for (const char* name : {"out_ref.npy", "out_apply.npy"})
      EXPECT_FALSE(std::filesystem::exists(path(name))) << name;
  }
};

TEST_F(DegenerateForms, NoTokensNoHeadsNoBatchAreRefusedByEveryTensorCommand) {
  write_x("tokens0.npy", {0, 1, 8});
  write_positions("pos0.npy", {0}, {});
  write_x("heads0.npy", {4, 0, 8});
  write_x("batch0.npy", {0, 4, 1, 8});
  write_positions("pos_batch0.npy", {0, 4}, {});
  for (const auto& [x, pos] : {std::pair{"tokens0.npy", "pos0.npy"}, std::pair{"heads0.npy", "pos.npy"},
                               std::pair{"batch0.npy", "pos_batch0.npy"}}) {
    for (const auto& [command, r] : every_tensor_command("spec.json", x, pos)) {
      SCOPED_TRACE(command + " on " + x);
      expect_bad_input(r, {x, "nothing to"});
    }
  }
  expect_no_outputs();
}

TEST_F(DegenerateForms, ConfigsWithNoRopeLayerAreRefused) {
  write_text("all_nope.json", R"({"model_type": "llama4_text", "head_dim": 8, "rope_theta": 10000.0,
                                  "num_hidden_layers": 2, "no_rope_layers": [0, 0]})");
  write_text("every_first_nope.json", R"({"model_type": "llama4_text", "head_dim": 8, "rope_theta": 10000.0,
                                          "no_rope_layer_interval": 1})");
  write_text("all_linear.json", R"({"model_type": "qwen3_next", "head_dim": 8, "rope_theta": 10000.0,
                                    "partial_rotary_factor": 1.0, "num_hidden_layers": 2,
                                    "layer_types": ["linear_attention", "linear_attention"]})");
  for (const char* spec : {"all_nope.json", "every_first_nope.json", "all_linear.json"}) {
    for (const auto& [command, r] : every_tensor_command(spec, "x.npy", "pos.npy")) {
      if (command == "identify") continue;  // identify takes no spec
      SCOPED_TRACE(command + " with " + spec);
      expect_bad_input(r, {spec, "nothing to check"});
    }
  }
  expect_no_outputs();
}

TEST_F(DegenerateForms, SpecValuesWithoutMeaningAreRefused) {
  write_text("yarn_betas.json", R"({"head_dim": 8, "rope_theta": 10000.0, "max_position_embeddings": 4096,
      "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0, "beta_slow": 32.0}})");
  write_text("interleaved.json", R"({"head_dim": 8, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "default", "mrope_section": [1, 2, 1], "mrope_interleaved": true}})");
  write_text("banana.json", R"({"head_dim": 8, "rope_theta": 10000.0, "num_hidden_layers": 2,
      "layer_types": ["full_attention", "banana_attention"]})");
  const std::string in = " --x " + path("x.npy") + " --pos " + path("pos.npy") + " --y " + path("y.npy");
  expect_bad_input(run("audit --spec " + path("yarn_betas.json") + in), {"beta_fast", "beta_slow"});
  expect_bad_input(run("audit --spec " + path("interleaved.json") + in), {"mrope_section", "height"});
  expect_bad_input(run("audit --spec " + path("banana.json") + in), {"layer_types[1]", "banana_attention"});
}

TEST_F(DegenerateForms, InfiniteOrVacuousTolerancesAreRefused) {
  // Y = 3·X + 1 at positions to 2·10^5: any real tolerance fails it.
  write_positions("far.npy", {4}, {0, 70000, 140000, 200000});
  write_x("garbled.npy", {4, 1, 8}, 1.5);
  write_text("linear_tiny.json",
             R"({"head_dim": 8, "rope_scaling": {"rope_type": "linear", "factor": 1e-300}})");
  write_text("yarn_tiny.json", R"({"head_dim": 8, "max_position_embeddings": 4096,
      "rope_scaling": {"rope_type": "yarn", "factor": 1e-300}})");
  const std::string in = " --x " + path("x.npy") + " --pos " + path("far.npy") + " --y " + path("garbled.npy");
  expect_bad_input(run("audit --spec " + path("linear_tiny.json") + in), {"linear_tiny.json", "rope_scaling", "2^13"});
  expect_bad_input(run("audit --spec " + path("yarn_tiny.json") + in), {"yarn_tiny.json", "rope_scaling"});
  // apply agrees: the same spec is refused there too.
  EXPECT_EQ(run("apply --kernel cache_scalar --spec " + path("linear_tiny.json") + " --x " + path("x.npy") +
                " --pos " + path("far.npy") + " --out " + path("out_apply.npy"))
                .exit_code,
            2);
  const std::string spec_in = "audit --spec " + path("spec.json") + in;
  expect_bad_input(run(spec_in + " --tolerance 1e400"), {"--tolerance"});
  expect_bad_input(run(spec_in + " --tolerance 16777216"), {"--tolerance", "zero output"});

  // fp8 outputs of all 0x38 (1.0) bits with an output scale of 1e-45: the scale makes every
  // tolerance wider than float8_e4m3fn's range.
  const std::vector<double> ones(32, 1.0);  // 0x38
  write_npy(path("ones_fp8.npy"), from_float64(ones, {4, 1, 8}, dtype::float8_e4m3fn));
  for (const char* scale : {"1e-45", "1e-30"}) {
    SCOPED_TRACE(scale);
    expect_bad_input(run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy") +
                       " --y " + path("ones_fp8.npy") + " --dtype float8_e4m3fn --output-scale " + scale),
                   {"output_scale", "nothing would be judged"});
  }
}

// A contract is a recipe from the catalog (recipes/recipe_catalog.h), whose terms are derived
// and finite: a file of hand-given error terms — one of 10^30 units would let a zero output
// pass — is refused, naming the field.
TEST_F(DegenerateForms, ContractsOfHandGivenTermsAreRefused) {
  const std::string wide = R"({"constant": 1e30, "angle": 0, "angle_per_pair": 0, "absolute": 0})";
  write_text("wide.json", R"({"name": "wide", "float16": )" + wide + "}");
  expect_bad_input(run("gate --kernel cache_scalar --contract " + path("wide.json")),
                   {"wide.json: float16: is not a contract field"});
  write_text("wide_recipe.json", R"({"recipe": {"trig_cache": {"constant": 1e30}}})");
  expect_bad_input(run("gate --kernel cache_scalar --contract " + path("wide_recipe.json")),
                   {"recipe.trig_cache: is not a choice of this stage"});
}

TEST_F(DegenerateForms, AGateThatJudgedNothingIsRefused) {
  // cache_scalar does not declare one rounding per output: the one property asked for is skipped
  // for it, and --property runs no fixture.
  // Known only once the properties ran: their progress lines come first, the error line last.
  const run_result r = run("gate --kernel cache_scalar --property rounded_once_within_half_ulp");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string last = r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1);
  EXPECT_EQ(last.rfind("ropecheck: --kernel: ", 0), 0u) << r.output;
  EXPECT_NE(last.find("cache_scalar"), std::string::npos) << r.output;
  EXPECT_NE(last.find("no verdict"), std::string::npos) << r.output;
}

// A saved report that passes having judged nothing, and a bench of no repetitions.
TEST_F(DegenerateForms, ReportsAndBenchmarksOfNothingAreRefused) {
  write_text("empty_pass.json", R"({"report": "gate", "schema_version": 3, "tool_version": "x", "verdict": "pass",
      "profile": "quick", "seed": 1, "contract": {"name": "exact", "statement": ""}, "max_position": null,
      "selected_properties": [], "baseline": null, "shard": null, "kernels": [], "fixtures": []})");
  expect_bad_input(run("report " + path("empty_pass.json")), {"empty_pass.json", "verdict"});
  expect_bad_input(run("report merge " + path("empty_pass.json")), {"empty_pass.json"});
  expect_bad_input(run("gate --kernel cache_scalar --baseline " + path("empty_pass.json")), {"empty_pass.json"});
  const run_result bench = run("bench --repetitions 0");
  if (bench.output.find("unknown subcommand 'bench'") == std::string::npos)  // built without benchmarks
    expect_bad_input(bench, {"--repetitions"});
}

}  // namespace
}  // namespace ropecheck
