// Properties of RoPE frequency scaling (docs/scaling.md), on the 266-bit reference and on the
// fast side's own θ'_j and A, run by the suite's runner (fixed default seed, ROPECHECK_PROFILE,
// RC_PARAMS, failures with the message, seed and replay line: gtest_support.h):
//   factor 1 is unscaled; linear by s at position s·m equals unscaled at m; llama3 is continuous
//   at both wavelength thresholds (Lipschitz in L0/λ) and monotone in λ; YaRN is linear past
//   `high` and unscaled up to `low`; every scaled rotation has norm A·‖x‖ on the rotary dims and
//   a relative-offset-invariant score — each to 2^-200 relative (error_bounds.h §11); fast θ'_j
//   and A are within 4 ulps of double of the reference (long double evaluation, one rounding:
//   see fast/frequencies.h; the property itself is frequency_properties.h, which the gate also
//   runs on mutants). Scaled specs come from scaling_cases.h, as in the kernel properties.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fast/frequencies.h"
#include "fixtures/fixture_data.h"
#include "properties/frequency_properties.h"
#include "properties/gtest_support.h"
#include "properties/reference_cases.h"
#include "properties/scaling_cases.h"
#include "reference/rope_forms.h"
#include "reference/scaling.h"
#include "spec/spec_reader.h"

namespace ropecheck::properties {
namespace {

using namespace reference_support;
using nlohmann::json;

const std::vector<pairing> both_pairings{pairing::half_split, pairing::adjacent};

// |a − b| / |b| (|b| = 0: |a − b|).
mp_real relative(const mp_real& a, const mp_real& b) {
  return b == 0 ? mp_real(abs(a)) : mp_real(abs(a - b) / abs(b));
}

rope_spec spec_of(const json& config) { return parse_spec(config, "property"); }

json plain_config(const rope_shape& s) {
  return {{"head_dim", s.head_dim}, {"rotary_dim", s.rotary_dim}, {"rope_theta", s.base},
          {"pairing", std::string(to_string(s.pair))}};
}

// θ_i = b^(−2i/d), computed here rather than taken from reference/ (an independent statement).
std::vector<mp_real> plain(const rope_spec& s) {
  std::vector<mp_real> t;
  for (int i = 0; i < s.rotary_dim / 2; ++i)
    t.push_back(pow(mp_real(s.base), mp_real(-2 * i) / s.rotary_dim));
  return t;
}

mp_real rotary_norm(const std::vector<mp_real>& x, int d) {
  return norm(std::span<const mp_real>(x.data(), static_cast<std::size_t>(d)));
}

mp_real dot(const std::vector<mp_real>& a, const std::vector<mp_real>& b) {
  mp_real sum = 0;
  for (std::size_t c = 0; c < a.size(); ++c) sum += a[c] * b[c];
  return sum;
}

std::string show(const mp_real& v) { return v.str(20); }

TEST(scaling_properties, factor_one_is_unscaled) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, 256);
        std::vector<std::string> types{"linear", "yarn", "llama3", "ntk", "dynamic"};
        if (s.rotary_dim == 2) types.resize(3);  // NTK's b·s^(d/(d−2)) needs d > 2
        const auto type = *gen::element_of(types);
        json config = plain_config(s);
        config["max_position_embeddings"] = 4096;
        config["sequence_length"] = 1000;
        config["rope_scaling"] = {{"rope_type", type}, {"factor", 1.0}};
        const rope_spec spec = spec_of(config);
        const auto r = reference::scaled_frequencies<mp_real>(spec, 0);
        if (r.attention_factor != 1)
          RC_FAIL(type + " with factor 1: reference A = " + show(r.attention_factor) + ", not 1");
        const auto t = plain(spec);
        for (std::size_t i = 0; i < t.size(); ++i)
          require_close(relative(r.inverse_frequencies[i], t[i]), seen,
                        type + " with factor 1: theta'_" + std::to_string(i) + " vs theta_" +
                            std::to_string(i));
        const auto f = fast::scaled_frequencies(spec, 0);
        if (f.attention_factor != 1.0)
          RC_FAIL(type + " with factor 1: fast A = " + std::to_string(f.attention_factor) + ", not 1");
      },
      60, seen);
}

