// Properties of RoPE frequency scaling (docs/scaling.md), on the 266-bit reference and on the
// fast side's own θ'_j and A:
//   factor 1 is unscaled; linear by s at position s·m equals unscaled at m; llama3 is continuous
//   at both wavelength thresholds (Lipschitz in L0/λ) and monotone in λ; YaRN is linear past
//   `high` and unscaled up to `low`; every scaled rotation has norm A·‖x‖ on the rotary dims and
//   a relative-offset-invariant score; fast θ'_j and A are within 4 ulps of double of the
//   reference (long double evaluation, one rounding: see fast/frequencies.h).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fast/frequencies.h"
#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/scaling.h"
#include "spec/spec_reader.h"

namespace ropecheck {
namespace {

using reference::mp_real;
using nlohmann::json;

const mp_real tight("1e-70");  // 2^-232: what 266-bit evaluation leaves, with room

mp_real rel(const mp_real& a, const mp_real& b) {
  return abs(a - b) / std::max(mp_real(abs(b)), mp_real("1e-300"));
}

rope_spec spec_of(json config) { return parse_spec(config, "property"); }

// Random scaled specs over every type and convention (sequence length fixed in the spec).
rope_spec random_scaled_spec() {
  const int d = 2 * *rc::gen::inRange(2, 65);
  const double base = *rc::gen::element(1e4, 5e5, 1e6, 12345.5);
  const double factor = *rc::gen::element(1.0, 2.0, 4.0, 8.0, 32.0, 40.0, 2.5);
  const int l0 = *rc::gen::element(2048, 4096, 8192, 32768);
  const std::string type =
      *rc::gen::element<std::string>("linear", "ntk", "dynamic", "yarn", "llama3", "longrope");
  const std::string convention =
      *rc::gen::element<std::string>("hf", "hf_derived_factor", "vllm", "deepseek", "ggml");
  json c = {{"head_dim", d},
            {"rope_theta", base},
            {"max_position_embeddings", static_cast<int>(l0 * factor)},
            {"scaling_convention", convention},
            {"sequence_length", *rc::gen::inRange(1, 4 * l0 * 8)},
            {"pairing", *rc::gen::element<std::string>("half", "adjacent")}};
  json rs = {{"rope_type", type}};
  if (type != "longrope") rs["factor"] = factor;
  if (type == "yarn" || type == "llama3") rs["original_max_position_embeddings"] = l0;
  if (type == "yarn") {
    if (*rc::gen::arbitrary<bool>()) {
      rs["mscale"] = *rc::gen::element(0.707, 1.0);
      rs["mscale_all_dim"] = *rc::gen::element(0.0, 1.0);
    }
    rs["truncate"] = *rc::gen::arbitrary<bool>();
    rs["beta_fast"] = *rc::gen::element(32.0, 16.0);
  }
  if (type == "longrope") {
    c["original_max_position_embeddings"] = l0;
    json lf = json::array(), sf = json::array();
    for (int i = 0; i < d / 2; ++i) {
      lf.push_back(1.0 + 0.37 * i);
      sf.push_back(1.0 + 0.01 * i);
    }
    rs["long_factor"] = lf;
    rs["short_factor"] = sf;
  }
  c["rope_scaling"] = rs;
  return spec_of(c);
}

std::vector<mp_real> plain(const rope_spec& s) {
  std::vector<mp_real> t;
  for (int i = 0; i < s.rotary_dim / 2; ++i) t.push_back(pow(mp_real(s.base), mp_real(-2 * i) / s.rotary_dim));
  return t;
}

std::vector<mp_real> random_vector(int n) {
  std::vector<mp_real> x;
  for (int i = 0; i < n; ++i) x.push_back(mp_real(*rc::gen::inRange(-1000, 1001)) / 64);
  return x;
}

mp_real rotary_norm(const std::vector<mp_real>& x, int d) {
  mp_real n = 0;
  for (int c = 0; c < d; ++c) n += x[c] * x[c];
  return sqrt(n);
}

RC_GTEST_PROP(scaling_properties, factor_one_is_unscaled, ()) {
  const int d = 2 * *rc::gen::inRange(2, 65);
  const double base = *rc::gen::element(1e4, 5e5, 1e6);
  const std::string type = *rc::gen::element<std::string>("linear", "ntk", "dynamic", "yarn", "llama3");
  const auto s = spec_of({{"head_dim", d}, {"rope_theta", base}, {"max_position_embeddings", 4096},
                          {"sequence_length", 1000},
                          {"rope_scaling", {{"rope_type", type}, {"factor", 1.0}}}});
  const auto r = reference::scaled_frequencies<mp_real>(s, 0);
  const auto t = plain(s);
  RC_ASSERT(r.attention_factor == 1);
  for (int i = 0; i < d / 2; ++i) RC_ASSERT(rel(r.inverse_frequencies[i], t[i]) < tight);
  const auto f = fast::scaled_frequencies(s, 0);
  RC_ASSERT(f.attention_factor == 1.0);
}

RC_GTEST_PROP(scaling_properties, linear_at_s_times_m_is_unscaled_at_m, ()) {
  const int d = 2 * *rc::gen::inRange(2, 33);
  const int factor = *rc::gen::element(2, 4, 8, 32);
  const std::int64_t m = *rc::gen::inRange<std::int64_t>(-(1 << 24), 1 << 24);
  json c = {{"head_dim", d}, {"rope_theta", 1e4}};
  const auto unscaled = reference::params_from_spec<mp_real>(spec_of(c));
  c["rope_scaling"] = {{"type", "linear"}, {"factor", factor}};
  const auto scaled = reference::params_from_spec<mp_real>(spec_of(c));
  const auto x = random_vector(d);
  const auto a = reference::rope_elementwise<mp_real>(x, m * factor, scaled);
  const auto b = reference::rope_elementwise<mp_real>(x, m, unscaled);
  for (int k = 0; k < d; ++k) RC_ASSERT(abs(a[k] - b[k]) < mp_real("1e-60"));
}

// llama3: ratio(λ) = θ'/θ is 1 below L0/hf, 1/s above L0/lf, linear in L0/λ between — so it is
// continuous at both thresholds iff |Δratio| <= |Δ(L0/λ)|·(1 − 1/s)/(hf − lf) between neighbours.
RC_GTEST_PROP(scaling_properties, llama3_continuous_and_monotone_in_wavelength, ()) {
  const int d = 2 * *rc::gen::inRange(64, 1025);  // dense wavelengths: many per band
  const double factor = *rc::gen::element(8.0, 32.0, 2.0);
  const double lf = *rc::gen::element(1.0, 2.0), hf = lf + *rc::gen::element(3.0, 0.5);
  const auto s = spec_of({{"head_dim", d}, {"rope_theta", 500000.0},
                          {"rope_scaling", {{"rope_type", "llama3"}, {"factor", factor},
                                            {"low_freq_factor", lf}, {"high_freq_factor", hf},
                                            {"original_max_position_embeddings", 8192}}}});
  const auto r = reference::scaled_frequencies<mp_real>(s, 0);
  const auto t = plain(s);
  const auto f = fast::scaled_frequencies(s, 0);
  const mp_real two_pi = 2 * boost::math::constants::pi<mp_real>();
  const mp_real lipschitz = (1 - 1 / mp_real(factor)) / (mp_real(hf) - lf);
  for (int i = 0; i + 1 < d / 2; ++i) {
    const mp_real x0 = 8192 / (two_pi / t[i]), x1 = 8192 / (two_pi / t[i + 1]);
    const mp_real r0 = r.inverse_frequencies[i] / t[i], r1 = r.inverse_frequencies[i + 1] / t[i + 1];
    RC_ASSERT(abs(r1 - r0) <= abs(x1 - x0) * lipschitz * (1 + tight) + tight);
    // Monotone: a longer wavelength never gets a higher frequency, in both tiers.
    RC_ASSERT(r.inverse_frequencies[i + 1] < r.inverse_frequencies[i]);
    RC_ASSERT(f.inverse_frequencies[i + 1] < f.inverse_frequencies[i]);
  }
}

// YaRN with ext = 1: ramp 0 (i <= low) keeps θ_i, ramp 1 (i >= high) gives θ_i/s.
RC_GTEST_PROP(scaling_properties, yarn_is_linear_interpolated_and_unscaled_extrapolated, ()) {
  const int d = 2 * *rc::gen::inRange(8, 129);
  const double base = *rc::gen::element(1e4, 1e6, 5e5);
  const double factor = *rc::gen::element(4.0, 40.0, 16.0);
  const int l0 = *rc::gen::element(4096, 32768, 2048);
  const auto s = spec_of({{"head_dim", d}, {"rope_theta", base},
                          {"rope_scaling", {{"type", "yarn"}, {"factor", factor},
                                            {"original_max_position_embeddings", l0}}}});
  const auto r = reference::scaled_frequencies<mp_real>(s, 0);
  const auto t = plain(s);
  // The correction range, from the formula (HF truncate = true).
  auto corr = [&](double beta) {
    return d * std::log(l0 / (2 * M_PI * beta)) / (2 * std::log(base));
  };
  const double low = std::max(std::floor(corr(32)), 0.0);
  const double high = std::min(std::ceil(corr(1)), d - 1.0);
  for (int i = 0; i < d / 2; ++i) {
    if (i <= low) RC_ASSERT(rel(r.inverse_frequencies[i], t[i]) < tight);
    if (i >= high) RC_ASSERT(rel(r.inverse_frequencies[i], t[i] / mp_real(factor)) < tight);
  }
  RC_ASSERT(rel(r.attention_factor, mp_real("0.1") * log(mp_real(factor)) + 1) < tight);
}

RC_GTEST_PROP(scaling_properties, scaled_rotation_has_norm_a_and_offset_invariant_score, ()) {
  const rope_spec s = random_scaled_spec();
  const auto p = reference::params_from_spec<mp_real>(s);
  const std::int64_t m = *rc::gen::inRange<std::int64_t>(-(1 << 30), 1 << 30);
  const std::int64_t n = *rc::gen::inRange<std::int64_t>(-(1 << 30), 1 << 30);
  const std::int64_t shift = *rc::gen::inRange<std::int64_t>(-(1 << 30), 1 << 30);
  const auto q = random_vector(s.head_dim), k = random_vector(s.head_dim);
  const auto fq = reference::rope_elementwise<mp_real>(q, m, p);
  const mp_real before = rotary_norm(q, s.rotary_dim);
  if (before > 0)
    RC_ASSERT(rel(rotary_norm(fq, s.rotary_dim), p.attention_factor * before) < tight);
  auto dot = [](const std::vector<mp_real>& a, const std::vector<mp_real>& b) {
    mp_real sum = 0;
    for (std::size_t c = 0; c < a.size(); ++c) sum += a[c] * b[c];
    return sum;
  };
  const mp_real score = dot(fq, reference::rope_elementwise<mp_real>(k, n, p));
  const mp_real shifted = dot(reference::rope_complex<mp_real>(q, m + shift, p),
                              reference::rope_complex<mp_real>(k, n + shift, p));
  const mp_real g = reference::attention_score<mp_real>(q, k, m - n, p);
  const mp_real scale = dot(q, q) + dot(k, k) + 1;
  RC_ASSERT(abs(score - shifted) / scale < tight);
  RC_ASSERT(abs(score - g) / scale < tight);
}

// One ulp of double at |x| (x normal): the unit the fast-vs-reference bound is stated in.
double ulp(double x) {
  const double a = std::fabs(x);
  return std::nextafter(a, INFINITY) - a;
}

// The stated bound: fast θ'_j and A within 4 ulps of the reference's (rounded to double).
constexpr double fast_ulps = 4;

::testing::AssertionResult fast_agrees(const rope_spec& s, std::int64_t length) {
  const auto r = reference::scaled_frequencies<mp_real>(s, length);
  const auto f = fast::scaled_frequencies(s, length);
  if (f.inverse_frequencies.size() != r.inverse_frequencies.size())
    return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < f.inverse_frequencies.size(); ++i) {
    const double exact = r.inverse_frequencies[i].convert_to<double>();
    if (!(std::fabs(f.inverse_frequencies[i] - exact) <= fast_ulps * ulp(exact)))
      return ::testing::AssertionFailure()
             << "theta_" << i << ": fast " << f.inverse_frequencies[i] << " reference " << exact;
  }
  const double a = r.attention_factor.convert_to<double>();
  if (!(std::fabs(f.attention_factor - a) <= fast_ulps * ulp(a)))
    return ::testing::AssertionFailure() << "A: fast " << f.attention_factor << " reference " << a;
  return ::testing::AssertionSuccess();
}

RC_GTEST_PROP(scaling_properties, fast_frequencies_within_4_ulps_of_reference, ()) {
  const rope_spec s = random_scaled_spec();
  RC_ASSERT(fast_agrees(s, 0));
}

TEST(scaling_properties, real_configs_fast_agrees_in_every_convention_and_regime) {
  const std::string dir = ROPECHECK_SHARED_DIR "/model-configs/";
  std::vector<json> configs;
  for (const char* file : {"Llama-3.1-8B.json", "Llama-3.2-1B.json", "DeepSeek-V3.json",
                           "Phi-3.5-mini-instruct.json", "Qwen2.5-7B-Instruct.json"}) {
    std::ifstream in(dir + file);
    json c = json::parse(in);
    if (c.contains("_documented_yarn_rope_scaling"))
      c["rope_scaling"] = c["_documented_yarn_rope_scaling"]["rope_scaling"];
    configs.push_back(c);
  }
  for (json c : configs) {
    for (const char* convention : {"hf", "hf_derived_factor", "vllm", "deepseek", "ggml"}) {
      c["scaling_convention"] = convention;
      const rope_spec s = parse_spec(c, "config");
      for (std::int64_t length : {1, 4096, 4097, 4098, 8192, 32769, 131072})
        EXPECT_TRUE(fast_agrees(s, length)) << c.dump().substr(0, 120) << " " << convention << " "
                                            << length;
    }
  }
}

// Published numbers: Phi-3.5's A = sqrt(1 + ln 32 / ln 4096) = sqrt(17/12); Qwen2.5's YaRN
// A = 0.1·ln 4 + 1; DeepSeek-V3's A = g(40, 1)/g(40, 1) = 1; and the LongRoPE regime switch at
// L0 = 4096: Hugging Face uses long factors from sequence length 4097 on, vLLM from 4098 on
// (a position > 4096).
TEST(scaling_properties, real_config_attention_factors_and_regimes) {
  const std::string dir = ROPECHECK_SHARED_DIR "/model-configs/";
  json phi = json::parse(std::ifstream(dir + "Phi-3.5-mini-instruct.json"));
  const rope_spec p = parse_spec(phi, "phi");
  EXPECT_LT(rel(reference::scaled_frequencies<mp_real>(p, 5000).attention_factor,
                sqrt(mp_real(17) / 12)),
            tight);
  const auto theta = plain(p);
  auto factor_used = [&](const rope_spec& s, std::int64_t length) {
    return (theta[47] / reference::scaled_frequencies<mp_real>(s, length).inverse_frequencies[47])
        .convert_to<double>();
  };
  EXPECT_NEAR(factor_used(p, 4096), p.scaling.short_factor[47], 1e-12);
  EXPECT_NEAR(factor_used(p, 4097), p.scaling.long_factor[47], 1e-12);
  phi["scaling_convention"] = "vllm";
  const rope_spec pv = parse_spec(phi, "phi");
  EXPECT_NEAR(factor_used(pv, 4097), p.scaling.short_factor[47], 1e-12);
  EXPECT_NEAR(factor_used(pv, 4098), p.scaling.long_factor[47], 1e-12);

  json qwen = json::parse(std::ifstream(dir + "Qwen2.5-7B-Instruct.json"));
  qwen["rope_scaling"] = qwen["_documented_yarn_rope_scaling"]["rope_scaling"];
  EXPECT_LT(rel(reference::scaled_frequencies<mp_real>(parse_spec(qwen, "q"), 0).attention_factor,
                mp_real("0.1") * log(mp_real(4)) + 1),
            tight);
  // Newer Hugging Face derives s = max_position_embeddings / L0 = 32768/32768 = 1: no scaling.
  qwen["scaling_convention"] = "hf_derived_factor";
  const rope_spec qd = parse_spec(qwen, "q");
  const auto qr = reference::scaled_frequencies<mp_real>(qd, 0);
  EXPECT_EQ(qr.attention_factor, 1);
  const auto qt = plain(qd);
  for (std::size_t i = 0; i < qt.size(); ++i) EXPECT_LT(rel(qr.inverse_frequencies[i], qt[i]), tight);

  const rope_spec ds = read_spec(dir + "DeepSeek-V3.json");
  EXPECT_EQ(reference::scaled_frequencies<mp_real>(ds, 0).attention_factor, 1);

  // Llama 3.1 (base 500000, d 128, L0 8192, lf 1, hf 4): wavelengths below 2048 are kept,
  // above 8192 divided by 8 — dims 0..28 kept (λ_28 ≈ 1956.5 < 2048), 35.. divided
  // (λ_35 ≈ 8218.7 > 8192), 29..34 in the smooth band.
  const rope_spec l31 = read_spec(dir + "Llama-3.1-8B.json");
  const auto lr = reference::scaled_frequencies<mp_real>(l31, 0);
  const auto lt = plain(l31);
  for (int i = 0; i <= 28; ++i) EXPECT_LT(rel(lr.inverse_frequencies[i], lt[i]), tight) << i;
  for (int i = 35; i < 64; ++i) EXPECT_LT(rel(lr.inverse_frequencies[i], lt[i] / 8), tight) << i;
  for (int i = 29; i <= 34; ++i) {
    EXPECT_LT(lr.inverse_frequencies[i], lt[i]) << i;
    EXPECT_GT(lr.inverse_frequencies[i], lt[i] / 8) << i;
  }
}

}  // namespace
}  // namespace ropecheck
