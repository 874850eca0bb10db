// identify names conventions (audit/identify_conventions.h): dumps simulated here the way the
// real code computes them in float32 (and bfloat16, float16) — ggml's repeated product of
// powf(base, −2/d) and its YaRN, Hugging Face's YaRN (DeepSeek's too), llama3 and LongRoPE
// inverse frequencies as float32 tensor ops, Qwen2-VL's M-RoPE, Pixtral's and Qwen2-VL's vision
// towers, a decode block at 100 000 — written out in this file from those sources, sharing no
// code with identify (the reference only checks a spec identify wrote).
// identify must return the convention as a config writes it: the base snapped to the value
// used, the scaling named with its parameters, the stream layout; and say so when the data
// cannot decide.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <random>

#include "audit/identify.h"
#include "io/io_error.h"
#include "numeric/half.h"
#include "reference/scaling.h"

namespace ropecheck::audit {
namespace {

// A float32 kernel's row: pair j of head vector x turns by angle(j) (float32, as the kernel
// computed it), cos/sin in float32 (cosf/sinf), × A in float32, then x_a·cos − x_b·sin and
// x_b·cos + x_a·sin, each product and the sum rounded to float32 (PyTorch's
// q * cos + rotate_half(q) * sin); `bf16` (`f16`) rounds X, cos, sin and every operation to
// bfloat16 (float16) instead (a 16-bit model's cache and arithmetic).
float bf(float v) { return bfloat16_bits_to_float(float_to_bfloat16_bits(v)); }
float half(float v) { return float16_bits_to_float(float_to_float16_bits(v)); }

struct simulation {
  int head_dim = 64;
  bool adjacent = false;
  bool bf16 = false;
  bool f16 = false;  // as bf16, in float16
  float attention = 1;
  int streams = 1;
  // The float32 angle of pair j at position tuple p (one entry per stream).
  std::function<float(int j, const std::vector<std::int64_t>& p)> angle;
};

identify_input simulate(const simulation& s, const std::vector<std::int64_t>& positions) {
  constexpr std::int64_t heads = 4;
  const auto rows = static_cast<std::int64_t>(positions.size()) / s.streams;
  const int pairs = s.head_dim / 2;
  std::vector<double> x(static_cast<std::size_t>(rows * heads * s.head_dim)), y(x.size());
  std::mt19937_64 rng(29);
  std::normal_distribution<float> normal;
  const auto narrow = [&](float v) { return s.bf16 ? bf(v) : s.f16 ? half(v) : v; };
  for (double& v : x) v = narrow(normal(rng));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<std::int64_t> p;
    for (int k = 0; k < s.streams; ++k) p.push_back(positions[static_cast<std::size_t>(k * rows + r)]);
    for (int j = 0; j < pairs; ++j) {
      const float phi = s.angle(j, p);
      float c = std::cos(phi) * s.attention, sn = std::sin(phi) * s.attention;
      c = narrow(c), sn = narrow(sn);
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::size_t o = static_cast<std::size_t>((r * heads + h) * s.head_dim);
        const std::size_t a = o + (s.adjacent ? 2 * j : j), b = o + (s.adjacent ? 2 * j + 1 : j + pairs);
        const auto xa = static_cast<float>(x[a]), xb = static_cast<float>(x[b]);
        if (s.bf16 || s.f16) {
          y[a] = narrow(narrow(xa * c) - narrow(xb * sn));
          y[b] = narrow(narrow(xb * c) + narrow(xa * sn));
        } else {
          const float p0 = xa * c, p1 = xb * sn, p2 = xb * c, p3 = xa * sn;
          y[a] = p0 - p1;
          y[b] = p2 + p3;
        }
      }
    }
  }
  const dtype t = s.bf16 ? dtype::bfloat16 : s.f16 ? dtype::float16 : dtype::float32;
  identify_input in;
  in.x = from_float64(x, {rows, heads, s.head_dim}, t);
  in.y = from_float64(y, {rows, heads, s.head_dim}, t);
  in.positions = positions;
  in.streams = s.streams;
  in.heads = heads;
  in.judged = t;
  in.x_file = "X.npy", in.y_file = "Y.npy", in.positions_file = "POS.npy";
  return in;
}

