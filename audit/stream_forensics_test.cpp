// The audit's forensics on position streams, in process, from dumps made here by independent
// simulations (plain float / long double code, numeric/half.h's roundings and each layout's
// pair → stream rule written out again; nothing from audit/ or reference/):
//   - M-RoPE (Qwen2.5-VL contiguous, Qwen3-VL interleaved) and 2-D vision (Qwen2-VL rows first)
//     in Hugging Face's float32 path and its bfloat16 path: the recipe found has the float32
//     angle, and the first cause is a recipe stage, never `unexplained`;
//   - ggml's repeated-product angle on M-RoPE, four-stream IMROPE and VISION mode: named;
//   - the height and width sections (vision: rows and columns) exchanged on top of those
//     recipes: `stream_layout` named first;
//   - M-RoPE's streams read in another order than (t, h, w): named, with the order;
//   - ggml's four-stream interleaved M-RoPE (mrope_interleaved_4): llama.cpp's e = 0 against
//     transformers' e = t, each way; an off-by-one under it; identify names the layout from
//     [4, tokens] positions, llama.cpp's e = 0 everywhere included.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/identify.h"
#include "io/io_error.h"
#include "io/tensor.h"
#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

constexpr int heads = 2;

// A layout as the test states it: pair j's stream and frequency index (θ_f = base^(−2f/d)).
struct layout_rule {
  std::function<int(int)> stream;
  std::function<int(int)> frequency = [](int j) { return j; };
};

// Qwen2.5-VL modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb, mrope_section [16, 24, 24].
const layout_rule contiguous_16_24_24 = {[](int j) { return j < 16 ? 0 : j < 40 ? 1 : 2; }};
// Qwen3-VL modeling_qwen3_vl.py apply_interleaved_mrope, [24, 20, 20].
const layout_rule interleaved_24_20_20 = {[](int j) { return j % 3 == 1 && j < 60 ? 1 : j % 3 == 2 && j < 60 ? 2 : 0; }};
// ggml-cpu ops.cpp ggml_mrope_cache_init with is_imrope, sections [24, 20, 20, 0].
const layout_rule imrope_24_20_20 = {[](int j) {
  return j % 3 == 1 && j < 60 ? 1 : j % 3 == 2 && j < 60 ? 2 : j % 3 == 0 && j < 72 ? 0 : 3;
}};
// Qwen2-VL's vision tower, head 80: VisionRotaryEmbedding(40) — rows on pairs 0–19 at
// θ'_k = base^(−2k/40) = θ_{2k}, columns on 20–39 likewise.
const layout_rule vision_rows_first_80 = {[](int j) { return j < 20 ? 0 : 1; }, [](int j) { return 2 * (j % 20); }};

// The same layouts with the two non-temporal streams exchanged (a kernel's bug).
layout_rule exchanged(const layout_rule& rule, bool vision) {
  return {[rule, vision](int j) {
            const int s = rule.stream(j);
            if (vision) return 1 - s;
            return s == 1 ? 2 : s == 2 ? 1 : s;
          },
          rule.frequency};
}

// One implementation, pair by pair: (m, f, x_a, x_b) → (y_a, y_b), before the final store.
using stream_recipe = std::function<std::pair<double, double>(std::int64_t, int, double, double)>;

// Hugging Face's float32 path: inv_freq = 1 / base^(2f/d) in float32, the angle float(m)·inv_freq
// in float32, cosf/sinf, q·cos + rotate_half(q)·sin in float32 without FMA.
stream_recipe hugging_face_float32(double base, int d) {
  return [base, d](std::int64_t m, int f, double xa, double xb) {
    const float inv_freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * f) / static_cast<float>(d));
    const float phi = static_cast<float>(m) * inv_freq;
    const float c = std::cos(phi), s = std::sin(phi), fa = static_cast<float>(xa), fb = static_cast<float>(xb);
    const float pa = fa * c, pb = fb * s, qa = fb * c, qb = fa * s;
    return std::pair<double, double>{pa - pb, qa + qb};
  };
}

