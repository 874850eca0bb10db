// End-to-end tests of the ropecheck executable: the seed 000 worked example through
// `ropecheck reference`, agreement of the three forms, and bad input refused with exit 2,
// a one-line message, and no output file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/cli_test_support.h"
#include "fixtures/fixture_data.h"
#include "io/npy.h"
#include "io/read_tensor.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

using testing::file_text;
using testing::run_result;
const auto run = testing::run_ropecheck;

class CliTest : public testing::scratch_dir_test {
 protected:
  // Seed 000's inputs: xq = arange(160) as (2, 5, 2, 8), positions 0…4 per token.
  void write_seed000_inputs() const {
    std::vector<double> xq(160);
    for (int i = 0; i < 160; ++i) xq[i] = i;
    write_npy(path("xq.npy"), from_float64(xq, {2, 5, 2, 8}, dtype::float32));
    const std::vector<double> positions = {0, 1, 2, 3, 4};
    write_npy(path("pos.npy"), from_float64(positions, {5}, dtype::int64));
    write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0, "pairing": "adjacent"})");
  }

  // `command` (reference, apply --kernel K or audit) on seed 000's X with `spec` and `pos`,
  // writing to out.npy (audit: judging X itself as Y, report out.json).
  testing::run_result run_on_seed000(const std::string& command, const std::string& spec,
                                     const std::string& pos = "pos.npy") const {
    const std::string out = command == "audit" ? " --y " + path("xq.npy") + " --json " + path("out.json")
                                               : " --out " + path("out.npy");
    return run(command + " --spec " + path(spec) + " --x " + path("xq.npy") + " --pos " + path(pos) + out);
  }
};

TEST_F(CliTest, VersionAndHelp) {
  EXPECT_EQ(run("--version").exit_code, 0);
  const auto help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("reference"), std::string::npos);
  EXPECT_EQ(run("").exit_code, 2);  // a subcommand is required
  EXPECT_EQ(run("no-such-command").exit_code, 2);
}

TEST_F(CliTest, ReferenceReproducesTheSeed000WorkedExample) {
  write_seed000_inputs();
  const auto r = run("reference --spec " + path("spec.json") + " --x " + path("xq.npy") +
                     " --pos " + path("pos.npy") + " --out " + path("y.npy") + " --form complex");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const tensor y = read_tensor(path("y.npy"), std::nullopt, std::nullopt);
  ASSERT_EQ(y.type, dtype::float64);
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{2, 5, 2, 8}));
  const auto values = y.values<double>();

  int compared = 0;
  for (const auto& v : fixtures::read_seed000()) {
    if (v.tensor != "xq_out" || v.printed.empty()) continue;
    EXPECT_NEAR(values[((v.b * 5 + v.t) * 2 + v.h) * 8 + v.d], std::stod(v.printed), 1.5e-4)
        << "xq_out(" << v.b << "," << v.t << "," << v.h << "," << v.d << ")";
    ++compared;
  }
  EXPECT_EQ(compared, 157);
}

TEST_F(CliTest, AllFormsWriteTheSameDoubles) {
  write_seed000_inputs();
  std::map<std::string, tensor> outputs;
  for (const char* form : {"elementwise", "complex", "matrix"}) {
    const auto r = run("reference --spec " + path("spec.json") + " --x " + path("xq.npy") +
                       " --pos " + path("pos.npy") + " --out " + path(std::string(form) + ".npy") +
                       " --form " + form);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    outputs[form] = read_tensor(path(std::string(form) + ".npy"), std::nullopt, std::nullopt);
  }
  EXPECT_EQ(outputs["elementwise"], outputs["complex"]);
  EXPECT_EQ(outputs["elementwise"], outputs["matrix"]);

  const auto r = run("reference --spec " + path("spec.json") + " --x " + path("xq.npy") +
                     " --pos " + path("pos.npy") + " --out " + path("y32.npy") +
                     " --out-dtype float32");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_tensor(path("y32.npy"), std::nullopt, std::nullopt).type, dtype::float32);
}