// Hugging Face's default inverse frequencies in float32:
// 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)).
std::vector<float> hf_inv_freq(float base, int dim) {
  std::vector<float> f;
  for (int i = 0; i < dim; i += 2) f.push_back(1.0f / std::pow(base, static_cast<float>(i) / static_cast<float>(dim)));
  return f;
}

// The float32 angle position · inv_freq (inv_freq @ position_ids.float()).
std::function<float(int, const std::vector<std::int64_t>&)> angles_of(std::vector<float> inv_freq) {
  return [f = std::move(inv_freq)](int j, const std::vector<std::int64_t>& p) {
    return static_cast<float>(p[0]) * f[static_cast<std::size_t>(j)];
  };
}

// Positions 0 … 255, then 2^(k/3) up to `last`.
std::vector<std::int64_t> positions_to(std::int64_t last) {
  std::vector<std::int64_t> p;
  for (std::int64_t m = 0; m < 256; ++m) p.push_back(m);
  for (int k = 25; ; ++k) {
    const auto m = static_cast<std::int64_t>(std::llround(std::exp2(k / 3.0)));
    if (m > last) break;
    if (m > p.back()) p.push_back(m);
  }
  return p;
}

// ggml's rope (ggml-cpu rope_yarn with no scaling): theta_scale = powf(freq_base, −2/n_dims),
// and per pair theta starts at the position and is multiplied by theta_scale in float32 — the
// angle of pair j is p·s^j rounded j + 1 times. The fitted base is then 9999.98, not 10000.
TEST(IdentifyConventions, GgmlFloat32BaseIsSnappedTo10000) {
  for (const bool adjacent : {false, true}) {
    simulation s;
    s.adjacent = adjacent;  // GGML_ROPE_TYPE_NEOX is half-split, the normal mode adjacent
    s.angle = [](int j, const std::vector<std::int64_t>& p) {
      const float theta_scale = std::pow(10000.0f, -2.0f / 64.0f);
      float theta = static_cast<float>(p[0]);
      for (int i = 0; i < j; ++i) theta *= theta_scale;
      return theta;
    };
    const identification id = identify(simulate(s, positions_to(32768)));
    SCOPED_TRACE(identification_text(id));
    EXPECT_EQ(id.base, 10000);
    EXPECT_TRUE(id.convention.base_snapped);
    EXPECT_NE(id.convention.raw_base, 10000);
    EXPECT_EQ(id.convention.type, "none");
    EXPECT_EQ(id.convention.confidence, 1);
    EXPECT_TRUE(id.convention.undecided.empty());
    EXPECT_EQ(id.offset, 0);
    const auto j = identification_json(id);
    EXPECT_EQ(j.at("base").at("value"), 10000.0);
    EXPECT_EQ(j.at("base").at("snapped"), true);
    EXPECT_EQ(j.at("pairing").at("value"), adjacent ? "adjacent" : "half_split");  // the schema's spelling
    EXPECT_EQ(spec_json(id).at("rope_theta"), 10000.0);
    EXPECT_FALSE(spec_json(id).contains("rope_scaling"));
  }
}

// Hugging Face _compute_yarn_parameters in float32 (base 10000, d 64, factor 4, L0 4096,
// β 32 / 1): the correction range in Python floats, floor/ceil, the ramp and the blend as
// float32 tensor ops; cos/sin × 0.1·ln 4 + 1.
std::vector<float> hf_yarn_inv_freq(float base, int dim, float factor, double l0) {
  const auto correction_dim = [&](double rotations) {
    return dim * std::log(l0 / (rotations * 2 * std::numbers::pi)) / (2 * std::log(static_cast<double>(base)));
  };
  const double low = std::max(std::floor(correction_dim(32)), 0.0);
  double high = std::min(std::ceil(correction_dim(1)), dim - 1.0);
  if (low == high) high += 0.001;
  std::vector<float> out;
  for (int i = 0; i < dim / 2; ++i) {
    const float pos_freq = std::pow(base, static_cast<float>(2 * i) / static_cast<float>(dim));
    const float extrapolation = 1.0f / pos_freq, interpolation = 1.0f / (factor * pos_freq);
    const float ramp = std::clamp((static_cast<float>(i) - static_cast<float>(low)) / static_cast<float>(high - low), 0.0f, 1.0f);
    const float extrapolation_factor = 1.0f - ramp;
    out.push_back(interpolation * (1.0f - extrapolation_factor) + extrapolation * extrapolation_factor);
  }
  return out;
}

