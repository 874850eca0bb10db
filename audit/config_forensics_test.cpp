// Config mistakes named by the audit: dumps made here by an independent simulation of Hugging
// Face's float32 recipe (inv_freq = 1 / base^(arange(0, d, 2)/d) with powf, the scaling applied
// to it in float32, float32 positions, angle and cosf/sinf, x·cos + rotate_half(x)·sin in
// float32) from a config the kernel's config code read wrong — the scaling dropped, another
// factor, a sliding-window layer given the global layer's setup, dynamic NTK's base computed
// once at its longest context, YaRN's attention factor or its `truncate: false` ignored,
// LongRoPE's other factor table, an M-RoPE kernel's default base. Nothing from audit/ or reference/ makes Y. The audit must name
// config_mismatch first, with the field, the value Y matches and the value the spec says, and the
// recipe refitted under the config Y matches is the float32 recipe that made it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "audit/audit.h"
#include "audit/config_neighbours.h"
#include "io/tensor.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

constexpr int heads = 2;

// θ_j as the kernel's config code made them, in float32: Hugging Face's powf expression, then
// `scale` (the scaling the kernel applied) on each, in float32.
std::vector<float> float32_inv_freq(double base, int d, const std::function<float(float)>& scale) {
  std::vector<float> inv;
  for (int j = 0; j < d / 2; ++j) {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(d);
    inv.push_back(scale(1.0f / std::pow(static_cast<float>(base), exponent)));
  }
  return inv;
}
float unscaled(float t) { return t; }

// Y by Hugging Face's float32 path, half-split pairs, at every position (cos and sin × the
// attention factor in float32, as its rotary embedding does); X standard normal in float32.
// `spec` is what the audit is told.
audit_input dump(const rope_spec& spec, const std::vector<float>& inv, const std::vector<std::int64_t>& positions,
                 float attention_factor = 1) {
  audit_input in;
  in.spec = spec;
  const int d = spec.head_dim;
  const auto rows = static_cast<std::int64_t>(positions.size());
  std::vector<double> x(static_cast<std::size_t>(rows * heads * d)), y(x.size());
  std::mt19937_64 rng(29);
  std::normal_distribution<double> normal;
  for (double& v : x) v = static_cast<float>(normal(rng));
  for (std::int64_t r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h)
      for (int j = 0; j < d / 2; ++j) {
        const std::size_t o = static_cast<std::size_t>((r * heads + h) * d);
        const float angle = static_cast<float>(positions[static_cast<std::size_t>(r)]) * inv[static_cast<std::size_t>(j)];
        const float c = std::cos(angle) * attention_factor, s = std::sin(angle) * attention_factor;
        const float xa = static_cast<float>(x[o + j]), xb = static_cast<float>(x[o + j + d / 2]);
        const float pa = xa * c, qa = -xb * s, pb = xb * c, qb = xa * s;
        y[o + j] = pa + qa;
        y[o + j + d / 2] = pb + qb;
      }
  in.x = from_float64(x, {rows, heads, d}, dtype::float32);
  in.y = from_float64(y, {rows, heads, d}, dtype::float32);
  in.positions = positions;
  in.tokens_per_sequence = rows;
  in.heads = heads;
  in.judged = dtype::float32;
  return in;
}

std::vector<std::int64_t> to(std::int64_t last, std::int64_t step) {
  std::vector<std::int64_t> p;
  for (std::int64_t m = 0; m <= last; m += step) p.push_back(m);
  return p;
}

rope_spec spec_of(const char* json, const std::string& layer_type = "") {
  return parse_spec(nlohmann::json::parse(json), "config.json", spec_options{layer_type});
}

std::string codes(const reports::audit_report& r) {
  std::string s;
  for (const auto& f : r.diagnosis) s += "\n  " + f.code + ": " + f.message + " [" + f.evidence + "]";
  return s;
}

// The first cause is config_mismatch, naming the field with the value Y matches and the value
// the spec says.
// `reproduced`: the audit's recipe simulation applies a scaling as θ_j × (θ'_j/θ_j) in float32,
// bit for bit Hugging Face's θ_j / s for none and a power-of-two linear factor, but not its
// expressions for YaRN's ramp or LongRoPE's 1/(f_j·base^(2j/d)).
void expect_named_first(const reports::audit_report& r, const std::string& matches, const std::string& says,
                        bool reproduced = true) {
  std::printf("[ audit    ] %s\n", codes(r).c_str());
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "config_mismatch") << codes(r);
  const std::string& m = r.diagnosis.front().message;
  EXPECT_EQ(m.find("Y matches " + matches), 0u) << codes(r);
  EXPECT_NE(m.find("; the spec says " + says), std::string::npos) << codes(r);
  // The recipe is refitted under the config Y matches: Hugging Face's float32 angle and powf θ_j.
  EXPECT_EQ(r.recipe.angle, "float32") << codes(r);
  EXPECT_EQ(r.recipe.inverse_frequencies, "pow float32") << codes(r);
  if (reproduced) {
    EXPECT_GT(r.recipe.bit_exact, 0.9) << codes(r);
  }
}