// Hugging Face in bfloat16: the cache made as above in float32, cast to bfloat16
// (cos.to(dtype)), each product and the sum in bfloat16.
stream_recipe hugging_face_bfloat16(double base, int d) {
  return [base, d](std::int64_t m, int f, double xa, double xb) {
    const float inv_freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * f) / static_cast<float>(d));
    const float phi = static_cast<float>(m) * inv_freq;
    const double c = round_to_storage(dtype::bfloat16, std::cos(phi));
    const double s = round_to_storage(dtype::bfloat16, std::sin(phi));
    const auto b = [](double v) { return round_to_storage(dtype::bfloat16, static_cast<float>(v)); };
    return std::pair<double, double>{b(b(xa * c) + b(-xb * s)), b(b(xb * c) + b(xa * s))};
  };
}

// ggml's float32 path (ggml-cpu ops.cpp ggml_mrope_cache_init, rotate_pairs): each stream's
// angle carried by repeated float32 products, θ = p then θ *= powf(base, −2/n_dims) per pair, so
// pair j (frequency f) holds p·step^f rounded at every step; in VISION mode n_dims = d/2 and θ
// restarts at each axis (indep_sects), so pair f = 2k holds p·step^k. cosf/sinf, float32
// products.
stream_recipe ggml_float32(double base, int d, bool vision) {
  return [base, d, vision](std::int64_t m, int f, double xa, double xb) {
    const int n_dims = vision ? d / 2 : d;
    const float step = std::pow(static_cast<float>(base), -2.0f / static_cast<float>(n_dims));
    float theta = static_cast<float>(m);
    for (int i = 0; i < (vision ? f / 2 : f); ++i) theta *= step;
    const float c = std::cos(theta), s = std::sin(theta), fa = static_cast<float>(xa), fb = static_cast<float>(xb);
    const float p0 = fa * c, p1 = fb * s, p2 = fa * s, p3 = fb * c;
    return std::pair<double, double>{p0 - p1, p2 + p3};
  };
}

// The exact rotation (long double), rounded once by the store.
stream_recipe exact(double base, int d) {
  return [base, d](std::int64_t m, int f, double xa, double xb) {
    const long double phi = m * std::pow(static_cast<long double>(base), -2.0L * f / d);
    return std::pair<double, double>{static_cast<double>(xa * std::cos(phi) - xb * std::sin(phi)),
                                     static_cast<double>(xb * std::cos(phi) + xa * std::sin(phi))};
  };
}

using streams_t = std::vector<std::vector<std::int64_t>>;  // [stream][row]

// M-RoPE positions as Qwen2-VL's get_rope_index gives them: 8 text tokens, a 12 × 16 image at
// t = `at` (h = at + row, w = at + col), 8 text tokens after it; `fourth`: llama.cpp's fourth
// stream (0 for every token) appended, or the temporal position (transformers' value).
streams_t mrope_positions(std::int64_t at, int streams = 3, bool fourth_is_zero = true) {
  streams_t s(static_cast<std::size_t>(streams));
  const auto token = [&](std::int64_t t, std::int64_t h, std::int64_t w) {
    s[0].push_back(t), s[1].push_back(h), s[2].push_back(w);
    if (streams == 4) s[3].push_back(fourth_is_zero ? 0 : t);
  };
  for (std::int64_t k = 0; k < 8; ++k) token(k, k, k);
  for (std::int64_t r = 0; r < 12; ++r)
    for (std::int64_t c = 0; c < 16; ++c) token(at, at + r, at + c);
  for (std::int64_t k = 0; k < 8; ++k) token(at + 16 + k, at + 16 + k, at + 16 + k);
  return s;
}

// Patch coordinates of a large image (a 560 × 560 patch grid, every 37th row and 29th column).
streams_t vision_positions() {
  streams_t s(2);
  for (std::int64_t r = 0; r < 16; ++r)
    for (std::int64_t c = 0; c < 20; ++c) s[0].push_back(37 * r), s[1].push_back(29 * c);
  return s;
}

struct dump {
  tensor x, y;
};