TEST_F(CliTest, BadInputExitsTwoWithOneLineAndNoOutput) {
  write_seed000_inputs();
  write_text("odd.json", R"({"head_dim": 8, "rotary_dim": 7})");
  write_text("wide.json", R"({"head_dim": 16})");
  write_text("broken.json", R"({"head_dim": )");
  write_text("not.npy", "this is not a numpy file");
  std::vector<double> nan_x(160, 1.0);
  nan_x[37] = std::nan("");
  write_npy(path("nan.npy"), from_float64(nan_x, {2, 5, 2, 8}, dtype::float32));
  write_npy(path("pos3.npy"), from_float64(std::vector<double>{0, 1, 2}, {3}, dtype::int64));
  write_npy(path("fpos.npy"), from_float64(std::vector<double>{0, 1, 2, 3, 4}, {5}, dtype::float32));

  struct bad_case {
    std::string spec, x, pos, extra, expected_in_message;
  };
  for (const auto& c : std::vector<bad_case>{
           {"missing.json", "xq.npy", "pos.npy", "", "missing.json"},
           {"odd.json", "xq.npy", "pos.npy", "", "'rotary_dim': 7"},
           {"broken.json", "xq.npy", "pos.npy", "", "broken.json: JSON: invalid JSON"},
           {"wide.json", "xq.npy", "pos.npy", "", "xq.npy: shape"},
           {"spec.json", "not.npy", "pos.npy", "", "not.npy"},
           {"spec.json", "nan.npy", "pos.npy", "", "nan.npy: element [0, 2, 0, 5]"},
           {"spec.json", "xq.npy", "pos3.npy", "", "pos3.npy: shape"},
           {"spec.json", "xq.npy", "fpos.npy", "", "fpos.npy: dtype"},
           {"spec.json", "xq.npy", "pos.npy", "--form polar", "--form"},
       }) {
    const auto r = run("reference --spec " + path(c.spec) + " --x " + path(c.x) + " --pos " +
                       path(c.pos) + " --out " + path("out.npy") + " " + c.extra);
    EXPECT_EQ(r.exit_code, 2) << c.expected_in_message << ": " << r.output;
    EXPECT_NE(r.output.find(c.expected_in_message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("out.npy"))) << c.expected_in_message;
    if (c.extra.empty()) {
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
  }
}

// Positions the spec does not allow (core/rope_inputs.h, docs/spec.md "Positions"): each is exit 2
// from every command that takes positions, with one line naming the positions file, the
// element and the value, and no output file.
TEST_F(CliTest, PositionsTheSpecDoesNotAllowExitTwo) {
  write_seed000_inputs();  // X (2, 5, 2, 8); spec head_dim 8, unscaled
  write_text("seq.json", R"({"head_dim": 8, "pairing": "adjacent", "sequence_length": 4})");
  write_text("dynamic.json", R"({"head_dim": 8, "max_position_embeddings": 2048,
                                 "rope_scaling": {"type": "dynamic", "factor": 2.0}})");
  const auto positions = [&](const std::string& name, std::vector<double> p, dtype type) {
    write_npy(path(name), from_float64(p, {5}, type));
  };
  positions("int64_past.npy", {0, 1, 2, 2147483648.0, 4}, dtype::int64);
  positions("int64_below.npy", {0, 1, -2147483648.0, 3, 4}, dtype::int64);
  positions("int32_min.npy", {0, -2147483648.0, 2, 3, 4}, dtype::int32);
  positions("negative.npy", {0, 1, 2, -3, 4}, dtype::int64);
  write_npy(path("batched.npy"),
            from_float64(std::vector<double>{0, 1, 2, 3, 4, 0, 1, 2, 3, 3000000000.0}, {2, 5}, dtype::int64));

  struct bad_case {
    std::string command, spec, pos, expected;  // expected: the start of the one line
  };
  std::vector<bad_case> cases;
  for (const std::string command : {"reference", "apply --kernel on_the_fly_simd", "audit"}) {
    // Outside |m| <= 2^31 - 1, where the reference's precision is derived and tested.
    cases.push_back({command, "spec.json", "int64_past.npy", "int64_past.npy: element [3]: position outside |m| <= 2^31 - 1"});
    cases.push_back({command, "spec.json", "int64_below.npy", "int64_below.npy: element [2]: position outside |m| <= 2^31 - 1"});
    cases.push_back({command, "spec.json", "int32_min.npy", "int32_min.npy: element [1]: position outside"});
    cases.push_back({command, "spec.json", "batched.npy", "batched.npy: element [1, 4]: position outside"});
    // At or past the sequence_length the spec declares.
    cases.push_back({command, "seq.json", "pos.npy", "pos.npy: element [4]: position at or past the spec's sequence_length 4 '4'"});
    // Negative where the scaling's regime is a function of positions 0 ... L - 1.
    cases.push_back({command, "dynamic.json", "negative.npy", "negative.npy: element [3]: negative position, but rope_scaling \"dynamic\""});
  }
  // A cache kernel's table has rows for positions 0 and up (a large sparse one is served: fast/sparse_cache_test).
  cases.push_back({"apply --kernel cache_simd", "spec.json", "negative.npy", "negative.npy: element [3]: negative position: kernel cache_simd's cos/sin cache"});

  for (const auto& c : cases) {
    const auto r = run_on_seed000(c.command, c.spec, c.pos);
    EXPECT_EQ(r.exit_code, 2) << c.command << " " << c.pos << ": " << r.output;
    EXPECT_NE(r.output.find(path(c.expected)), std::string::npos) << c.command << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_FALSE(fs::exists(path("out.npy")) || fs::exists(path("out.json"))) << c.command << " " << c.pos;
  }
  // The edges themselves are allowed: |m| = 2^31 - 1, and negative positions when unscaled.
  positions("edges.npy", {0, 2147483647.0, -2147483647.0, -3, 4}, dtype::int64);
  const auto edges = run("reference --spec " + path("spec.json") + " --x " + path("xq.npy") + " --pos " +
                         path("edges.npy") + " --out " + path("out.npy"));
  EXPECT_EQ(edges.exit_code, 0) << edges.output;
}