TEST(IdentifyConventions, YarnInFloat32IsNamedWithItsParameters) {
  simulation s;
  s.angle = angles_of(hf_yarn_inv_freq(10000.0f, 64, 4.0f, 4096));
  s.attention = static_cast<float>(0.1 * std::log(4.0) + 1);
  const identification id = identify(simulate(s, positions_to(16384)));
  SCOPED_TRACE(identification_text(id));
  EXPECT_EQ(id.convention.type, "yarn");
  EXPECT_EQ(id.base, 10000);
  EXPECT_FALSE(id.explicit_frequencies);
  const auto spec = spec_json(id);
  ASSERT_TRUE(spec.contains("rope_scaling"));
  EXPECT_EQ(spec["rope_scaling"]["rope_type"], "yarn");
  EXPECT_EQ(spec["rope_scaling"]["factor"], 4.0);
  EXPECT_EQ(spec["rope_scaling"]["original_max_position_embeddings"], 4096);
  EXPECT_FALSE(spec.contains("attention_factor")) << spec.dump();  // YaRN's own 0.1·ln s + 1
  EXPECT_EQ(id.convention.confidence, 1);
  EXPECT_EQ(identification_json(id).at("scaling").at("type"), "yarn");
}

// ggml's YaRN (ggml-cpu rope_yarn, llama.cpp's --rope-scaling yarn): the extrapolated angle is
// ggml's repeated product, the interpolated one freq_scale times it, mixed by
// 1 − clamp((i − low)/max(0.001, high − low)) with ggml_rope_yarn_corr_dims' floor/ceil range;
// cos/sin × (1 + 0.1·ln(1/freq_scale)). Base 10000, d 64, freq_scale 1/4, n_ctx_orig 4096.
TEST(IdentifyConventions, GgmlYarnIsNamedAsTheConfigWritesIt) {
  simulation s;
  const float freq_scale = 0.25f;
  const auto corr_dim = [](float rotations) {
    return 64 * std::log(4096.0f / (rotations * 2 * static_cast<float>(std::numbers::pi))) / (2 * std::log(10000.0f));
  };
  const float low = std::max(0.0f, std::floor(corr_dim(32))), high = std::min(63.0f, std::ceil(corr_dim(1)));
  s.angle = [=](int j, const std::vector<std::int64_t>& p) {
    const float theta_scale = std::pow(10000.0f, -2.0f / 64.0f);
    float theta_extrap = static_cast<float>(p[0]);
    for (int i = 0; i < j; ++i) theta_extrap *= theta_scale;
    const float theta_interp = freq_scale * theta_extrap;
    const float y = (static_cast<float>(j) - low) / std::max(0.001f, high - low);
    const float ramp_mix = 1 - std::min(1.0f, std::max(0.0f, y));
    return theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
  };
  s.attention = 1 + 0.1f * std::log(1 / freq_scale);
  const identification id = identify(simulate(s, positions_to(16384)));
  SCOPED_TRACE(identification_text(id));
  const auto spec = spec_json(id);
  ASSERT_TRUE(spec.contains("rope_scaling")) << spec.dump();
  EXPECT_EQ(spec["rope_scaling"]["rope_type"], "yarn");
  EXPECT_EQ(spec["rope_scaling"]["factor"], 4.0);
  EXPECT_EQ(spec["rope_scaling"]["original_max_position_embeddings"], 4096);
  EXPECT_FALSE(spec.contains("attention_factor")) << spec.dump();
  EXPECT_EQ(id.base, 10000);
  EXPECT_EQ(id.convention.confidence, 1);
}