// X standard normal in `io`; Y from `recipe` with the kernel's layout `kernel` at the kernel's
// positions, stored in `io` (half-split pairs of a `d`-wide head).
dump simulate(int d, const layout_rule& kernel, const streams_t& kernel_positions, const stream_recipe& recipe,
              dtype io) {
  const auto rows = static_cast<std::int64_t>(kernel_positions[0].size());
  std::vector<double> x(static_cast<std::size_t>(rows * heads * d)), y(x.size());
  std::mt19937_64 rng(29);
  std::normal_distribution<double> normal;
  for (double& v : x) v = round_to_storage(io, normal(rng));
  for (std::int64_t row = 0; row < rows; ++row)
    for (int h = 0; h < heads; ++h) {
      const std::size_t o = static_cast<std::size_t>((row * heads + h) * d);
      for (int j = 0; j < d / 2; ++j) {
        const std::int64_t m =
            kernel_positions[static_cast<std::size_t>(kernel.stream(j))][static_cast<std::size_t>(row)];
        const auto [ya, yb] = recipe(m, kernel.frequency(j), x[o + j], x[o + j + d / 2]);
        y[o + j] = round_to_storage(io, ya);
        y[o + j + d / 2] = round_to_storage(io, yb);
      }
    }
  return {from_float64(x, {rows, heads, d}, io), from_float64(y, {rows, heads, d}, io)};
}

std::vector<std::int64_t> stream_major(const streams_t& streams) {
  std::vector<std::int64_t> out;
  for (const auto& s : streams) out.insert(out.end(), s.begin(), s.end());
  return out;
}

// That dump audited under `spec` at `audited` positions.
reports::audit_report audit_dump(const rope_spec& spec, const layout_rule& kernel, const streams_t& kernel_positions,
                                 const streams_t& audited, const stream_recipe& recipe, dtype io) {
  const auto rows = static_cast<std::int64_t>(audited[0].size());
  dump made = simulate(spec.head_dim, kernel, kernel_positions, recipe, io);
  audit_input in;
  in.spec = spec;
  in.stream_positions = stream_major(audited);
  in.positions = audited[0];
  in.x = std::move(made.x);
  in.y = std::move(made.y);
  in.tokens_per_sequence = rows;
  in.heads = heads;
  in.judged = io;
  return run_audit(in);
}

rope_spec spec_of(const char* json) { return parse_spec(nlohmann::json::parse(json), "stream-forensics.json"); }

const char* const qwen25_vl = R"({"head_dim": 128, "rope_theta": 1000000.0,
    "rope_scaling": {"rope_type": "default", "mrope_section": [16, 24, 24]}})";
const char* const qwen3_vl = R"({"head_dim": 128, "rope_theta": 5000000.0,
    "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true}})";
const char* const qwen3_vl_ggml = R"({"head_dim": 128, "rope_theta": 5000000.0, "stream_layout": "mrope_interleaved_4",
    "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true}})";
const char* const qwen2_vl_vision = R"({"head_dim": 80, "rope_theta": 10000.0, "stream_layout": "vision_rows_first"})";

std::string causes(const reports::audit_report& r) {
  std::string s;
  for (const auto& f : r.diagnosis) s += f.code + "(" + std::to_string(static_cast<int>(100 * f.share)) + "%) ";
  s += "| recipe: positions " + r.recipe.positions + ", " + r.recipe.inverse_frequencies + ", angle " + r.recipe.angle +
       ", trig " + r.recipe.trig + " -> " + r.recipe.trig_cache + ", " + r.recipe.arithmetic;
  return s;
}

struct stream_model {
  const char* name;
  const char* spec;
  layout_rule rule;
  bool vision;
};

std::vector<stream_model> models() {
  return {{"Qwen2.5-VL M-RoPE", qwen25_vl, contiguous_16_24_24, false},
          {"Qwen3-VL interleaved M-RoPE", qwen3_vl, interleaved_24_20_20, false},
          {"Qwen2-VL vision tower", qwen2_vl_vision, vision_rows_first_80, true}};
}

streams_t positions_for(const stream_model& m) { return m.vision ? vision_positions() : mrope_positions(60000); }