TEST(scaling_properties, linear_at_s_times_m_is_unscaled_at_m) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, 128);
        const auto factor = *gen::element_of<std::int64_t>({2, 4, 8, 32});
        const std::int64_t m = *gen::int_toward_zero(-(std::int64_t{1} << 24), std::int64_t{1} << 24);
        json config = plain_config(s);
        const auto unscaled = reference::params_from_spec<mp_real>(spec_of(config));
        config["rope_scaling"] = {{"type", "linear"}, {"factor", factor}};
        const auto scaled = reference::params_from_spec<mp_real>(spec_of(config));
        const auto x = pick_vector(s, m);
        const auto a = reference::rope_elementwise<mp_real>(x, m * factor, scaled);
        const auto b = reference::rope_elementwise<mp_real>(x, m, unscaled);
        require_close(distance(a, b, norm(x)), seen,
                      "linear(" + std::to_string(factor) + ") at s·m vs unscaled at m = " +
                          std::to_string(m));
      },
      60, seen);
}

// llama3: ratio(λ) = θ'/θ is 1 below L0/hf, 1/s above L0/lf, linear in L0/λ between — so it is
// continuous at both thresholds iff |Δratio| <= |Δ(L0/λ)|·(1 − 1/s)/(hf − lf) between neighbours
// (equality inside the band: the ratio recorded is |Δratio| over that Lipschitz bound).
TEST(scaling_properties, llama3_continuous_and_monotone_in_wavelength) {
  observation seen;
  testing::check_property(
      [&] {
        const int d = 2 * static_cast<int>(*gen::uniform_int(64, 1024));  // dense wavelengths
        const double factor = *gen::element_of<double>({8.0, 32.0, 2.0});
        const double lf = *gen::element_of<double>({1.0, 2.0});
        const double hf = lf + *gen::element_of<double>({3.0, 0.5});
        const auto s = spec_of({{"head_dim", d}, {"rope_theta", 500000.0},
                                {"rope_scaling", {{"rope_type", "llama3"}, {"factor", factor},
                                                  {"low_freq_factor", lf}, {"high_freq_factor", hf},
                                                  {"original_max_position_embeddings", 8192}}}});
        const auto r = reference::scaled_frequencies<mp_real>(s, 0);
        const auto t = plain(s);
        const auto f = fast::scaled_frequencies(s, 0);
        const mp_real two_pi = 2 * acos(mp_real(-1));
        const mp_real lipschitz = (1 - 1 / mp_real(factor)) / (mp_real(hf) - lf);
        for (int i = 0; i + 1 < d / 2; ++i) {
          const mp_real x0 = 8192 / (two_pi / t[i]), x1 = 8192 / (two_pi / t[i + 1]);
          const mp_real r0 = r.inverse_frequencies[i] / t[i], r1 = r.inverse_frequencies[i + 1] / t[i + 1];
          const mp_real allowed = abs(x1 - x0) * lipschitz * (1 + tolerance()) + tolerance();
          const mp_real jump = abs(r1 - r0);
          seen.record((jump / allowed).convert_to<double>(), [&] { return "pairs " + std::to_string(i); });
          if (!(jump <= allowed))
            RC_FAIL("llama3 theta'/theta jumps by " + show(jump) + " between pairs " +
                    std::to_string(i) + " and " + std::to_string(i + 1) +
                    ", more than the Lipschitz bound " + show(allowed));
          // Monotone: a longer wavelength never gets a higher frequency, in both tiers.
          if (!(r.inverse_frequencies[i + 1] < r.inverse_frequencies[i]))
            RC_FAIL("reference llama3 theta' not decreasing at pair " + std::to_string(i));
          if (!(f.inverse_frequencies[static_cast<std::size_t>(i) + 1] <
                f.inverse_frequencies[static_cast<std::size_t>(i)]))
            RC_FAIL("fast llama3 theta' not decreasing at pair " + std::to_string(i));
        }
      },
      20, seen);
}

