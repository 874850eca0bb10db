// The M-RoPE reference form on the real Qwen2.5-VL-7B and Qwen3-VL-8B configs
// (fixtures/model-configs/): its stream map against the modeling code's rule written out by hand,
// equal streams give 1-D RoPE (the complex form, an independent library), and each pair turns
// by its own stream's position only.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/double_tier.h"
#include "reference/frequencies.h"
#include "reference/test_support.h"
#include "spec/spec_reader.h"

#include <filesystem>
#include <fstream>

namespace ropecheck::reference {
namespace {

using testing::norm;
using testing::random_vector;
using testing::relative_distance;
using testing::tight_tolerance;

const std::string configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";

// Qwen2.5-VL: mrope_section [16, 24, 24], contiguous: pairs 0–15 temporal, 16–39 height, 40–63
// width. Qwen3-VL: [24, 20, 20] interleaved: T H W T H W … up to pair 59, then 60–63 temporal.
TEST(ReferenceMRope, StreamsFollowTheModelsSections) {
  const rope_spec qwen25 = read_spec(configs + "Qwen2.5-VL-7B-Instruct.json");
  ASSERT_EQ(qwen25.streams.section, (std::vector<int>{16, 24, 24}));
  ASSERT_EQ(qwen25.streams.rule, stream_rule::mrope_sections);
  for (int j = 0; j < 64; ++j)
    EXPECT_EQ(position_stream(qwen25.streams, 128, j), j < 16 ? 0 : j < 40 ? 1 : 2) << j;
  const rope_spec qwen3 = read_spec(configs + "Qwen3-VL-8B-Instruct.json");
  ASSERT_EQ(qwen3.streams.section, (std::vector<int>{24, 20, 20}));
  ASSERT_EQ(qwen3.streams.rule, stream_rule::mrope_interleaved);
  EXPECT_EQ(qwen3.base, 5000000.0);
  const int expected_first[] = {0, 1, 2, 0, 1, 2};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(position_stream(qwen3.streams, 128, j), expected_first[j]) << j;
  EXPECT_EQ(position_stream(qwen3.streams, 128, 58), 1);
  EXPECT_EQ(position_stream(qwen3.streams, 128, 59), 2);
  for (int j = 60; j < 64; ++j) EXPECT_EQ(position_stream(qwen3.streams, 128, j), 0) << j;
}

TEST(ReferenceMRope, EqualStreamsAreOneDimensionalRopeAndEachPairFollowsItsStream) {
  std::mt19937_64 rng(16);
  for (const char* file : {"Qwen2.5-VL-7B-Instruct.json", "Qwen3-VL-8B-Instruct.json"}) {
    const rope_spec spec = read_spec(configs + file);
    const auto params = params_from_spec<mp_real>(spec);
    const auto x = random_vector(rng, spec.head_dim);
    const mp_real scale = norm(x);
    for (std::int64_t m : {0, 1, 7, 4096, 131071}) {
      const auto one_d = rope_complex<mp_real>(x, m, params);
      const std::array<std::int64_t, 3> equal = {m, m, m};
      EXPECT_LE(relative_distance(rope_streams<mp_real>(x, equal, params, spec.streams), one_d, scale),
                tight_tolerance)
          << file << " m = " << m;
    }
    // Image-grid positions (t, h, w) = (3, 17, 42): pair j equals the 1-D rotation at its own
    // stream's position.
    const std::array<std::int64_t, 3> p = {3, 17, 42};
    const auto y = rope_streams<mp_real>(x, p, params, spec.streams);
    std::array<std::vector<mp_real>, 3> by_stream;
    for (std::size_t s = 0; s < 3; ++s) by_stream[s] = rope_complex<mp_real>(x, p[s], params);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const auto& want = by_stream[static_cast<std::size_t>(position_stream(spec.streams, spec.rotary_dim, j))];
      const int a = j, b = j + spec.rotary_dim / 2;  // both configs pair half-split (qwen2_vl code)
      EXPECT_LE(mp_real(abs(y[a] - want[a]) + abs(y[b] - want[b])) / scale, tight_tolerance)
          << file << " pair " << j;
    }
  }
}

// 2-D vision RoPE: the frequency each pair takes, written out from each modeling
// source for head_dim 16 (8 pairs, 4 per axis), θ_i = base^(−2i/16):
//   Qwen2-VL vision (VisionRotaryEmbedding(8): θ'_k = base^(−2k/8) = θ_{2k}; [h·θ', w·θ']):
//     pairs 0–3 row with θ_0, θ_2, θ_4, θ_6; pairs 4–7 column with the same.
//   Llama 4 vision (freq_dim 8, rope_freq θ'_k = base^(−2k/8); [x·θ', y·θ'], x the column):
//     pairs 0–3 column, 4–7 row, θ_0, θ_2, θ_4, θ_6 each.
//   Pixtral (freqs[::2] for rows, freqs[1::2] for columns): pairs 0–3 row with θ_0, θ_2, θ_4,
//     θ_6; pairs 4–7 column with θ_1, θ_3, θ_5, θ_7.
TEST(ReferenceVisionRope, StreamsAndFrequenciesFollowTheModelingCode) {
  const int f_split[] = {0, 2, 4, 6, 0, 2, 4, 6};
  const int f_alternating[] = {0, 2, 4, 6, 1, 3, 5, 7};
  const stream_layout qwen{stream_rule::vision_rows_first, {}};
  const stream_layout llama4{stream_rule::vision_columns_first, {}};
  const stream_layout pixtral{stream_rule::vision_alternating, {}};
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(position_stream(qwen, 16, j), j < 4 ? 0 : 1) << j;
    EXPECT_EQ(stream_frequency_index(qwen, 16, j), f_split[j]) << j;
    EXPECT_EQ(position_stream(llama4, 16, j), j < 4 ? 1 : 0) << j;
    EXPECT_EQ(stream_frequency_index(llama4, 16, j), f_split[j]) << j;
    EXPECT_EQ(position_stream(pixtral, 16, j), j < 4 ? 0 : 1) << j;
    EXPECT_EQ(stream_frequency_index(pixtral, 16, j), f_alternating[j]) << j;
  }
  EXPECT_THROW(position_stream(qwen, 10, 0), reference_error);  // 5 pairs do not split in two
}