TEST(StreamForensics, Float32AndBfloat16RecipesAreNamedOnEveryLayout) {
  for (const stream_model& model : models()) {
    const rope_spec spec = spec_of(model.spec);
    const streams_t p = positions_for(model);
    {
      SCOPED_TRACE(std::string(model.name) + " float32");
      const auto r = audit_dump(spec, model.rule, p, p, hugging_face_float32(spec.base, spec.head_dim), dtype::float32);
      ASSERT_FALSE(r.passed);
      // Both roundings of the angle's inputs are causes of the same size (as in one stream):
      // θ_j from powf, and m·θ_j.
      ASSERT_GE(r.diagnosis.size(), 2u) << causes(r);
      const std::string first = r.diagnosis[0].code, second = r.diagnosis[1].code;
      EXPECT_TRUE((first == "angle_precision" && second == "low_precision_inverse_frequencies") ||
                  (second == "angle_precision" && first == "low_precision_inverse_frequencies"))
          << causes(r);
      EXPECT_EQ(r.recipe.inverse_frequencies, "pow float32") << causes(r);
      EXPECT_EQ(r.recipe.angle, "float32") << causes(r);
      EXPECT_EQ(r.recipe.trig, "float32") << causes(r);
      EXPECT_EQ(r.recipe.arithmetic, "float32") << causes(r);
      EXPECT_GT(r.recipe.bit_exact, 0.9) << causes(r);
      for (const auto& f : r.diagnosis) EXPECT_NE(f.code, "unexplained") << causes(r);
    }
    {
      SCOPED_TRACE(std::string(model.name) + " bfloat16");
      const auto r = audit_dump(spec, model.rule, p, p, hugging_face_bfloat16(spec.base, spec.head_dim), dtype::bfloat16);
      ASSERT_FALSE(r.passed);
      ASSERT_FALSE(r.diagnosis.empty());
      EXPECT_NE(r.diagnosis.front().code, "unexplained") << causes(r);
      // At M-RoPE's image positions (6·10^4) the float32 angle's error (≈ 4·10^-3 rad) shows
      // through bfloat16; at vision's patch coordinates (≤ 555) it is below a bfloat16 unit.
      if (!model.vision) {
        EXPECT_EQ(r.recipe.angle, "float32") << causes(r);
      }
      EXPECT_EQ(r.recipe.trig_cache, "bfloat16") << causes(r);
      EXPECT_EQ(r.recipe.arithmetic, "bfloat16") << causes(r);
      EXPECT_GT(r.recipe.bit_exact, 0.9) << causes(r);
    }
  }
}

// ggml's repeated-product angle on streams: its M-RoPE (one running product per stream, Qwen2.5-VL
// sections), its four-stream IMROPE (llama.cpp's e = 0) and its VISION mode (restarting per axis).
TEST(StreamForensics, GgmlsRepeatedProductIsNamedOnStreams) {
  struct ggml_case {
    const char* name;
    const char* spec;
    layout_rule rule;
    bool vision;
    streams_t positions;
  };
  const ggml_case cases[] = {
      {"ggml M-RoPE", qwen25_vl, contiguous_16_24_24, false, mrope_positions(60000)},
      {"ggml IMROPE", qwen3_vl_ggml, imrope_24_20_20, false, mrope_positions(60000, 4, true)},
      {"ggml VISION", qwen2_vl_vision, vision_rows_first_80, true, vision_positions()},
  };
  for (const ggml_case& c : cases) {
    SCOPED_TRACE(c.name);
    const rope_spec spec = spec_of(c.spec);
    const auto r = audit_dump(spec, c.rule, c.positions, c.positions, ggml_float32(spec.base, spec.head_dim, c.vision),
                              dtype::float32);
    ASSERT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "angle_precision") << causes(r);
    EXPECT_EQ(r.recipe.angle, "float32_repeated_product") << causes(r);
    EXPECT_GT(r.recipe.bit_exact, 0.9) << causes(r);
  }
}

TEST(StreamForensics, ExchangedHeightAndWidthAreNamedFirstOnTopOfTheRecipe) {
  for (const stream_model& model : models()) {
    const rope_spec spec = spec_of(model.spec);
    const streams_t p = positions_for(model);
    const layout_rule swapped = exchanged(model.rule, model.vision);
    const std::string says = model.vision ? "rows and columns exchanged" : "height and width sections exchanged";
    for (const dtype io : {dtype::float32, dtype::bfloat16}) {
      SCOPED_TRACE(std::string(model.name) + " " + std::string(to_string(io)));
      const stream_recipe recipe = io == dtype::float32 ? hugging_face_float32(spec.base, spec.head_dim)
                                                        : hugging_face_bfloat16(spec.base, spec.head_dim);
      const auto r = audit_dump(spec, swapped, p, p, recipe, io);
      ASSERT_FALSE(r.passed);
      ASSERT_FALSE(r.diagnosis.empty());
      EXPECT_EQ(r.diagnosis.front().code, "stream_layout") << causes(r);
      EXPECT_NE(r.diagnosis.front().message.find(says), std::string::npos) << r.diagnosis.front().message;
    }
  }
}

