// The reference's four-stream interleaved M-RoPE (ggml's GGML_ROPE_TYPE_IMROPE, rule
// mrope_interleaved_4) on the real Qwen3-VL-8B config: against an independent long double
// computation written here with its own pair → stream rule (ggml-cpu ops.cpp
// ggml_mrope_cache_init, is_imrope, transcribed), at the positions llama.cpp gives an image token
// (mtmd-helper.cpp set_position_mrope_2d: t = p0, h = p0 + row, w = p0 + col, e = 0); with e = t
// it is transformers' three-stream interleaved M-RoPE, and with e = 0 the two pairs past the
// sections (61, 62) are not rotated at all.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "reference/double_tier.h"
#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/test_support.h"
#include "spec/spec_reader.h"

namespace ropecheck::reference {
namespace {

using testing::norm;
using testing::relative_distance;
using testing::tight_tolerance;

const std::string configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";

// The real config's sections, base and pairing; the four-stream rule set here (the spec
// reader's "stream_layout" key for it is spec_imrope_layout_test's).
rope_spec qwen3_vl(bool four_streams) {
  rope_spec spec = read_spec(configs + "Qwen3-VL-8B-Instruct.json");
  if (four_streams) spec.streams.rule = stream_rule::mrope_interleaved_4;
  return spec;
}

// ggml's assignment with llama.cpp's sections [24, 20, 20, 0]: 0 t, 1 h, 2 w, 3 e.
int ggml_stream(int pair) {
  const int sections[4] = {24, 20, 20, 0};
  const int sector = pair % 64;
  if (sector % 3 == 1 && sector < 3 * sections[1]) return 1;
  if (sector % 3 == 2 && sector < 3 * sections[2]) return 2;
  if (sector % 3 == 0 && sector < 3 * sections[0]) return 0;
  return 3;
}

// The independent value: half-split pairs (j, j + 64) of a 128-wide head, θ_j = 5e6^(−2j/128)
// and the rotation in long double.
std::vector<long double> independent(const std::vector<double>& x, const std::array<std::int64_t, 4>& p) {
  std::vector<long double> y(x.begin(), x.end());
  for (int j = 0; j < 64; ++j) {
    const long double theta = std::pow(5000000.0L, -2.0L * j / 128.0L);
    const long double phi = static_cast<long double>(p[static_cast<std::size_t>(ggml_stream(j))]) * theta;
    const long double c = std::cos(phi), s = std::sin(phi);
    y[j] = x[j] * c - x[j + 64] * s;
    y[j + 64] = x[j] * s + x[j + 64] * c;
  }
  return y;
}

std::vector<double> random_head(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(128);
  for (double& v : x) v = normal(rng);
  return x;
}

TEST(ReferenceImrope, AgreesWithAnIndependentComputationAtLlamaCppImagePositions) {
  const rope_spec spec = qwen3_vl(true);
  ASSERT_EQ(spec.streams.rule, stream_rule::mrope_interleaved_4);
  const auto params = params_from_spec<mp_real>(spec);
  for (int j = 0; j < 64; ++j) EXPECT_EQ(position_stream(spec.streams, 128, j), ggml_stream(j)) << j;
  EXPECT_EQ(position_stream_count(spec.streams), 4);
  // An image at p0 = 1000 (row 7, col 12) as llama.cpp places it, and a text token at 1100
  // (llama-graph.cpp llm_graph_input_pos: t = h = w = p, e = 0).
  for (const std::array<std::int64_t, 4> p : {std::array<std::int64_t, 4>{1000, 1007, 1012, 0},
                                                std::array<std::int64_t, 4>{1100, 1100, 1100, 0}}) {
    const std::vector<double> x = random_head(static_cast<std::uint64_t>(p[1]));
    std::vector<mp_real> xm(x.begin(), x.end());
    const auto y = rope_streams<mp_real>(xm, p, params, spec.streams);
    const auto want = independent(x, p);
    const mp_real scale = norm(xm);
    mp_real worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, mp_real(abs(y[i] - mp_real(static_cast<double>(want[i])))));
    // long double angles up to 1100 rad and a double-rounded comparison: ~1e-16 of the norm.
    EXPECT_LE(static_cast<double>(worst / scale), 1e-15) << p[0];
    // The double tier rotates the same way (each entry correctly rounded).
    const double_tier tier(spec, std::vector<std::int64_t>(p.begin(), p.end()));
    std::vector<double> row(128), yd(128);
    tier.stream_cos_sin(p, row);
    tier.rotate(x, row, yd);
    for (std::size_t i = 0; i < yd.size(); ++i)
      EXPECT_NEAR(yd[i], static_cast<double>(want[i]), 1e-15 * static_cast<double>(scale)) << i;
    // Pairs 61 and 62 at e = 0: not rotated.
    for (const int j : {61, 62}) {
      EXPECT_EQ(y[static_cast<std::size_t>(j)], xm[static_cast<std::size_t>(j)]) << j;
      EXPECT_EQ(y[static_cast<std::size_t>(j + 64)], xm[static_cast<std::size_t>(j + 64)]) << j;
    }
  }
}

TEST(ReferenceImrope, WithTheFourthStreamAtTheTemporalPositionItIsTransformersInterleavedMRope) {
  const rope_spec four = qwen3_vl(true), three = qwen3_vl(false);
  ASSERT_EQ(three.streams.rule, stream_rule::mrope_interleaved);
  const auto params = params_from_spec<mp_real>(four);
  const std::vector<double> x = random_head(3);
  const std::vector<mp_real> xm(x.begin(), x.end());
  const std::array<std::int64_t, 4> e_is_t = {40, 47, 52, 40};
  const std::array<std::int64_t, 3> thw = {40, 47, 52};
  const auto y4 = rope_streams<mp_real>(xm, e_is_t, params, four.streams);
  const auto y3 = rope_streams<mp_real>(xm, thw, params, three.streams);
  EXPECT_LE(relative_distance(y4, y3, norm(xm)), tight_tolerance);
  // e = 0 (llama.cpp) differs from transformers at pairs 61 and 62 only.
  const std::array<std::int64_t, 4> e_is_0 = {40, 47, 52, 0};
  const auto y0 = rope_streams<mp_real>(xm, e_is_0, params, four.streams);
  std::vector<int> differ;
  for (int j = 0; j < 64; ++j)
    if (abs(y0[static_cast<std::size_t>(j)] - y3[static_cast<std::size_t>(j)]) > tight_tolerance * norm(xm))
      differ.push_back(j);
  EXPECT_EQ(differ, (std::vector<int>{61, 62}));
  // Three positions for a four-stream layout are refused.
  EXPECT_THROW((void)rope_streams<mp_real>(xm, thw, params, four.streams), reference_error);
}

}  // namespace
}  // namespace ropecheck::reference
