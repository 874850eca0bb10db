// `ropecheck audit --layer-type` on a config with one RoPE setup per layer type (Gemma 3's
// spelling: rope_local_base_freq for the sliding-window layers, rope_theta and a linear factor
// for the global ones): a sliding layer's dump made with the global layer's setup is named
// config_mismatch first, with both layer types and their setups — the CLI hands the audit the
// config's other setups. Y by an independent float32 simulation written here (Hugging Face's
// float32 path), never by ropecheck.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"
#include "io/tensor.h"

namespace ropecheck {
namespace {

class AuditLayerType : public testing::scratch_dir_test {};

TEST_F(AuditLayerType, ASlidingLayerGivenTheGlobalSetupIsNamedWithBothLayerTypes) {
  write_text("gemma3.json", R"({"model_type": "gemma3_text", "head_dim": 64, "rope_theta": 1000000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "rope_local_base_freq": 10000.0,
      "sliding_window": 512, "sliding_window_pattern": 6, "max_position_embeddings": 32768})");
  constexpr int d = 64, heads = 2;
  std::vector<std::int64_t> positions;
  for (std::int64_t m = 0; m < 8192; m += 37) positions.push_back(m);
  const auto rows = static_cast<std::int64_t>(positions.size());
  std::vector<double> x(static_cast<std::size_t>(rows * heads * d)), y(x.size());
  std::mt19937_64 rng(6);
  std::normal_distribution<double> normal;
  for (double& v : x) v = static_cast<float>(normal(rng));
  for (std::int64_t r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h)
      for (int j = 0; j < d / 2; ++j) {
        // The global layers' θ_j: 1 / 1e6^(2j/d) / 8, in float32.
        const float inv = 1.0f / std::pow(1000000.0f, static_cast<float>(2 * j) / static_cast<float>(d)) / 8.0f;
        const float angle = static_cast<float>(positions[static_cast<std::size_t>(r)]) * inv;
        const float c = std::cos(angle), s = std::sin(angle);
        const std::size_t o = static_cast<std::size_t>((r * heads + h) * d);
        const float xa = static_cast<float>(x[o + j]), xb = static_cast<float>(x[o + j + d / 2]);
        const float pa = xa * c, qa = -xb * s, pb = xb * c, qb = xa * s;
        y[o + j] = pa + qa;
        y[o + j + d / 2] = pb + qb;
      }
  write_npy(path("x.npy"), from_float64(x, {rows, heads, d}, dtype::float32));
  write_npy(path("y.npy"), from_float64(y, {rows, heads, d}, dtype::float32));
  std::vector<double> p(positions.begin(), positions.end());
  write_npy(path("pos.npy"), from_float64(p, {rows}, dtype::int64));
  const auto r = testing::run_ropecheck("audit --spec " + path("gemma3.json") +
                                        " --layer-type sliding_attention --x " + path("x.npy") + " --pos " +
                                        path("pos.npy") + " --y " + path("y.npy") + " --json " + path("a.json"));
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const auto report = nlohmann::json::parse(testing::file_text(path("a.json")));
  ASSERT_FALSE(report["diagnosis"].empty()) << report.dump();
  const auto& first = report["diagnosis"][0];
  EXPECT_EQ(first["code"], "config_mismatch") << report["diagnosis"].dump();
  const std::string message = first["message"];
  EXPECT_EQ(message.find("Y matches layer_type = full_attention"), 0u) << message;
  EXPECT_NE(message.find("the spec says sliding_attention"), std::string::npos) << message;
}

}  // namespace
}  // namespace ropecheck