// M-RoPE's streams read in another order than (t, h, w) — the positions tensor built as
// (h, t, w), or rotated to (w, t, h) — on Hugging Face's float32 recipe: named as a stream
// layout, with the order.
TEST(StreamForensics, StreamsReadInAnotherOrderAreNamed) {
  for (const stream_model& model : models()) {
    if (model.vision) continue;
    const rope_spec spec = spec_of(model.spec);
    const streams_t p = positions_for(model);
    const struct {
      streams_t read;
      const char* says;
    } orders[] = {{{p[1], p[0], p[2]}, "order (h, t, w)"}, {{p[2], p[0], p[1]}, "order (w, t, h)"}};
    for (const auto& o : orders) {
      SCOPED_TRACE(std::string(model.name) + " " + o.says);
      const auto r = audit_dump(spec, model.rule, o.read, p, hugging_face_float32(spec.base, spec.head_dim), dtype::float32);
      ASSERT_FALSE(r.passed);
      ASSERT_FALSE(r.diagnosis.empty());
      EXPECT_EQ(r.diagnosis.front().code, "stream_layout") << causes(r);
      EXPECT_NE(r.diagnosis.front().message.find(o.says), std::string::npos) << r.diagnosis.front().message;
    }
  }
}

// llama.cpp (ggml IMROPE, e = 0 for every token) and transformers (e = t) on Qwen3-VL: each dump
// passes under the spec and positions that state its convention and fails under the other's,
// the difference named as a stream layout.
TEST(StreamForensics, LlamaCppsFourthStreamAgainstTransformers) {
  const rope_spec three = spec_of(qwen3_vl), four = spec_of(qwen3_vl_ggml);
  ASSERT_EQ(four.streams.streams(), 4);
  const streams_t t_h_w = mrope_positions(60000, 3);
  const streams_t e_zero = mrope_positions(60000, 4, true), e_t = mrope_positions(60000, 4, false);
  // The llama.cpp dump: pairs 61 and 62 at e = 0.
  {
    const auto r = audit_dump(four, imrope_24_20_20, e_zero, e_zero, exact(four.base, 128), dtype::float32);
    EXPECT_TRUE(r.passed) << causes(r);
  }
  {
    SCOPED_TRACE("llama.cpp's dump audited as transformers' three-stream layout");
    const auto r = audit_dump(three, imrope_24_20_20, e_zero, t_h_w, exact(three.base, 128), dtype::float32);
    ASSERT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "stream_layout") << causes(r);
    EXPECT_NE(r.diagnosis.front().message.find("fourth stream e = 0"), std::string::npos) << r.diagnosis.front().message;
  }
  {
    SCOPED_TRACE("llama.cpp's dump audited with e = t in the positions");
    const auto r = audit_dump(four, imrope_24_20_20, e_zero, e_t, exact(four.base, 128), dtype::float32);
    ASSERT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "stream_layout") << causes(r);
    EXPECT_NE(r.diagnosis.front().message.find("e read as 0"), std::string::npos) << r.diagnosis.front().message;
  }
  // The transformers dump: every pair outside h and w at t.
  {
    const auto r = audit_dump(three, interleaved_24_20_20, t_h_w, t_h_w, exact(three.base, 128), dtype::float32);
    EXPECT_TRUE(r.passed) << causes(r);
    const auto r4 = audit_dump(four, interleaved_24_20_20, t_h_w, e_t, exact(four.base, 128), dtype::float32);
    EXPECT_TRUE(r4.passed) << causes(r4);
  }
  {
    SCOPED_TRACE("transformers' dump audited with llama.cpp's e = 0");
    const auto r = audit_dump(four, interleaved_24_20_20, t_h_w, e_zero, exact(four.base, 128), dtype::float32);
    ASSERT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "stream_layout") << causes(r);
    EXPECT_NE(r.diagnosis.front().message.find("e read as the temporal position"), std::string::npos)
        << r.diagnosis.front().message;
  }
}