// A config with one RoPE setup per layer type needs --layer-type (exit 2 listing
// the choices, no output); with it, the chosen setup is used. The current rope_parameters
// spelling gives the same output, bit for bit, as the older rope_theta + rope_scaling one.
TEST_F(CliTest, LayerTypeChoosesOneSetupAndRopeParametersReadAsRopeScaling) {
  write_seed000_inputs();  // spec.json: head_dim 8, rope_theta 10000, adjacent
  write_text("layers.json", R"({"head_dim": 8, "pairing": "adjacent", "rope_parameters": {
      "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
      "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})");
  for (const std::string command : {"reference", "apply --kernel on_the_fly_simd", "audit"}) {
    const auto r = run_on_seed000(command, "layers.json");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
    EXPECT_NE(r.output.find(path("layers.json") + ": field 'rope_parameters': holds one RoPE setup "
                            "per layer type (full_attention, sliding_attention); choose one with "
                            "--layer-type NAME"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_FALSE(fs::exists(path("out.npy")) || fs::exists(path("out.json"))) << command;
  }
  const auto reference = [&](const std::string& spec, const std::string& extra, const std::string& out) {
    return run("reference --spec " + path(spec) + " --x " + path("xq.npy") + " --pos " +
               path("pos.npy") + " --out " + path(out) + extra);
  };
  ASSERT_EQ(reference("spec.json", "", "plain.npy").exit_code, 0);
  const auto sliding = reference("layers.json", " --layer-type sliding_attention", "sliding.npy");
  ASSERT_EQ(sliding.exit_code, 0) << sliding.output;
  EXPECT_EQ(file_text(path("sliding.npy")), file_text(path("plain.npy")));
  ASSERT_EQ(reference("layers.json", " --layer-type full_attention", "full.npy").exit_code, 0);
  EXPECT_NE(file_text(path("full.npy")), file_text(path("plain.npy")));

  // The issue's Llama 3.1 example (head_dim 8 here) at position 100000, in both spellings.
  write_npy(path("far.npy"), from_float64(std::vector<double>{0, 1, 4096, 8192, 100000}, {5}, dtype::int64));
  write_text("current.json", R"({"head_dim": 8, "max_position_embeddings": 131072, "rope_parameters":
      {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
  write_text("older.json", R"({"head_dim": 8, "max_position_embeddings": 131072, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
  write_text("unscaled.json", R"({"head_dim": 8})");
  for (const char* spec : {"current.json", "older.json", "unscaled.json"})
    ASSERT_EQ(run("reference --spec " + path(spec) + " --x " + path("xq.npy") + " --pos " +
                  path("far.npy") + " --out " + path(std::string(spec) + ".npy")).exit_code, 0);
  EXPECT_EQ(file_text(path("current.json.npy")), file_text(path("older.json.npy")));
  EXPECT_NE(file_text(path("current.json.npy")), file_text(path("unscaled.json.npy")));
}

// Layers that apply no RoPE. A Llama 4 NoPE layer (every 4th layer when the config
// has no no_rope_layers: transformers Llama4TextConfig) or a Cohere2 full-attention layer
// (modeling_cohere2.py rotates only sliding-window layers) is exit 2 naming the field, with no
// output; a RoPE layer reads the config's one RoPE setup, the same bytes as the plain spec.
TEST_F(CliTest, LayersWithoutRopeAreRefusedAndRopeLayersRead) {
  write_seed000_inputs();  // spec.json: head_dim 8, rope_theta 10000, adjacent
  write_text("llama4.json", R"({"model_type": "llama4_text", "head_dim": 8, "rope_theta": 10000.0,
      "num_hidden_layers": 8})");
  write_text("cohere2.json", R"({"model_type": "cohere2", "head_dim": 8, "rope_theta": 10000.0,
      "layer_types": ["sliding_attention", "full_attention"]})");
  const auto on = [&](const std::string& command, const std::string& spec, const std::string& extra) {
    const std::string out = command == "audit" ? " --y " + path("xq.npy") + " --json " + path("out.json")
                                               : " --out " + path("out.npy");
    return run(command + " --spec " + path(spec) + " --x " + path("xq.npy") + " --pos " + path("pos.npy") +
               out + extra);
  };
  struct refused {
    std::string spec, flags, message;
  };
  const std::vector<refused> cases = {
      {"llama4.json", " --layer 3",
       ": field 'layer': 3 is a layer that applies no RoPE: (3 + 1) % no_rope_layer_interval 4 == 0 "
       "(nothing to check)"},
      {"llama4.json", " --layer 8", ": field 'layer': 8 is past the model's last layer 7 (8 layers)"},
      {"llama4.json", " --layer x1", "--layer"},
      {"llama4.json", " --layer=-1", "--layer"},
      {"spec.json", " --layer 0", ": field 'layer': 0 cannot be checked: the config gives no num_hidden_layers"},
      {"cohere2.json", " --layer-type full_attention",
       ": field 'layer_type': \"full_attention\" is a layer type that applies no RoPE in this model"},
      {"cohere2.json", " --layer 1", "layer_types[1] = \"full_attention\""},
  };
  for (const std::string command : {"reference", "apply --kernel on_the_fly_simd", "audit"})
    for (const refused& c : cases) {
      const auto r = on(command, c.spec, c.flags);
      EXPECT_EQ(r.exit_code, 2) << command << c.flags << ": " << r.output;
      EXPECT_NE(r.output.find(c.message), std::string::npos) << command << c.flags << ": " << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
      EXPECT_FALSE(fs::exists(path("out.npy")) || fs::exists(path("out.json"))) << command << c.flags;
    }
  const auto reference = [&](const std::string& spec, const std::string& extra, const std::string& out) {
    return run("reference --spec " + path(spec) + " --x " + path("xq.npy") + " --pos " + path("pos.npy") +
               " --out " + path(out) + extra);
  };
  ASSERT_EQ(reference("spec.json", "", "plain.npy").exit_code, 0);
  for (const auto& [spec, flags] : std::vector<std::pair<std::string, std::string>>{
           {"llama4.json", " --layer 2"}, {"llama4.json", ""}, {"cohere2.json", ""},
           {"cohere2.json", " --layer-type sliding_attention"}, {"cohere2.json", " --layer 0"}}) {
    const auto r = reference(spec, flags, "layer.npy");
    ASSERT_EQ(r.exit_code, 0) << spec << flags << ": " << r.output;
    EXPECT_EQ(file_text(path("layer.npy")), file_text(path("plain.npy"))) << spec << flags;
  }
}

// M-RoPE: reference, apply and audit take [3, tokens] and [3, batch, tokens]
// positions; one stream for an M-RoPE spec is refused naming the file and its shape; text tokens
// (three equal streams) give 1-D RoPE; apply's output passes the audit at its own streams and
// fails it at others (a 1-D rotation of image tokens is caught).
TEST_F(CliTest, MRopeTakesThreePositionStreams) {
  write_seed000_inputs();
  write_text("mrope.json", R"({"head_dim": 8, "pairing": "adjacent",
    "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]}})");
  for (const std::string command : {"reference", "apply --kernel on_the_fly_simd", "audit"}) {
    const auto r = run_on_seed000(command, "mrope.json");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
    EXPECT_NE(r.output.find(path("pos.npy") + ": shape: is not [3, tokens] or [3, batch, tokens]"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(path("out.npy")) || fs::exists(path("out.json"))) << command;
  }
  const std::vector<double> text = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4};
  write_npy(path("text.npy"), from_float64(text, {3, 5}, dtype::int64));
  ASSERT_EQ(run_on_seed000("reference", "mrope.json", "text.npy").exit_code, 0);
  const tensor streams_y = read_tensor(path("out.npy"), std::nullopt, std::nullopt);
  const auto streams_values = streams_y.values<double>();
  const std::vector<double> one_d(streams_values.begin(), streams_values.end());
  ASSERT_EQ(run_on_seed000("reference", "spec.json").exit_code, 0);
  const tensor flat_y = read_tensor(path("out.npy"), std::nullopt, std::nullopt);
  const auto flat_values = flat_y.values<double>();
  EXPECT_EQ(one_d, std::vector<double>(flat_values.begin(), flat_values.end()));

  // An image after text: (t, h, w) differ per token; batched [3, 2, 5] as well.
  const std::vector<double> image = {0, 1, 2, 2, 2, 0, 1, 2, 2, 3, 0, 1, 2, 3, 2};
  write_npy(path("image.npy"), from_float64(image, {3, 5}, dtype::int64));
  std::vector<double> batched;
  for (int s = 0; s < 3; ++s)
    for (int b = 0; b < 2; ++b)
      for (int t = 0; t < 5; ++t) batched.push_back(image[static_cast<std::size_t>(s * 5 + t)] + b);
  write_npy(path("batched.npy"), from_float64(batched, {3, 2, 5}, dtype::int64));
  for (const char* pos : {"image.npy", "batched.npy"}) {
    const auto applied = run("apply --kernel on_the_fly_simd --spec " + path("mrope.json") + " --x " +
                             path("xq.npy") + " --pos " + path(pos) + " --out " + path("y.npy"));
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    const auto pass = run("audit --spec " + path("mrope.json") + " --x " + path("xq.npy") + " --pos " +
                          path(pos) + " --y " + path("y.npy"));
    EXPECT_EQ(pass.exit_code, 0) << pos << ": " << pass.output;
    const auto fail = run("audit --spec " + path("mrope.json") + " --x " + path("xq.npy") + " --pos " +
                          path("text.npy") + " --y " + path("y.npy"));
    EXPECT_EQ(fail.exit_code, 1) << pos << ": " << fail.output;
  }
}

TEST_F(CliTest, ApplyRunsEveryKernelOnTheSeed000Example) {
  write_seed000_inputs();
  const auto kernels = run("kernels --json");
  ASSERT_EQ(kernels.exit_code, 0);
  const auto listed = nlohmann::json::parse(kernels.output);
  ASSERT_TRUE(listed.is_array());
  ASSERT_EQ(listed.size(), 6u);  // the four float32 kernels and the one-rounding pair
  for (const auto& k : listed) {
    EXPECT_TRUE(k.at("name").is_string() && k.at("description").is_string());
    EXPECT_TRUE(k.at("strategy") == "cache" || k.at("strategy") == "on_the_fly");
    // Every storage dtype of numeric/dtype.h's catalog (numeric_dtype_lists_test pins the catalog).
    EXPECT_EQ(k.at("dtypes"), nlohmann::json(dtype_names(storage_dtypes)));
    EXPECT_EQ(k.at("pairings"), nlohmann::json({"half", "adjacent"}));
  }
  ASSERT_EQ(run("reference --spec " + path("spec.json") + " --x " + path("xq.npy") + " --pos " +
                path("pos.npy") + " --out " + path("ref.npy")).exit_code, 0);
  const tensor reference_output = read_tensor(path("ref.npy"));
  const auto expected = reference_output.values<double>();
  for (const char* kernel : {"cache_simd", "on_the_fly_simd", "cache_scalar", "on_the_fly_scalar",
                             "precise_simd", "precise_scalar"}) {
    const auto r = run(std::string("apply --kernel ") + kernel + " --spec " + path("spec.json") +
                       " --x " + path("xq.npy") + " --pos " + path("pos.npy") + " --out " +
                       path("y.npy"));
    ASSERT_EQ(r.exit_code, 0) << kernel << ": " << r.output;
    const tensor y = read_tensor(path("y.npy"));
    ASSERT_EQ(y.type, dtype::float32);
    const auto values = y.values<float>();
    // Pairs here have norm <= 225: 2.5·2^-24·225 < 4e-5 (the kernels' documented bound).
    for (std::size_t i = 0; i < values.size(); ++i)
      ASSERT_NEAR(values[i], expected[i], 4e-5) << kernel << " element " << i;
  }
  const auto unknown = run("apply --kernel no_such_kernel --spec " + path("spec.json") + " --x " +
                           path("xq.npy") + " --pos " + path("pos.npy") + " --out " + path("z.npy"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("no_such_kernel"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("z.npy")));
  const auto wide = run("apply --kernel cache_simd --spec " + path("spec.json") + " --x " +
                        path("ref.npy") + " --pos " + path("pos.npy") + " --out " + path("z.npy"));
  EXPECT_EQ(wide.exit_code, 2);
  EXPECT_NE(wide.output.find("ref.npy: dtype"), std::string::npos) << wide.output;
}

TEST_F(CliTest, GatePassesOnABuiltInKernelWithByteIdenticalJson) {
  const std::string gate = "gate --kernel cache_simd --seed 7 ";
  const auto first = run(gate + "--json " + path("a.json") + " --junit " + path("a.xml"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("gate: PASS"), std::string::npos);
  EXPECT_NE(first.output.find("seed000_worked_example/cache_simd/float32"), std::string::npos);
  ASSERT_EQ(run(gate + "--json " + path("b.json")).exit_code, 0);
  const std::string json = file_text(path("a.json"));
  EXPECT_EQ(json, file_text(path("b.json")));
  for (const char* field : {"\"verdict\": \"pass\"", "\"kernels\"", "\"worst_over_bound\"",
                            "\"cases\"", "\"fixtures\""})
    EXPECT_NE(json.find(field), std::string::npos) << field;
  EXPECT_NE(file_text(path("a.xml")).find("<testsuites"), std::string::npos);

  // `report` renders the saved JSON again, identically.
  const auto again = run("report " + path("a.json") + " --json " + path("c.json"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(file_text(path("c.json")), json);

  // A baseline whose worst/bound ratios were 10x smaller makes the same run a regression.
  std::string tighter = json;
  const std::string key = "\"worst_over_bound\": 0.";
  for (std::size_t at = 0; (at = tighter.find(key, at)) != std::string::npos; at += key.size())
    tighter.insert(at + key.size(), "0");  // 0.762 -> 0.0762
  write_text("baseline.json", tighter);
  const auto regressed = run(gate + "--baseline " + path("baseline.json"));
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  EXPECT_NE(regressed.output.find("baseline/cache_simd/"), std::string::npos);
}

TEST_F(CliTest, GateAndReportRefuseBadInput) {
  const auto unknown = run("gate --kernel no_such_kernel");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("no_such_kernel"), std::string::npos);
  EXPECT_EQ(run("gate --profile slow").exit_code, 2);
  write_text("bad.json", R"({"report": "gate", "verdict": "maybe"})");
  const auto bad = run("report " + path("bad.json"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("bad.json"), std::string::npos) << bad.output;
  EXPECT_EQ(run("report " + path("missing.json")).exit_code, 2);
  EXPECT_EQ(run("gate --kernel cache_simd --baseline " + path("missing.json")).exit_code, 2);
}

}  // namespace
}  // namespace ropecheck