// Llama 3.1's llama3 scaling computed but not applied: Y has the plain θ_j.
TEST(ConfigForensics, AScalingDroppedIsNamedWithTheField) {
  const rope_spec spec = spec_of(R"({"head_dim": 64, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192}})");
  const auto r = run_audit(dump(spec, float32_inv_freq(500000.0, 64, unscaled), to(32768, 97)));
  expect_named_first(r, "rope_scaling = none", "llama3");
}

// A linear factor of 2 where the config says 4.
TEST(ConfigForensics, AWrongFactorIsNamedWithBothValues) {
  const rope_spec spec = spec_of(R"({"head_dim": 64, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 4.0}})");
  const auto r = run_audit(dump(spec, float32_inv_freq(10000.0, 64, [](float t) { return t / 2.0f; }),
                                to(16384, 53)));
  expect_named_first(r, "rope_scaling.factor = 2", "4");
}

// Gemma 3's two setups (rope_local_base_freq for the sliding-window layers, rope_theta with a
// linear factor 8 for the global ones): a sliding layer given the global setup.
TEST(ConfigForensics, ALayerGivenAnotherLayerTypesSetupIsNamed) {
  const char* config = R"({"model_type": "gemma3_text", "head_dim": 64, "rope_theta": 1000000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "rope_local_base_freq": 10000.0,
      "sliding_window": 512, "sliding_window_pattern": 6})";
  audit_input in = dump(spec_of(config, "sliding_attention"),
                        float32_inv_freq(1000000.0, 64, [](float t) { return t / 8.0f; }), to(8192, 31));
  // The other setups as the CLI reads them from the config file.
  const auto file = std::filesystem::temp_directory_path() / ("ropecheck_gemma3_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << config;
  in.other_layer_types = other_layer_type_specs(file, "sliding_attention", "");
  std::filesystem::remove(file);
  ASSERT_EQ(in.other_layer_types.size(), 1u);
  EXPECT_EQ(in.other_layer_types.front().layer_type, "full_attention");
  EXPECT_TRUE(other_layer_type_specs(file, "", "").empty());  // no layer type chosen: one setup
  const auto r = run_audit(in);
  expect_named_first(r, "layer_type = full_attention", "sliding_attention");
  // Without the config's other setup the audit cannot say which layer's RoPE Y has.
  in.other_layer_types.clear();
  const auto without = run_audit(in);
  ASSERT_FALSE(without.passed);
  for (const auto& f : without.diagnosis) EXPECT_EQ(f.message.find("layer_type ="), std::string::npos) << codes(without);
}

// Dynamic NTK's base computed once at s·L_max (as a static table) where the spec's reference
// computes it at the sequence's length: b' = b·(s·L/L_max − (s − 1))^(d/(d−2)) at L = 8192.
TEST(ConfigForensics, DynamicNtkAtAnotherLengthIsNamed) {
  const rope_spec spec = spec_of(R"({"head_dim": 64, "rope_theta": 10000.0, "max_position_embeddings": 4096,
      "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})");
  const double length = 8192, s = 2, l_max = 4096, d = 64;
  const double base = 10000.0 * std::pow(s * length / l_max - (s - 1), d / (d - 2));
  const auto r = run_audit(dump(spec, float32_inv_freq(base, 64, unscaled), to(20000, 71)));
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "config_mismatch") << codes(r);
  const std::string& m = r.diagnosis.front().message;
  EXPECT_TRUE(m.find("scaling_convention = vllm") != std::string::npos ||
              m.find("sequence_length = 8192") != std::string::npos)
      << codes(r);
}