// An off-by-one position in llama.cpp's IMROPE (t, h and w one ahead; e left at 0, as llama.cpp
// fills it), exact and in Hugging Face's float32 recipe: named position_offset first.
TEST(StreamForensics, AnOffByOneUnderLlamaCppsFourthStreamIsNamed) {
  const rope_spec four = spec_of(qwen3_vl_ggml);
  const streams_t p = mrope_positions(60000, 4, true);
  streams_t ahead = p;
  for (std::size_t s = 0; s < 3; ++s)
    for (auto& m : ahead[s]) ++m;
  for (const bool float32_recipe : {false, true}) {
    SCOPED_TRACE(float32_recipe ? "float32 recipe" : "exact");
    const stream_recipe recipe = float32_recipe ? hugging_face_float32(four.base, 128) : exact(four.base, 128);
    const auto r = audit_dump(four, imrope_24_20_20, ahead, p, recipe, dtype::float32);
    ASSERT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "position_offset") << causes(r);
    EXPECT_NE(r.diagnosis.front().message.find("shifted by +1"), std::string::npos) << r.diagnosis.front().message;
  }
}

// identify on [4, tokens] positions names ggml's layout and its sections, and writes a spec the
// audit reads back: here the fourth stream moves on its own (e = t + 5 on image tokens), so each
// pair's stream is decided by the data. Y: the exact rotation under ggml's rule, in float32.
TEST(StreamForensics, IdentifyNamesTheFourStreamLayout) {
  streams_t p = mrope_positions(6, 4, false);
  for (std::size_t i = 0; i < p[3].size(); ++i)
    if (p[1][i] != p[0][i] || p[2][i] != p[0][i]) p[3][i] += 5;
  const dump made = simulate(128, imrope_24_20_20, p, exact(5000000.0, 128), dtype::float32);
  identify_input in;
  in.x = made.x, in.y = made.y;
  in.positions = stream_major(p);
  in.streams = 4;
  in.heads = heads;
  in.judged = dtype::float32;
  in.x_file = "x.npy", in.y_file = "y.npy", in.positions_file = "pos.npy";
  const identification id = identify(in);
  EXPECT_EQ(id.layout.rule, stream_rule::mrope_interleaved_4) << to_string(id.layout.rule);
  EXPECT_EQ(id.layout.section, (std::vector<int>{24, 20, 20}));
  EXPECT_EQ(id.spec.streams.rule, stream_rule::mrope_interleaved_4);  // the spec written reads back
  EXPECT_EQ(spec_json(id).at("stream_layout"), "mrope_interleaved_4");
  EXPECT_TRUE(id.audit_passed);
}

// llama.cpp's real dumps hold e = 0 in every row: the pairs on e are not rotated (their
// frequency cannot be read), and identify still names ggml's layout and sections from the pairs
// that turn, and the spec it writes passes the audit. Image tokens at 6·10^4, where a pair on
// h or w would turn by far more than float32 resolves.
TEST(StreamForensics, IdentifyNamesTheLayoutWithTheFourthStreamAtZero) {
  const streams_t p = mrope_positions(60000, 4, true);
  const dump made = simulate(128, imrope_24_20_20, p, exact(5000000.0, 128), dtype::float32);
  identify_input in;
  in.x = made.x, in.y = made.y;
  in.positions = stream_major(p);
  in.streams = 4;
  in.heads = heads;
  in.judged = dtype::float32;
  in.x_file = "x.npy", in.y_file = "y.npy", in.positions_file = "pos.npy";
  const identification id = identify(in);
  EXPECT_EQ(id.layout.rule, stream_rule::mrope_interleaved_4) << identification_text(id);
  EXPECT_EQ(id.layout.section, (std::vector<int>{24, 20, 20})) << identification_text(id);
  EXPECT_NEAR(id.base / 5000000.0, 1, 1e-6) << identification_text(id);
  EXPECT_TRUE(id.audit_passed) << identification_text(id);
}

}  // namespace
}  // namespace ropecheck::audit
