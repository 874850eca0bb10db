// ggml's four-stream interleaved M-RoPE (stream rule mrope_interleaved_4) as the spec states it:
// ropecheck's "stream_layout" key on the real Qwen3-VL-8B config, and spec/stream_layout.h's map
// against ggml's rule transcribed here from ggml-cpu ops.cpp ggml_mrope_cache_init (is_imrope,
// sections [24, 20, 20, 0] as llama.cpp's converter pads Qwen3-VL's mrope_section).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

namespace ropecheck {
namespace {

const std::string configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";

nlohmann::json qwen3_vl_config() {
  std::ifstream in(configs + "Qwen3-VL-8B-Instruct.json");
  return nlohmann::json::parse(in);
}

// ggml-cpu ops.cpp ggml_mrope_cache_init, is_imrope: 0 t, 1 h, 2 w, 3 e.
int ggml_imrope_stream(const int (&sections)[4], int pair) {
  const int sect_dims = sections[0] + sections[1] + sections[2] + sections[3];
  const int sector = pair % sect_dims;
  if (sector % 3 == 1 && sector < 3 * sections[1]) return 1;
  if (sector % 3 == 2 && sector < 3 * sections[2]) return 2;
  if (sector % 3 == 0 && sector < 3 * sections[0]) return 0;
  return 3;
}

TEST(ImropeLayout, TheStreamLayoutKeyMakesQwen3VlFourStreamsWithGgmlsMap) {
  nlohmann::json config = qwen3_vl_config();
  config["stream_layout"] = "mrope_interleaved_4";
  const rope_spec spec = parse_spec(config, "qwen3-vl-imrope.json");
  ASSERT_EQ(spec.streams.rule, stream_rule::mrope_interleaved_4);
  EXPECT_EQ(spec.streams.streams(), 4);
  EXPECT_EQ(spec.streams.section, (std::vector<int>{24, 20, 20}));
  EXPECT_EQ(stream_layout_problem(spec.streams, spec.rotary_dim), "");
  const int sections[4] = {24, 20, 20, 0};
  const auto map = pair_streams(spec.streams, spec.rotary_dim);
  ASSERT_EQ(map.size(), 64u);
  for (int j = 0; j < 64; ++j) {
    EXPECT_EQ(map[static_cast<std::size_t>(j)], ggml_imrope_stream(sections, j)) << j;
    EXPECT_EQ(frequency_of_pair(spec.streams, spec.rotary_dim, j), j) << j;
  }
  // By hand: T H W … to pair 59; 60 and 63 are temporal (≡ 0, below 72); 61 (≡ 1, not below 60)
  // and 62 (≡ 2, not below 60) fall to e, where transformers' interleaved rule puts t.
  EXPECT_EQ(map[58], 1);
  EXPECT_EQ(map[59], 2);
  EXPECT_EQ(map[60], 0);
  EXPECT_EQ(map[61], 3);
  EXPECT_EQ(map[62], 3);
  EXPECT_EQ(map[63], 0);
  const rope_spec transformers = parse_spec(qwen3_vl_config(), "qwen3-vl.json");
  const auto three = pair_streams(transformers.streams, transformers.rotary_dim);
  std::vector<int> differ;
  for (int j = 0; j < 64; ++j)
    if (three[static_cast<std::size_t>(j)] != map[static_cast<std::size_t>(j)]) differ.push_back(j);
  EXPECT_EQ(differ, (std::vector<int>{61, 62}));
}

// Sections whose t share runs short leave more pairs to e: [10, 20, 20] over 50 pairs puts
// pairs ≡ 0 (mod 3) from 30 on at e.
TEST(ImropeLayout, ShortTemporalSectionsSendTheRestToTheFourthStream) {
  const stream_layout l{stream_rule::mrope_interleaved_4, {10, 20, 20}};
  const int sections[4] = {10, 20, 20, 0};
  for (int j = 0; j < 50; ++j) EXPECT_EQ(stream_of_pair(l, 100, j), ggml_imrope_stream(sections, j)) << j;
  EXPECT_EQ(stream_of_pair(l, 100, 27), 0);
  EXPECT_EQ(stream_of_pair(l, 100, 30), 3);
  EXPECT_EQ(stream_of_pair(l, 100, 48), 3);
}

TEST(ImropeLayout, TheKeyNeedsInterleavedSections) {
  // Qwen2.5-VL's contiguous sections: IMROPE is interleaved, so the key contradicts the config.
  std::ifstream in(configs + "Qwen2.5-VL-7B-Instruct.json");
  nlohmann::json contiguous = nlohmann::json::parse(in);
  contiguous["stream_layout"] = "mrope_interleaved_4";
  try {
    (void)parse_spec(contiguous, "qwen25.json");
    FAIL() << "contiguous sections accepted";
  } catch (const spec_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("qwen25.json"), std::string::npos) << what;
    EXPECT_NE(what.find("stream_layout"), std::string::npos) << what;
    EXPECT_NE(what.find("interleaved M-RoPE sections"), std::string::npos) << what;
  }
  // No sections at all (a 1-D config).
  const nlohmann::json one_d = {{"head_dim", 64}, {"rope_theta", 10000.0}, {"stream_layout", "mrope_interleaved_4"}};
  EXPECT_THROW((void)parse_spec(one_d, "one-d.json"), spec_error);
}

}  // namespace
}  // namespace ropecheck