// DeepSeek-V3's YaRN (factor 40, L0 4096, mscale = mscale_all_dim = 1: cos/sin not scaled) on
// its 64 rotary dims, in float32 as above: named yarn with DeepSeek's mscale keys, A unwritten.
TEST(IdentifyConventions, DeepSeekYarnWithoutAnAttentionFactor) {
  simulation s;
  s.angle = angles_of(hf_yarn_inv_freq(10000.0f, 64, 40.0f, 4096));
  const identification id = identify(simulate(s, positions_to(65536)));
  SCOPED_TRACE(identification_text(id));
  const auto spec = spec_json(id);
  ASSERT_TRUE(spec.contains("rope_scaling")) << spec.dump();
  EXPECT_EQ(spec["rope_scaling"]["rope_type"], "yarn");
  EXPECT_EQ(spec["rope_scaling"]["factor"], 40.0);
  EXPECT_EQ(spec["rope_scaling"]["original_max_position_embeddings"], 4096);
  EXPECT_EQ(spec["rope_scaling"]["mscale"], 1.0);
  EXPECT_EQ(spec["rope_scaling"]["mscale_all_dim"], 1.0);
  EXPECT_FALSE(spec.contains("attention_factor")) << spec.dump();
  EXPECT_EQ(id.base, 10000);
}