// YaRN with ext = 1: ramp 0 (i <= low) keeps θ_i, ramp 1 (i >= high) gives θ_i/s, and
// A = 0.1·ln s + 1.
TEST(scaling_properties, yarn_is_linear_interpolated_and_unscaled_extrapolated) {
  observation seen;
  testing::check_property(
      [&] {
        const int d = 2 * static_cast<int>(*gen::uniform_int(8, 128));
        const double base = *gen::element_of<double>({1e4, 1e6, 5e5});
        const double factor = *gen::element_of<double>({4.0, 40.0, 16.0});
        const int l0 = static_cast<int>(*gen::element_of<std::int64_t>({4096, 32768, 2048}));
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
          if (i <= low)
            require_close(relative(r.inverse_frequencies[i], t[i]), seen,
                          "yarn theta'_" + std::to_string(i) + " (i <= low) vs theta_i");
          if (i >= high)
            require_close(relative(r.inverse_frequencies[i], t[i] / mp_real(factor)), seen,
                          "yarn theta'_" + std::to_string(i) + " (i >= high) vs theta_i/s");
        }
        require_close(relative(r.attention_factor, mp_real("0.1") * log(mp_real(factor)) + 1), seen,
                      "yarn A vs 0.1·ln s + 1");
      },
      60, seen);
}

TEST(scaling_properties, scaled_rotation_has_norm_a_and_offset_invariant_score) {
  observation seen;
  testing::check_property(
      [&] {
        const auto shape = *gen::shape(both_pairings, 128);
        const rope_spec s = (*gen::scaled_spec(shape)).spec;
        const auto p = reference::params_from_spec<mp_real>(s);
        const auto m = pick_position(shape, std::int64_t{1} << 30);
        const auto n = pick_position(shape, std::int64_t{1} << 30);
        const std::int64_t shift =
            *gen::int_toward_zero(-(std::int64_t{1} << 30), std::int64_t{1} << 30);
        const auto q = pick_vector(shape, m), k = pick_vector(shape, n);
        const auto fq = reference::rope_elementwise<mp_real>(q, m, p);
        const mp_real before = rotary_norm(q, s.rotary_dim);
        if (before > 0)
          require_close(relative(rotary_norm(fq, s.rotary_dim), p.attention_factor * before), seen,
                        "‖f(q, m)‖ on the rotary dims vs A·‖q‖");
        // The score carries A² on the rotary dims, 1 on the pass-through ones.
        const mp_real scale = std::max(mp_real(1), mp_real(p.attention_factor * p.attention_factor)) *
                              norm(q) * norm(k);
        if (scale == 0) return;
        const mp_real score = dot(fq, reference::rope_elementwise<mp_real>(k, n, p));
        const mp_real shifted = dot(reference::rope_complex<mp_real>(q, m + shift, p),
                                    reference::rope_complex<mp_real>(k, n + shift, p));
        const mp_real g = reference::attention_score<mp_real>(q, k, m - n, p);
        require_close(abs(score - shifted) / scale, seen, "⟨f(q,m), f(k,n)⟩ vs ⟨f(q,m+s), f(k,n+s)⟩");
        require_close(abs(score - g) / scale, seen, "⟨f(q,m), f(k,n)⟩ vs g(q, k, m − n)");
      },
      60, seen);
}

// The property of a frequency-scaling implementation (frequency_properties.h), on fast's.
TEST(scaling_properties, fast_frequencies_within_4_ulps_of_reference) {
  const property_result r = check_scaled_frequencies(
      fast::scaled_frequencies, profile_from_environment(), seed_from_environment(),
      testing::replay_command_for_current_test());
  testing::report(r, "scaling_properties/fast_frequencies_within_4_ulps_of_reference");
}

// Every golden configuration (the model configs' "_golden" entries: Llama 3.1/3.2, Qwen2.5's
// documented YaRN, DeepSeek-V3, Phi-3.5's two regimes, the unscaled ones), in every convention.
TEST(scaling_properties, real_configs_fast_agrees_in_every_convention_and_regime) {
  int scaled = 0;
  for (const golden::golden_config& golden : fixtures::golden_configs()) {
    json c = golden.json;
    c.erase("sequence_length");  // the loop's lengths below, not the golden file's one
    scaled += type_of(golden.spec.scaling) != scaling_type::none;
    for (const char* convention : {"hf", "hf_derived_factor", "vllm", "deepseek", "ggml"}) {
      c["scaling_convention"] = convention;
      const rope_spec s = parse_spec(c, golden.config);
      for (std::int64_t length : {1, 4096, 4097, 4098, 8192, 32769, 131072}) {
        std::string beyond;
        scaled_frequencies_distance_in_ulps(fast::scaled_frequencies, s, length, beyond);
        EXPECT_TRUE(beyond.empty()) << golden.name << " " << convention << " " << length << ": " << beyond;
      }
    }
  }
  EXPECT_GE(scaled, 6);  // the five scaled configs above, Phi-3.5 in both regimes
}