// Each vision pair is the 1-D rotation of its own axis's position at its own frequency: against
// the complex form (an independent library) with θ_{f(j)} given explicitly.
TEST(ReferenceVisionRope, EachPairTurnsByItsAxisAtItsFrequency) {
  std::mt19937_64 rng(4);
  for (const auto rule : {stream_rule::vision_rows_first, stream_rule::vision_columns_first,
                          stream_rule::vision_alternating}) {
    for (const pairing pair : {pairing::half_split, pairing::adjacent}) {
      rope_spec spec;
      spec.head_dim = 80;  // Qwen2.5-VL vision: hidden 1280 / 16 heads
      spec.rotary_dim = 80;
      spec.pair = pair;
      spec.streams.rule = rule;
      const auto params = params_from_spec<mp_real>(spec);
      const auto theta = inverse_frequencies<mp_real>(80, mp_real(10000));
      const auto x = random_vector(rng, 80);
      const mp_real scale = norm(x);
      const std::array<std::int64_t, 2> rc = {13, 27};
      const auto y = rope_streams<mp_real>(x, rc, params, spec.streams);
      for (int j = 0; j < 40; ++j) {
        auto one = params;
        one.explicit_inverse_frequencies = theta;
        one.explicit_inverse_frequencies[static_cast<std::size_t>(j)] =
            theta[static_cast<std::size_t>(stream_frequency_index(spec.streams, 80, j))];
        const auto want = rope_complex<mp_real>(x, rc[static_cast<std::size_t>(position_stream(spec.streams, 80, j))], one);
        const auto [a, b] = pair_of(pair, 80, j);
        EXPECT_LE(mp_real(abs(y[a] - want[a]) + abs(y[b] - want[b])) / scale, tight_tolerance)
            << to_string(rule) << " " << to_string(pair) << " pair " << j;
      }
    }
  }
}