// Hugging Face _compute_llama3_parameters in float32 (Llama 3.1: base 500000, d 128, factor 8,
// low 1, high 4, L0 8192): wavelen = 2π / inv_freq and the smoothed band as float32 ops.
std::vector<float> hf_llama3_inv_freq() {
  const float factor = 8, low_freq_factor = 1, high_freq_factor = 4, l0 = 8192;
  const float low_freq_wavelen = l0 / low_freq_factor, high_freq_wavelen = l0 / high_freq_factor;
  std::vector<float> out;
  for (const float inv_freq : hf_inv_freq(500000.0f, 128)) {
    const float wavelen = 2 * static_cast<float>(std::numbers::pi) / inv_freq;
    const float llama = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
    const float smooth = (l0 / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
    const float smoothed = (1 - smooth) * llama / factor + smooth * llama;
    const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
    out.push_back(medium ? smoothed : llama);
  }
  return out;
}

TEST(IdentifyConventions, Llama3InFloat32IsNamedWithItsParameters) {
  simulation s;
  s.head_dim = 128;
  s.angle = angles_of(hf_llama3_inv_freq());
  const identification id = identify(simulate(s, positions_to(65536)));
  SCOPED_TRACE(identification_text(id));
  EXPECT_EQ(id.convention.type, "llama3");
  EXPECT_EQ(id.base, 500000);
  const auto spec = spec_json(id);
  ASSERT_TRUE(spec.contains("rope_scaling"));
  EXPECT_EQ(spec["rope_scaling"]["rope_type"], "llama3");
  EXPECT_EQ(spec["rope_scaling"]["factor"], 8.0);
  EXPECT_EQ(spec["rope_scaling"]["low_freq_factor"], 1.0);
  EXPECT_EQ(spec["rope_scaling"]["high_freq_factor"], 4.0);
  EXPECT_EQ(spec["rope_scaling"]["original_max_position_embeddings"], 8192);
  EXPECT_EQ(id.convention.confidence, 1);
}

// Hugging Face's LongRoPE in float32 (Phi-3.5-mini's shape: head_dim 96, base 10000, L0 4096,
// max_position_embeddings 131072): 1.0 / (ext_factors * base ** (arange(0, dim, 2).float() / dim)),
// cos/sin × sqrt(1 + ln 32 / ln 4096). The factors are this test's own (no named scaling has
// them): identify writes them as LongRoPE's and names the context lengths from A.
TEST(IdentifyConventions, LongRopeFactorsAndItsAttentionFactor) {
  simulation s;
  s.head_dim = 96;
  std::vector<float> inv_freq, factors;
  for (int i = 0; i < 48; ++i) {
    factors.push_back(1.0f + 0.05f * std::pow(static_cast<float>(i), 1.5f));
    inv_freq.push_back(1.0f / (factors.back() * std::pow(10000.0f, static_cast<float>(2 * i) / 96.0f)));
  }
  s.angle = angles_of(inv_freq);
  s.attention = static_cast<float>(std::sqrt(1 + std::log(32.0) / std::log(4096.0)));
  const identification id = identify(simulate(s, positions_to(65536)));
  SCOPED_TRACE(identification_text(id));
  EXPECT_EQ(id.convention.type, "longrope");
  const auto spec = spec_json(id);
  EXPECT_EQ(spec.at("rope_scaling").at("rope_type"), "longrope");
  EXPECT_EQ(spec.at("rope_scaling").at("original_max_position_embeddings"), 4096);
  EXPECT_EQ(spec.at("max_position_embeddings"), 131072);
  EXPECT_FALSE(spec.contains("attention_factor")) << spec.dump();
  // The spec written reproduces the kernel's frequencies (the reference computes them from it).
  const auto written = reference::scaled_frequencies<double>(id.spec, 65537);
  EXPECT_NEAR(written.attention_factor, s.attention, 1e-6);
  for (std::size_t i = 0; i < 48; ++i) EXPECT_NEAR(written.inverse_frequencies[i] / inv_freq[i], 1, 1e-5) << i;
}

// A 64-token decode block at 100 000 in float32 (Hugging Face's recipe): the rows' differences
// give θ_j; the base snaps to 10000 and the offset is 0.
TEST(IdentifyConventions, DecodeBlockAt100000) {
  for (const int dim : {64, 128}) {
    simulation s;
    s.head_dim = dim;
    s.angle = angles_of(hf_inv_freq(10000.0f, dim));
    std::vector<std::int64_t> block;
    for (std::int64_t m = 100000; m < 100064; ++m) block.push_back(m);
    const identification id = identify(simulate(s, block));
    SCOPED_TRACE(identification_text(id));
    EXPECT_EQ(id.base, 10000);
    EXPECT_EQ(id.convention.type, "none");
    EXPECT_EQ(id.offset, 0);
    EXPECT_EQ(id.linear_factor, 1);
  }
}

// Qwen2-VL's M-RoPE (transformers Qwen2VLRotaryEmbedding + apply_multimodal_rotary_pos_emb):
// inv_freq in float32, one float32 angle per stream, pair j takes the angle of its section's
// stream (sections in pairs: t, h, w). Positions: `text` text tokens, a grid_h × grid_w image
// at t = text, h = text + row, w = text + col, then text again from text + max(grid).
std::vector<std::int64_t> image_after_text(std::int64_t text, std::int64_t grid_h, std::int64_t grid_w,
                                           std::int64_t after) {
  std::vector<std::int64_t> t, h, w;
  for (std::int64_t k = 0; k < text; ++k) t.push_back(k), h.push_back(k), w.push_back(k);
  for (std::int64_t r = 0; r < grid_h; ++r)
    for (std::int64_t c = 0; c < grid_w; ++c) t.push_back(text), h.push_back(text + r), w.push_back(text + c);
  const std::int64_t next = text + std::max(grid_h, grid_w);
  for (std::int64_t k = 0; k < after; ++k) t.push_back(next + k), h.push_back(next + k), w.push_back(next + k);
  t.insert(t.end(), h.begin(), h.end());
  t.insert(t.end(), w.begin(), w.end());
  return t;
}

simulation mrope(float base, int dim, std::vector<int> section, bool bf16) {
  simulation s;
  s.head_dim = dim;
  s.streams = 3;
  s.bf16 = bf16;
  s.angle = [f = hf_inv_freq(base, dim), section](int j, const std::vector<std::int64_t>& p) {
    const int stream = j < section[0] ? 0 : j < section[0] + section[1] ? 1 : 2;
    return static_cast<float>(p[static_cast<std::size_t>(stream)]) * f[static_cast<std::size_t>(j)];
  };
  return s;
}

// float32 at positions past 3000 (the float32 angle's error is above 16 units of 2^-24 there),
// Qwen2-VL-7B's sections [16, 24, 24] and base 10^6; and bfloat16 (cos/sin and arithmetic) on a
// small head whose sections the bfloat16 angles still resolve over a 48 × 48 image.
TEST(IdentifyConventions, MropeInFloat32AndBfloat16) {
  {
    const identification id = identify(simulate(mrope(1e6f, 128, {16, 24, 24}, false), image_after_text(3000, 12, 16, 8)));
    SCOPED_TRACE(identification_text(id));
    EXPECT_EQ(id.layout.rule, stream_rule::mrope_sections);
    EXPECT_EQ(id.layout.section, (std::vector<std::int32_t>{16, 24, 24}));
    EXPECT_EQ(id.base, 1e6);
    EXPECT_EQ(id.convention.type, "none");
    EXPECT_EQ(spec_json(id).at("rope_scaling").at("mrope_section"), nlohmann::json({16, 24, 24}));
  }
  {
    // After 2000 text tokens the four highest frequencies are read to 10^-3 (the base with
    // them); the four lowest turn too little for bfloat16, which identify says.
    const identification id = identify(simulate(mrope(10000.0f, 16, {2, 3, 3}, true), image_after_text(2000, 48, 48, 8)));
    SCOPED_TRACE(identification_text(id));
    EXPECT_EQ(id.layout.rule, stream_rule::mrope_sections);
    EXPECT_EQ(id.layout.section, (std::vector<std::int32_t>{2, 3, 3}));
    EXPECT_EQ(id.base, 10000);
    EXPECT_LE(id.convention.confidence, 0.5);
    EXPECT_NE(id.convention.undecided.find("of 8 pairs turn too little"), std::string::npos);
  }
  {
    // The same bfloat16 dump after 20 text tokens: no pair is read to 10^-3, so the base is
    // not decided either, and the alternatives are listed.
    const identification id = identify(simulate(mrope(10000.0f, 16, {2, 3, 3}, true), image_after_text(20, 48, 48, 8)));
    SCOPED_TRACE(identification_text(id));
    EXPECT_EQ(id.layout.section, (std::vector<std::int32_t>{2, 3, 3}));
    EXPECT_FALSE(id.convention.also_fit.empty());
    EXPECT_LT(id.convention.confidence, 0.5);
  }
}

// Vision towers in float32 on a 12 × 16 patch grid (row, col streams).
//   Pixtral (transformers PixtralRotaryEmbedding): freqs = 1/(base^(arange(0, d, 2)/d)); rows
//   take freqs[::2], columns freqs[1::2]: the first column pair turns by base^(−2/d) (0.7499).
//   Qwen2-VL's VisionRotaryEmbedding(d/2): rows and columns both take base^(−4k/d): the first
//   column pair turns by 1.
std::vector<std::int64_t> patch_grid(std::int64_t grid_h, std::int64_t grid_w) {
  std::vector<std::int64_t> row, col;
  for (std::int64_t r = 0; r < grid_h; ++r)
    for (std::int64_t c = 0; c < grid_w; ++c) row.push_back(r), col.push_back(c);
  row.insert(row.end(), col.begin(), col.end());
  return row;
}

simulation vision(int dim, bool alternating, bool bf16) {
  simulation s;
  s.head_dim = dim;
  s.bf16 = bf16;
  s.streams = 2;
  const int quarter = dim / 4;  // pairs per axis
  std::vector<float> rows, cols;
  if (alternating) {
    const auto f = hf_inv_freq(10000.0f, dim);
    for (int k = 0; k < quarter; ++k) rows.push_back(f[2 * k]), cols.push_back(f[2 * k + 1]);
  } else {
    rows = cols = hf_inv_freq(10000.0f, dim / 2);
  }
  s.angle = [rows, cols, quarter](int j, const std::vector<std::int64_t>& p) {
    return j < quarter ? static_cast<float>(p[0]) * rows[static_cast<std::size_t>(j)]
                       : static_cast<float>(p[1]) * cols[static_cast<std::size_t>(j - quarter)];
  };
  return s;
}

// In bfloat16 the grid's 15 positions read only the highest frequencies, to a few 10^-3: enough
// to tell 0.75 from 1, not to measure the base, which the report says.
TEST(IdentifyConventions, PixtralAndQwen2VLVisionLayoutsAreToldApartByTheFrequencyFit) {
  for (const bool bf16 : {false, true})
    for (const bool alternating : {true, false}) {
      const int dim = alternating ? 64 : 80;  // Pixtral head_dim 64; Qwen2-VL's vision tower 80
      const identification id = identify(simulate(vision(dim, alternating, bf16), patch_grid(12, 16)));
      SCOPED_TRACE(identification_text(id));
      EXPECT_EQ(id.layout.rule, alternating ? stream_rule::vision_alternating : stream_rule::vision_rows_first);
      EXPECT_FALSE(id.explicit_frequencies);
      // The first column pair's fitted frequency: base^(−2/d) alternating, 1 rows first.
      const double first_column = id.theta[static_cast<std::size_t>(dim / 4)];
      EXPECT_NEAR(first_column, alternating ? std::pow(10000.0, -2.0 / dim) : 1.0, bf16 ? 2e-2 : 1e-5);
      if (bf16) {
        EXPECT_LT(id.convention.confidence, 1);
        EXPECT_FALSE(id.convention.undecided.empty());
      } else {
        EXPECT_EQ(id.base, 10000);
        EXPECT_EQ(id.convention.confidence, 1);
      }
    }
}

// Positions that leave the low frequencies unmeasured: Llama 3.1's scaling changes only pairs
// whose θ is below 2π·4/8192, which positions 0 … 15 turn by too little to read. identify
// cannot rule that scaling out and says so, instead of a confident "none".
TEST(IdentifyConventions, DataThatCannotDecideSaySo) {
  simulation s;
  s.head_dim = 128;
  s.angle = angles_of(hf_llama3_inv_freq());
  std::vector<std::int64_t> few;
  for (std::int64_t m = 0; m < 16; ++m) few.push_back(m);
  const identification id = identify(simulate(s, few));
  SCOPED_TRACE(identification_text(id));
  EXPECT_LT(id.convention.confidence, 1);
  EXPECT_NE(id.convention.undecided.find("pairs turn too little over these positions"), std::string::npos);
  EXPECT_NE(identification_text(id).find("undecided"), std::string::npos);
  EXPECT_EQ(identification_json(id).at("scaling").at("undecided"), id.convention.undecided);
}

// No confident wrong answer: over bases, dtypes and position sets, identify either returns the
// convention used (base and no scaling) with confidence 1, or a confidence below 1 with the
// reason — never another base or a scaling with confidence 1, nor an offset other than the
// kernel's with confidence 0.5 or more. Float32 over positions to 65536
// measures every pair, so there it must decide (the sweep is not vacuous).
TEST(IdentifyConventions, NeverAConfidentWrongAnswer) {
  std::vector<std::int64_t> dense, decode, wide = positions_to(65536);
  for (std::int64_t m = 0; m < 128; ++m) dense.push_back(m);
  for (std::int64_t m = 100000; m < 100064; ++m) decode.push_back(m);
  int unread = 0;
  for (const float base : {10000.0f, 5e6f})
    for (const int type : {0, 1, 2})  // float32, bfloat16, float16
      for (const auto* positions : {&dense, &decode, &wide}) {
        simulation s;
        s.bf16 = type == 1, s.f16 = type == 2;
        // The kernel rotates at position + offset (offset 0, 1, 2 by dtype).
        const std::int64_t offset = type;
        s.angle = [f = hf_inv_freq(base, 64), offset](int j, const std::vector<std::int64_t>& p) {
          return static_cast<float>(p[0] + offset) * f[static_cast<std::size_t>(j)];
        };
        const identification id = identify(simulate(s, *positions));
        SCOPED_TRACE(identification_text(id));
        if (id.offset_confidence >= 0.5) {
          EXPECT_EQ(id.offset, offset);
        }
        if (type == 0 && positions == &wide) {
          EXPECT_EQ(id.convention.confidence, 1);
        }
        // A pair that turned by no more than the noise is null in the JSON, never a number.
        const auto frequencies = identification_json(id).at("inverse_frequencies");
        for (std::size_t j = 0; j < id.theta_read.size(); ++j)
          if (!id.theta_read[j]) {
            EXPECT_TRUE(frequencies.at(j).is_null()) << j;
            EXPECT_LT(id.convention.confidence, 1);
            ++unread;
          }
        if (id.convention.confidence < 1) {
          EXPECT_FALSE(id.convention.undecided.empty());
          continue;
        }
        EXPECT_EQ(id.base, base);
        EXPECT_EQ(id.convention.type, "none");
      }
  EXPECT_GT(unread, 0);  // the 16-bit runs at close positions leave pairs unturned
}

}  // namespace
}  // namespace ropecheck::audit