// YaRN's θ_j as transformers' _compute_yarn_parameters makes them, in float32: the correction
// range from β_fast = 32, β_slow = 1 (floored and ceiled with `truncate`), a linear ramp over it
// between θ_j/s and θ_j.
std::vector<float> yarn_inv_freq(double base, int d, double factor, double original_context, bool truncate) {
  const auto correction_dim = [&](double rotations) {
    return d * std::log(original_context / (rotations * 2 * 3.14159265358979323846)) / (2 * std::log(base));
  };
  double low = correction_dim(32), high = correction_dim(1);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0), high = std::min(high, d - 1.0);
  if (low == high) high += 0.001;
  std::vector<float> inv;
  for (int j = 0; j < d / 2; ++j) {
    const float pos_freq = std::pow(static_cast<float>(base), static_cast<float>(2 * j) / static_cast<float>(d));
    const float extrapolation = 1.0f / pos_freq, interpolation = 1.0f / (static_cast<float>(factor) * pos_freq);
    const float ramp = std::clamp(static_cast<float>((j - low) / (high - low)), 0.0f, 1.0f);
    const float keep = 1.0f - ramp;  // inv_freq_extrapolation_factor
    inv.push_back(interpolation * (1.0f - keep) + extrapolation * keep);
  }
  return inv;
}

constexpr const char* yarn_config = R"({"head_dim": 64, "rope_theta": 10000.0,
    "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}})";

// YaRN's attention factor (mscale: 0.1·ln 8 + 1) ignored: cos/sin left unscaled. A scale of every
// output is magnitude_scale first (the bug model), and the config field it comes from next.
TEST(ConfigForensics, YarnsAttentionFactorIgnoredIsNamedByItsField) {
  const auto r = run_audit(dump(spec_of(yarn_config), yarn_inv_freq(10000.0, 64, 8, 4096, true), to(16384, 53)));
  std::printf("[ audit    ] %s\n", codes(r).c_str());
  ASSERT_GE(r.diagnosis.size(), 2u);
  EXPECT_EQ(r.diagnosis[0].code, "magnitude_scale") << codes(r);
  EXPECT_NE(r.diagnosis[0].message.find("0.827853"), std::string::npos) << codes(r);  // 1 / 1.20794
  EXPECT_EQ(r.diagnosis[1].code, "config_mismatch") << codes(r);
  EXPECT_EQ(r.diagnosis[1].message.find("Y matches attention_factor = 1; the spec says 1.20794"), 0u) << codes(r);
}

// `truncate: false` in the config, ignored by a kernel that floors and ceils the range anyway.
TEST(ConfigForensics, YarnsTruncateIgnoredIsNamed) {
  const rope_spec spec = spec_of(R"({"head_dim": 64, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096,
                       "truncate": false}})");
  const float a = static_cast<float>(0.1 * std::log(8.0) + 1);
  const auto r = run_audit(dump(spec, yarn_inv_freq(10000.0, 64, 8, 4096, true), to(16384, 53), a));
  expect_named_first(r, "rope_scaling.truncate = true", "false", false);
}

// Phi-3.5-mini's LongRoPE: the long factors used on a sequence within the original 4096 (the
// regime chosen by the allocated context, not the sequence's length). θ_j = 1 / (f_j ·
// base^(2j/d)) in float32, A = √(1 + ln 32 / ln 4096), as transformers computes them.
TEST(ConfigForensics, LongRopesOtherFactorTableIsNamed) {
  std::ifstream file(ROPECHECK_SOURCE_DIR "/fixtures/model-configs/Phi-3.5-mini-instruct.json");
  const nlohmann::json config = nlohmann::json::parse(file);
  const rope_spec spec = parse_spec(config, "Phi-3.5-mini-instruct.json");
  const std::vector<double> long_factor = config["rope_scaling"]["long_factor"].get<std::vector<double>>();
  const int d = 96;
  ASSERT_EQ(spec.head_dim, d);
  ASSERT_EQ(long_factor.size(), static_cast<std::size_t>(d / 2));
  std::vector<float> inv;
  for (int j = 0; j < d / 2; ++j)
    inv.push_back(1.0f / (static_cast<float>(long_factor[static_cast<std::size_t>(j)]) *
                          std::pow(10000.0f, static_cast<float>(2 * j) / static_cast<float>(d))));
  const float a = static_cast<float>(std::sqrt(1 + std::log(32.0) / std::log(4096.0)));
  const auto r = run_audit(dump(spec, inv, to(4000, 7), a));
  expect_named_first(r, "rope_scaling.long_factor / short_factor = long_factor", "short_factor", false);
}