// The double tier with streams: equal streams give 1-D RoPE's very row; distinct streams rotate
// within the tier's bound (3·2^-53·‖pair‖ per output, double_tier.h) of the 256-bit form.
TEST(DoubleTierStreams, RowsComeFromEachPairsStreamWithinTheTiersBound) {
  std::mt19937_64 rng(23);
  rope_spec vision;
  vision.head_dim = vision.rotary_dim = 80;
  vision.pair = pairing::adjacent;
  vision.streams.rule = stream_rule::vision_alternating;
  for (const rope_spec& spec : {read_spec(configs + "Qwen2.5-VL-7B-Instruct.json"),
                                read_spec(configs + "Qwen3-VL-8B-Instruct.json"), vision}) {
    const int streams = spec.streams.streams();
    const std::vector<std::int64_t> p = streams == 3 ? std::vector<std::int64_t>{3, 17, 42}
                                                     : std::vector<std::int64_t>{17, 42};
    const double_tier tier(spec, p);
    const auto params = params_from_spec<mp_real>(spec);
    const auto x = random_vector(rng, spec.head_dim);
    std::vector<double> xd(x.size()), y(x.size()), row(static_cast<std::size_t>(spec.rotary_dim));
    for (std::size_t i = 0; i < x.size(); ++i) xd[i] = x[i].convert_to<double>();
    tier.stream_cos_sin(p, row);
    tier.rotate(xd, row, y);
    std::vector<mp_real> xm(xd.begin(), xd.end());
    const auto want = rope_streams<mp_real>(xm, p, params, spec.streams);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const auto [a, b] = pair_of(spec.pair, spec.rotary_dim, j);
      const double r = std::hypot(xd[a], xd[b]);
      EXPECT_LE(std::abs(y[a] - want[a].convert_to<double>()), double_tier_pair_error_bound * r * 1.0000001) << j;
      EXPECT_LE(std::abs(y[b] - want[b].convert_to<double>()), double_tier_pair_error_bound * r * 1.0000001) << j;
    }
    // Equal streams: 1-D RoPE's row, bit for bit (M-RoPE keeps θ_j, so the 1-D tier is the spec's
    // own without the layout).
    if (streams == 3) {
      rope_spec one_d = spec;
      one_d.streams = {};
      const double_tier flat(one_d, std::vector<std::int64_t>{17});
      const double_tier same(spec, std::vector<std::int64_t>{17});
      const std::vector<std::int64_t> equal = {17, 17, 17};
      same.stream_cos_sin(equal, row);
      const auto want_row = flat.cos_sin(17);
      EXPECT_TRUE(std::equal(row.begin(), row.end(), want_row.begin()));
    }
  }
}

// GLM-4.1V's text M-RoPE, written out from transformers models/glm4v/modeling_glm4v.py
// (Glm4vTextRotaryEmbedding and apply_multimodal_rotary_pos_emb) and compared with the reference
// form on a spec the reader parses from a GLM-4.1V-style config. The modeling code:
//   inv_freq[k] = base^(−2k/dim), dim = head_dim·partial_rotary_factor (k < dim/2);
//   freqs[s] = p_s·inv_freq, emb[s] = cat(freqs[s], freqs[s]) (dim entries) for s = t, h, w;
//   cos = cat(chunk i of emb[i % 3] for the split mrope_section·2), then cos[..., :dim/2]
//   repeat_interleave(2), and the same for sin;
//   q_rot = q[..., :dim]: q_rot·cos + rotate_half_llm(q_rot)·sin, rotate_half_llm(x) =
//   stack(−x[..., 1::2], x[..., 0::2]).flatten(−1); q[..., dim:] passes through.
// The config values here are GLM-4.1V-9B-Thinking's as GLM's own modeling expects them (hidden
// 4096, 32 heads, partial_rotary_factor 0.5, rope_theta 10000, mrope_section [8, 12, 12]); no
// copy of that model's config.json with a citable source was found, so they are not a fixture.
TEST(ReferenceMRope, Glm41vTextRopeFollowsItsModelingCode) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ropecheck_glm4v_" + std::to_string(std::random_device{}()) + ".json");
  std::ofstream(file) << R"({
      "model_type": "glm4v",
      "text_config": {"model_type": "glm4v_text", "hidden_size": 4096, "num_attention_heads": 32,
                      "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
                      "rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]}}})";
  const rope_spec spec = read_spec(file);
  std::filesystem::remove(file);
  ASSERT_EQ(spec.head_dim, 128);
  ASSERT_EQ(spec.rotary_dim, 64);
  ASSERT_EQ(spec.pair, pairing::adjacent);
  ASSERT_EQ(spec.streams.rule, stream_rule::mrope_sections);  // GLM's variant is no new rule
  ASSERT_EQ(spec.streams.section, (std::vector<int>{8, 12, 12}));
  const auto params = params_from_spec<mp_real>(spec);
  std::mt19937_64 rng(41);
  const auto q = random_vector(rng, 128);
  const mp_real scale = norm(q);
  const int dim = 64;
  for (const std::array<std::int64_t, 3> p : {std::array<std::int64_t, 3>{5, 5, 5}, {9, 12, 30}, {100, 3, 77}}) {
    // emb per stream, then the section split of mrope_section·2 = [8, 12, 12, 8, 12, 12].
    std::array<std::vector<mp_real>, 3> emb;
    for (std::size_t s = 0; s < 3; ++s)
      for (int rep = 0; rep < 2; ++rep)
        for (int k = 0; k < dim / 2; ++k)
          emb[s].push_back(mp_real(p[s]) / pow(mp_real(10000), mp_real(2 * k) / dim));
    const int split[] = {8, 12, 12, 8, 12, 12};
    std::vector<mp_real> angle;
    for (int i = 0, at = 0; i < 6; at += split[i], ++i)
      for (int e = at; e < at + split[i]; ++e) angle.push_back(emb[static_cast<std::size_t>(i % 3)][static_cast<std::size_t>(e)]);
    std::vector<mp_real> cos_i, sin_i;  // [..., :dim/2].repeat_interleave(2)
    for (int e = 0; e < dim / 2; ++e)
      for (int r = 0; r < 2; ++r) cos_i.push_back(cos(angle[e])), sin_i.push_back(sin(angle[e]));
    std::vector<mp_real> want(q);
    for (int d = 0; d < dim; ++d) {
      const mp_real rotated = d % 2 == 0 ? mp_real(-q[d + 1]) : q[d - 1];  // rotate_half_llm
      want[d] = q[d] * cos_i[d] + rotated * sin_i[d];
    }
    EXPECT_LE(relative_distance(rope_streams<mp_real>(q, p, params, spec.streams), want, scale), tight_tolerance)
        << p[0] << ", " << p[1] << ", " << p[2];
  }
}

