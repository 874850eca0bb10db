// spec/stream_layout.h's maps against each modeling source's rule written out by hand (the
// sources are cited in rope_spec.h): M-RoPE on the real Qwen2.5-VL-7B and Qwen3-VL-8B configs,
// and the three 2-D vision rules at head_dim 16 (8 pairs, 4 per axis).
#include <gtest/gtest.h>

#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

#include <nlohmann/json.hpp>

namespace ropecheck {
namespace {

const std::string configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";

TEST(StreamLayout, MRopeMapsFollowTheModelsSections) {
  const rope_spec qwen25 = read_spec(configs + "Qwen2.5-VL-7B-Instruct.json");
  ASSERT_EQ(qwen25.streams.streams(), 3);
  const auto map25 = pair_streams(qwen25.streams, qwen25.rotary_dim);
  ASSERT_EQ(map25.size(), 64u);
  for (int j = 0; j < 64; ++j) {
    EXPECT_EQ(map25[static_cast<std::size_t>(j)], j < 16 ? 0 : j < 40 ? 1 : 2) << j;
    EXPECT_EQ(frequency_of_pair(qwen25.streams, 128, j), j) << j;
  }
  const rope_spec qwen3 = read_spec(configs + "Qwen3-VL-8B-Instruct.json");
  const auto map3 = pair_streams(qwen3.streams, qwen3.rotary_dim);
  // [24, 20, 20] interleaved: T H W T H W … up to pair 59, then 60–63 temporal.
  for (int j = 0; j < 60; ++j) EXPECT_EQ(map3[static_cast<std::size_t>(j)], j % 3) << j;
  for (int j = 60; j < 64; ++j) EXPECT_EQ(map3[static_cast<std::size_t>(j)], 0) << j;
  EXPECT_EQ(stream_layout_problem(qwen3.streams, 128), "");
  EXPECT_NE(stream_layout_problem(qwen3.streams, 126), "");
}

TEST(StreamLayout, VisionMapsFollowTheModelingCode) {
  const stream_layout qwen{stream_rule::vision_rows_first, {}};
  const stream_layout llama4{stream_rule::vision_columns_first, {}};
  const stream_layout pixtral{stream_rule::vision_alternating, {}};
  const int f_split[] = {0, 2, 4, 6, 0, 2, 4, 6};
  const int f_alternating[] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(stream_of_pair(qwen, 16, j), j < 4 ? 0 : 1);
    EXPECT_EQ(stream_of_pair(llama4, 16, j), j < 4 ? 1 : 0);
    EXPECT_EQ(stream_of_pair(pixtral, 16, j), j < 4 ? 0 : 1);
    EXPECT_EQ(frequency_of_pair(qwen, 16, j), f_split[j]);
    EXPECT_EQ(frequency_of_pair(llama4, 16, j), f_split[j]);
    EXPECT_EQ(frequency_of_pair(pixtral, 16, j), f_alternating[j]);
  }
  const std::vector<double> theta = {1, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125};
  EXPECT_EQ(pair_frequencies(pixtral, theta),
            (std::vector<double>{1, 0.25, 0.0625, 0.015625, 0.5, 0.125, 0.03125, 0.0078125}));
  EXPECT_EQ(pair_frequencies(qwen, theta),
            (std::vector<double>{1, 0.25, 0.0625, 0.015625, 1, 0.25, 0.0625, 0.015625}));
  EXPECT_NE(stream_layout_problem(qwen, 10), "");  // 5 pairs do not split into two axes
  EXPECT_EQ(qwen.streams(), 2);
}

// --tower vision on the real configs: Qwen2.5-VL-7B's vision tower (hidden_size 1280 / 16
// heads = 80, base 10000 fixed in modeling_qwen2_vl.py VisionRotaryEmbedding, rotate_half) and
// Mistral-Small-3.1's Pixtral tower (head_dim 64, rope_theta 10000.0, modeling_pixtral.py
// rotate_half over freqs[::2] rows then freqs[1::2] columns). The text model still reads as before.
TEST(StreamLayout, VisionTowersReadFromTheirConfigs) {
  const spec_options vision{"", "vision"};
  const rope_spec qwen = read_spec(configs + "Qwen2.5-VL-7B-Instruct.json", vision);
  EXPECT_EQ(qwen.head_dim, 80);
  EXPECT_EQ(qwen.rotary_dim, 80);
  EXPECT_EQ(qwen.base, 10000.0);
  EXPECT_EQ(qwen.pair, pairing::half_split);
  EXPECT_EQ(qwen.streams.rule, stream_rule::vision_rows_first);
  EXPECT_EQ(type_of(qwen.scaling), scaling_type::none);
  EXPECT_EQ(read_spec(configs + "Qwen2.5-VL-7B-Instruct.json").streams.rule, stream_rule::mrope_sections);
  const rope_spec pixtral = read_spec(configs + "Mistral-Small-3.1-24B-Instruct-2503.json", vision);
  EXPECT_EQ(pixtral.head_dim, 64);
  EXPECT_EQ(pixtral.base, 10000.0);
  EXPECT_EQ(pixtral.pair, pairing::half_split);
  EXPECT_EQ(pixtral.streams.rule, stream_rule::vision_alternating);
  const rope_spec text = read_spec(configs + "Mistral-Small-3.1-24B-Instruct-2503.json");
  EXPECT_EQ(text.head_dim, 128);
  EXPECT_EQ(text.base, 1e9);
  EXPECT_FALSE(text.streams.multi());
  // A config without a vision tower, and an unknown tower, are refused by name.
  try {
    read_spec(configs + "Llama-3.1-8B.json", vision);
    ADD_FAILURE() << "read a vision tower from a text-only config";
  } catch (const spec_error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'vision_config'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_spec(configs + "Llama-3.1-8B.json", spec_options{"", "audio"}), spec_error);
}

// Llama 4's vision tower on a real config (Llama-4-Maverick-17B-128E, vision_config): the head
// width hidden_size / num_attention_heads = 1408 / 16 = 88 (modeling_llama4.py
// Llama4VisionRotaryEmbedding: freq_dim = hidden_size // num_attention_heads // 2 = 44 frequencies
// for 22 column and 22 row pairs), all of it rotated, rope_theta 10000, adjacent pairs
// (vision_apply_rotary_emb: view_as_complex over reshape(..., -1, 2)), columns first
// (freqs_x = frequencies_x = img_idx % idx, the column, before freqs_y). Its text model reads as
// llama4_text: head_dim 128, rope_theta 500000.0, adjacent, no scaling.
TEST(StreamLayout, Llama4VisionTowerFromItsConfig) {
  const rope_spec v = read_spec(configs + "Llama-4-Maverick-17B-128E.json", spec_options{"", "vision"});
  EXPECT_EQ(v.head_dim, 88);
  EXPECT_EQ(v.rotary_dim, 88);
  EXPECT_EQ(v.base, 10000.0);
  EXPECT_EQ(v.pair, pairing::adjacent);
  EXPECT_EQ(v.streams.rule, stream_rule::vision_columns_first);
  EXPECT_EQ(stream_layout_problem(v.streams, v.rotary_dim), "");
  EXPECT_EQ(stream_of_pair(v.streams, 88, 0), 1);   // pair 0: the column
  EXPECT_EQ(stream_of_pair(v.streams, 88, 22), 0);  // pair 22: the row
  EXPECT_EQ(frequency_of_pair(v.streams, 88, 21), 42);
  EXPECT_EQ(frequency_of_pair(v.streams, 88, 43), 42);
  const rope_spec t = read_spec(configs + "Llama-4-Maverick-17B-128E.json");
  EXPECT_EQ(t.head_dim, 128);
  EXPECT_EQ(t.rotary_dim, 128);
  EXPECT_EQ(t.base, 500000.0);
  EXPECT_EQ(t.pair, pairing::adjacent);
  EXPECT_FALSE(t.streams.multi());
  EXPECT_EQ(type_of(t.scaling), scaling_type::none);
}

// ropecheck's own "stream_layout" key (what `ropecheck identify` writes for a vision output):
// the three vision rules on a text-form spec; anything else, or together with M-RoPE sections,
// or a width that does not split into two axes, is refused by name.
TEST(StreamLayout, OwnStreamLayoutKey) {
  const auto read = [](const char* text) { return parse_spec(nlohmann::json::parse(text), "S.json"); };
  const rope_spec s = read(R"({"head_dim": 64, "pairing": "adjacent", "stream_layout": "vision_columns_first"})");
  EXPECT_EQ(s.streams.rule, stream_rule::vision_columns_first);
  EXPECT_EQ(s.streams.streams(), 2);
  const auto error = [&](const char* text) {
    try {
      read(text);
    } catch (const spec_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(R"({"head_dim": 64, "stream_layout": "mrope_sections"})").find("field 'stream_layout'"),
            std::string::npos);
  EXPECT_NE(error(R"({"head_dim": 64, "stream_layout": "vision_rows_first",
                      "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}})")
                .find("comes with M-RoPE sections"),
            std::string::npos);
  EXPECT_NE(error(R"({"head_dim": 18, "stream_layout": "vision_rows_first"})").find("field 'stream_layout'"),
            std::string::npos);
}

}  // namespace
}  // namespace ropecheck