// Published numbers: Phi-3.5's A = sqrt(1 + ln 32 / ln 4096) = sqrt(17/12); Qwen2.5's YaRN
// A = 0.1·ln 4 + 1; DeepSeek-V3's A = g(40, 1)/g(40, 1) = 1; and the LongRoPE regime switch at
// L0 = 4096: Hugging Face uses long factors from sequence length 4097 on, vLLM from 4098 on
// (a position > 4096).
TEST(scaling_properties, real_config_attention_factors_and_regimes) {
  const std::string dir = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";
  json phi = json::parse(std::ifstream(dir + "Phi-3.5-mini-instruct.json"));
  const rope_spec p = parse_spec(phi, "phi");
  EXPECT_LE(relative(reference::scaled_frequencies<mp_real>(p, 5000).attention_factor,
                     sqrt(mp_real(17) / 12)),
            tolerance());
  const auto theta = plain(p);
  auto factor_used = [&](const rope_spec& s, std::int64_t length) {
    return (theta[47] / reference::scaled_frequencies<mp_real>(s, length).inverse_frequencies[47])
        .convert_to<double>();
  };
  EXPECT_NEAR(factor_used(p, 4096), std::get<longrope_scaling>(p.scaling).short_factor[47], 1e-12);
  EXPECT_NEAR(factor_used(p, 4097), std::get<longrope_scaling>(p.scaling).long_factor[47], 1e-12);
  phi["scaling_convention"] = "vllm";
  const rope_spec pv = parse_spec(phi, "phi");
  EXPECT_NEAR(factor_used(pv, 4097), std::get<longrope_scaling>(p.scaling).short_factor[47], 1e-12);
  EXPECT_NEAR(factor_used(pv, 4098), std::get<longrope_scaling>(p.scaling).long_factor[47], 1e-12);

  json qwen = json::parse(std::ifstream(dir + "Qwen2.5-7B-Instruct.json"));
  qwen["rope_scaling"] = qwen["_documented_yarn_rope_scaling"]["rope_scaling"];
  EXPECT_LE(relative(reference::scaled_frequencies<mp_real>(parse_spec(qwen, "q"), 0).attention_factor,
                     mp_real("0.1") * log(mp_real(4)) + 1),
            tolerance());
  // Newer Hugging Face derives s = max_position_embeddings / L0 = 32768/32768 = 1: no scaling.
  qwen["scaling_convention"] = "hf_derived_factor";
  const rope_spec qd = parse_spec(qwen, "q");
  const auto qr = reference::scaled_frequencies<mp_real>(qd, 0);
  EXPECT_EQ(qr.attention_factor, 1);
  const auto qt = plain(qd);
  for (std::size_t i = 0; i < qt.size(); ++i)
    EXPECT_LE(relative(qr.inverse_frequencies[i], qt[i]), tolerance());

  const rope_spec ds = read_spec(dir + "DeepSeek-V3.json");
  EXPECT_EQ(reference::scaled_frequencies<mp_real>(ds, 0).attention_factor, 1);

  // Llama 3.1 (base 500000, d 128, L0 8192, lf 1, hf 4): wavelengths below 2048 are kept,
  // above 8192 divided by 8 — dims 0..28 kept (λ_28 ≈ 1956.5 < 2048), 35.. divided
  // (λ_35 ≈ 8218.7 > 8192), 29..34 in the smooth band.
  const rope_spec l31 = read_spec(dir + "Llama-3.1-8B.json");
  const auto lr = reference::scaled_frequencies<mp_real>(l31, 0);
  const auto lt = plain(l31);
  for (int i = 0; i <= 28; ++i) EXPECT_LE(relative(lr.inverse_frequencies[i], lt[i]), tolerance()) << i;
  for (int i = 35; i < 64; ++i)
    EXPECT_LE(relative(lr.inverse_frequencies[i], lt[i] / 8), tolerance()) << i;
  for (int i = 29; i <= 34; ++i) {
    EXPECT_LT(lr.inverse_frequencies[i], lt[i]) << i;
    EXPECT_GT(lr.inverse_frequencies[i], lt[i] / 8) << i;
  }
}