// Llama 4's vision RoPE on its real config (fixtures/model-configs/Llama-4-Maverick-17B-128E.json,
// --tower vision), written out from transformers models/llama4/modeling_llama4.py
// Llama4VisionRotaryEmbedding and vision_apply_rotary_emb:
//   freq_dim = hidden_size // num_attention_heads // 2 = 44;
//   rope_freq[k] = rope_theta^(−(2k)/freq_dim) for k < 22;
//   freqs_x = ((x + 1)·rope_freq).repeat_interleave(2), freqs_y likewise, x = img_idx % idx the
//   column and y = img_idx // idx the row; freqs = cat(freqs_x, freqs_y)[..., ::2] (44 angles);
//   q viewed as 44 complex numbers (q[2j] + i·q[2j+1]) times e^{i·freqs[j]}.
// ropecheck's positions for a patch are (row + 1, col + 1).
TEST(ReferenceVisionRope, Llama4VisionFollowsItsModelingCode) {
  const rope_spec spec = read_spec(configs + "Llama-4-Maverick-17B-128E.json", spec_options{"", "vision"});
  ASSERT_EQ(spec.head_dim, 88);
  const auto params = params_from_spec<mp_real>(spec);
  std::mt19937_64 rng(44);
  const auto q = random_vector(rng, 88);
  const mp_real scale = norm(q);
  const int freq_dim = 1408 / 16 / 2;
  for (const auto& [row, col] : {std::pair{0, 0}, std::pair{3, 17}, std::pair{23, 5}}) {
    std::vector<mp_real> rope_freq;
    for (int k = 0; k < freq_dim / 2; ++k) rope_freq.push_back(1 / pow(mp_real(10000), mp_real(2 * k) / freq_dim));
    std::vector<mp_real> cat;  // cat(freqs_x, freqs_y), each repeat_interleave(2)
    for (const int coordinate : {col, row})
      for (const mp_real& f : rope_freq)
        for (int r = 0; r < 2; ++r) cat.push_back(mp_real(coordinate + 1) * f);
    std::vector<mp_real> want(q);
    for (int j = 0; j < freq_dim; ++j) {
      const mp_real& angle = cat[static_cast<std::size_t>(2 * j)];  // [..., ::2]
      want[2 * j] = q[2 * j] * cos(angle) - q[2 * j + 1] * sin(angle);
      want[2 * j + 1] = q[2 * j] * sin(angle) + q[2 * j + 1] * cos(angle);
    }
    const std::array<std::int64_t, 2> rc = {row + 1, col + 1};
    EXPECT_LE(relative_distance(rope_streams<mp_real>(q, rc, params, spec.streams), want, scale), tight_tolerance)
        << row << ", " << col;
  }
}

}  // namespace
}  // namespace ropecheck::reference
