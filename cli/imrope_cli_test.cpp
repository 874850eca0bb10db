// ggml's four-stream interleaved M-RoPE end to end (spec "stream_layout": "mrope_interleaved_4"):
// apply, reference and audit take [4, tokens] positions; a three-stream positions file for it is
// exit 2 naming the file and its shape; llama.cpp's output (e = 0) passes the audit under the
// four-stream spec and fails under transformers' three-stream one, the cause named
// `stream_layout`. Head 16 with sections [4, 2, 2]: pairs 0, 3, 6 temporal, 1, 4 height, 2, 5
// width, and pair 7 (≡ 1, not below 3·2) the fourth stream e.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"
#include "io/tensor.h"

namespace ropecheck {
namespace {

class ImropeCliTest : public testing::scratch_dir_test {
 protected:
  testing::run_result run(const std::string& args) const { return testing::run_ropecheck(args); }

  void SetUp() override {
    scratch_dir_test::SetUp();
    std::vector<double> x(5 * 2 * 16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * static_cast<double>(i % 13) - 1.5;
    write_npy(path("x.npy"), from_float64(x, {5, 2, 16}, dtype::float32));
    // Two text tokens, then a 2 × 2 image at t = 2 (llama.cpp: e = 0 for every token).
    const std::vector<double> t = {0, 1, 2, 2, 2}, h = {0, 1, 2, 2, 3}, w = {0, 1, 2, 3, 2};
    std::vector<double> four = t, three = t;
    for (const auto* s : {&h, &w}) {
      four.insert(four.end(), s->begin(), s->end());
      three.insert(three.end(), s->begin(), s->end());
    }
    four.insert(four.end(), 5, 0.0);
    write_npy(path("pos4.npy"), from_float64(four, {4, 5}, dtype::int64));
    write_npy(path("pos3.npy"), from_float64(three, {3, 5}, dtype::int64));
    const std::string sections =
        R"("head_dim": 16, "rope_scaling": {"rope_type": "default", "mrope_section": [4, 2, 2], "mrope_interleaved": true})";
    write_text("ggml.json", "{" + sections + R"(, "stream_layout": "mrope_interleaved_4"})");
    write_text("transformers.json", "{" + sections + "}");
  }
};

TEST_F(ImropeCliTest, FourPositionStreamsEndToEnd) {
  const auto applied = run("apply --kernel on_the_fly_simd --spec " + path("ggml.json") + " --x " + path("x.npy") +
                           " --pos " + path("pos4.npy") + " --out " + path("y.npy"));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  const auto referenced = run("reference --spec " + path("ggml.json") + " --x " + path("x.npy") + " --pos " +
                              path("pos4.npy") + " --out " + path("ref.npy"));
  ASSERT_EQ(referenced.exit_code, 0) << referenced.output;
  const auto pass = run("audit --spec " + path("ggml.json") + " --x " + path("x.npy") + " --pos " + path("pos4.npy") +
                        " --y " + path("y.npy"));
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  const auto reference_pass = run("audit --spec " + path("ggml.json") + " --x " + path("x.npy") + " --pos " +
                                  path("pos4.npy") + " --y " + path("ref.npy"));
  EXPECT_EQ(reference_pass.exit_code, 0) << reference_pass.output;

  // transformers' layout: pair 7 at t where llama.cpp left it unrotated.
  const auto fail = run("audit --spec " + path("transformers.json") + " --x " + path("x.npy") + " --pos " +
                        path("pos3.npy") + " --y " + path("y.npy") + " --json " + path("fail.json"));
  EXPECT_EQ(fail.exit_code, 1) << fail.output;
  const auto report = nlohmann::json::parse(testing::file_text(path("fail.json")));
  ASSERT_FALSE(report.at("diagnosis").empty()) << report.dump();
  EXPECT_EQ(report.at("diagnosis").at(0).at("code"), "stream_layout") << report.dump();

  // Three streams for the four-stream spec: bad input naming the file and its shape.
  for (const std::string command : {"reference", "apply --kernel on_the_fly_simd", "audit"}) {
    const std::string out = command == "audit" ? " --y " + path("y.npy") + " --json " + path("out.json")
                                               : " --out " + path("out.npy");
    const auto r = run(command + " --spec " + path("ggml.json") + " --x " + path("x.npy") + " --pos " +
                       path("pos3.npy") + out);
    testing::expect_bad_input(r, {path("pos3.npy"), "shape", "[4, tokens]"});
    EXPECT_FALSE(std::filesystem::exists(path("out.npy")) || std::filesystem::exists(path("out.json"))) << command;
  }
}

}  // namespace
}  // namespace ropecheck