// Phi-3.5 with L0 moved from the top level into rope_scaling: the reader resolves s = 131072 /
// 4096 = 32 either way, so A is the same published sqrt(1 + ln 32 / ln 4096) = sqrt(17/12) on
// both tiers (the spec once carried two flags for where L0 was, and both tiers branched on them).
// A ratio that is not a power of two (L0 3000) keeps the reference's s exact: A from the
// reader's (max_position_embeddings, L0) pair equals A computed here from 131072/3000 at 266 bits.
TEST(scaling_properties, longrope_factor_is_the_same_wherever_l0_is_written) {
  const std::string dir = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";
  const json phi = json::parse(std::ifstream(dir + "Phi-3.5-mini-instruct.json"));
  json inside = phi;
  inside["rope_scaling"]["original_max_position_embeddings"] = inside["original_max_position_embeddings"];
  inside.erase("original_max_position_embeddings");
  for (const json& c : {phi, inside}) {
    const rope_spec s = parse_spec(c, "phi");
    EXPECT_LE(relative(reference::scaled_frequencies<mp_real>(s, 5000).attention_factor,
                       sqrt(mp_real(17) / 12)),
              tolerance());
    EXPECT_NEAR(fast::scaled_frequencies(s, 5000).attention_factor,
                std::sqrt(17.0 / 12), 4 * 0x1p-53 * std::sqrt(17.0 / 12));
  }
  inside["rope_scaling"]["original_max_position_embeddings"] = 3000;
  const rope_spec odd = parse_spec(inside, "phi");
  const mp_real s = mp_real(131072) / 3000;
  EXPECT_LE(relative(reference::scaled_frequencies<mp_real>(odd, 5000).attention_factor,
                     sqrt(1 + log(s) / log(mp_real(3000)))),
            tolerance());
}

}  // namespace
}  // namespace ropecheck::properties

namespace ropecheck::properties {
namespace {

// Gemma 4's proportional RoPE (transformers _compute_proportional_rope_parameters): over the
// whole head d, θ'_i = b^(−2i/d)/s for i < floor(p·d/2) and exactly 0 beyond (those pairs pass
// through). The θ_i here are computed independently (plain()); fast agrees within 4 ulps.
TEST(scaling_properties, proportional_rotates_the_first_pairs_of_the_whole_head) {
  const rope_spec s = parse_spec(json::parse(R"({"head_dim": 64, "rope_parameters": {
      "rope_type": "proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.25,
      "factor": 2.0}})"), "proportional");
  ASSERT_EQ(s.rotary_dim, 64);
  ASSERT_EQ(std::get<proportional_scaling>(s.scaling).rotated_pairs, 8);
  const auto r = reference::scaled_frequencies<mp_real>(s, 1);
  const auto theta = plain(s);
  ASSERT_EQ(r.inverse_frequencies.size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) {
    if (i < 8) EXPECT_LE(relative(r.inverse_frequencies[i], theta[i] / 2), tolerance()) << i;
    else EXPECT_EQ(r.inverse_frequencies[i], 0) << i;
  }
  EXPECT_EQ(r.attention_factor, 1);
  std::string beyond;
  scaled_frequencies_distance_in_ulps(fast::scaled_frequencies, s, 1, beyond);
  EXPECT_TRUE(beyond.empty()) << beyond;
  EXPECT_EQ(fast::scaled_frequencies(s, 1).inverse_frequencies[8], 0.0);
}

// Llama 4 sets low_freq_factor = high_freq_factor: the smoothing band is empty.
// Wavelengths below L0/hf keep θ_i, the others are θ_i/s; no NaN, and fast agrees.
TEST(scaling_properties, llama3_with_equal_band_factors_has_an_empty_band) {
  const rope_spec s = parse_spec(json::parse(R"({"head_dim": 128, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
      "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}})"), "llama4");
  const auto r = reference::scaled_frequencies<mp_real>(s, 1);
  const auto theta = plain(s);
  const mp_real two_pi = 2 * acos(mp_real(-1));
  int kept = 0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const bool high = two_pi / theta[i] < 8192;
    kept += high;
    EXPECT_LE(relative(r.inverse_frequencies[i], high ? theta[i] : theta[i] / 16), tolerance()) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 64);
  std::string beyond;
  scaled_frequencies_distance_in_ulps(fast::scaled_frequencies, s, 1, beyond);
  EXPECT_TRUE(beyond.empty()) << beyond;
}

}  // namespace
}  // namespace ropecheck::properties