// Position streams get the same: M-RoPE (Qwen2-VL's contiguous sections, scaled to 32 pairs)
// whose kernel used the default base 10000 where the config says 1e6. Each pair turns by its
// section's stream position, an image grid after text tokens.
TEST(ConfigForensics, AStreamLayoutsBaseNotReadIsNamed) {
  audit_input in;
  in.spec = spec_of(R"({"head_dim": 64, "rope_theta": 1000000.0,
      "rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]}})");
  std::vector<std::vector<std::int64_t>> streams(3);
  for (std::int64_t m = 0; m < 64; ++m)
    for (auto& s : streams) s.push_back(m);
  for (std::int64_t r = 0; r < 16; ++r)
    for (std::int64_t c = 0; c < 16; ++c) streams[0].push_back(64), streams[1].push_back(64 + r), streams[2].push_back(64 + c);
  const auto rows = static_cast<std::int64_t>(streams[0].size());
  for (const auto& s : streams) in.stream_positions.insert(in.stream_positions.end(), s.begin(), s.end());
  in.positions = streams[0];
  constexpr int d = 64;
  const std::vector<float> inv = float32_inv_freq(10000.0, d, unscaled);
  std::vector<double> x(static_cast<std::size_t>(rows * heads * d)), y(x.size());
  std::mt19937_64 rng(30);
  std::normal_distribution<double> normal;
  for (double& v : x) v = static_cast<float>(normal(rng));
  for (std::int64_t row = 0; row < rows; ++row)
    for (int h = 0; h < heads; ++h)
      for (int j = 0; j < d / 2; ++j) {
        const int stream = j < 8 ? 0 : j < 20 ? 1 : 2;
        const float angle = static_cast<float>(streams[static_cast<std::size_t>(stream)][static_cast<std::size_t>(row)]) *
                            inv[static_cast<std::size_t>(j)];
        const float c = std::cos(angle), s = std::sin(angle);
        const std::size_t o = static_cast<std::size_t>((row * heads + h) * d);
        const float xa = static_cast<float>(x[o + j]), xb = static_cast<float>(x[o + j + d / 2]);
        const float pa = xa * c, qa = -xb * s, pb = xb * c, qb = xa * s;
        y[o + j] = pa + qa;
        y[o + j + d / 2] = pb + qb;
      }
  in.x = from_float64(x, {rows, heads, d}, dtype::float32);
  in.y = from_float64(y, {rows, heads, d}, dtype::float32);
  in.tokens_per_sequence = rows;
  in.heads = heads;
  in.judged = dtype::float32;
  const auto r = run_audit(in);
  std::printf("[ audit    ] %s\n", codes(r).c_str());
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "config_mismatch") << codes(r);
  EXPECT_EQ(r.diagnosis.front().message.find("Y matches rope_theta = 10000; the spec says 1e+06"), 0u) << codes(r);
}

// The neighbours DeepSeek-V3's YaRN config gets: each edit named by its config field, each a
// spec that differs from the audited one in that field.
TEST(ConfigForensics, DeepSeekYarnNeighboursCoverEachField) {
  std::ifstream file(ROPECHECK_SOURCE_DIR "/fixtures/model-configs/DeepSeek-V3.json");
  const rope_spec spec = parse_spec(nlohmann::json::parse(file), "DeepSeek-V3.json");
  const auto neighbours = config_neighbours(spec, 8192, 1.0);
  std::set<std::string> fields;
  for (const auto& n : neighbours) {
    fields.insert(n.field);
    EXPECT_NE(n.value, n.spec_value) << n.field;
    EXPECT_FALSE(n.spec.scaling == spec.scaling && n.spec.base == spec.base &&
                 n.spec.attention_factor == spec.attention_factor && n.spec.rotary_dim == spec.rotary_dim)
        << n.field << " = " << n.value << " edits nothing";
  }
  for (const char* field : {"rope_scaling", "rope_scaling.factor", "rope_scaling.original_max_position_embeddings",
                            "rope_scaling.truncate", "rope_scaling.mscale", "rope_scaling.mscale_all_dim",
                            "scaling_convention", "rope_theta"})
    EXPECT_TRUE(fields.count(field)) << field;
}

// The control: the same recipe from the config read right names no config field.
TEST(ConfigForensics, TheRightConfigNamesNoConfigField) {
  const rope_spec spec = spec_of(R"({"head_dim": 64, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 4.0}})");
  const auto r = run_audit(dump(spec, float32_inv_freq(10000.0, 64, [](float t) { return t / 4.0f; }),
                                to(16384, 53)));
  for (const auto& f : r.diagnosis) EXPECT_NE(f.code, "config_mismatch") << codes(r);
}

}  // namespace
}  // namespace ropecheck::audit
