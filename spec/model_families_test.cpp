// Every model family's pairing and rotated dims (the table is
// spec/model_families.cpp, each row citing its modeling source; docs/pairing.md), read from the
// real configs in fixtures/model-configs/ (sources in each file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "spec/model_families.h"
#include "spec/spec_reader.h"
#include "spec/spec_test_support.h"

namespace ropecheck {
namespace {

using nlohmann::json;
using namespace spec_testing;

struct expected {
  const char* file;
  const char* layer_type;
  int head_dim;
  int rotary_dim;
  double base;
  pairing pair;
};

TEST(ModelFamilies, RealConfigsReadWithTheirFamilysPairingAndDims) {
  const auto half = pairing::half_split;
  const auto adjacent = pairing::adjacent;
  for (const expected& e : {
           expected{"Llama-2-7b-hf.json", "", 128, 128, 10000, half},          // llama
           expected{"Llama-3.1-8B.json", "", 128, 128, 500000, half},          // llama
           expected{"Mistral-7B-v0.1.json", "", 128, 128, 10000, half},        // mistral
           expected{"Qwen2.5-7B-Instruct.json", "", 128, 128, 1e6, half},      // qwen2
           expected{"Qwen3-8B.json", "", 128, 128, 1e6, half},                 // qwen3
           expected{"Qwen3-Next-80B-A3B-Instruct.json", "", 256, 64, 1e7, half},  // qwen3_next
           expected{"gemma-2-9b-it.json", "", 256, 256, 10000, half},          // gemma2
           expected{"gemma-3-12b-it.json", "full_attention", 256, 256, 1e6, half},  // gemma3_text
           expected{"Phi-3.5-mini-instruct.json", "", 96, 96, 10000, half},    // phi3
           expected{"gpt-neox-20b.json", "", 96, 24, 10000, half},             // gpt_neox
           expected{"gpt-j-6b.json", "", 256, 64, 10000, adjacent},            // gptj
           expected{"DeepSeek-V3.json", "", 64, 64, 10000, adjacent},          // deepseek_v3
           expected{"chatglm3-6b.json", "", 128, 64, 10000, adjacent},         // chatglm
           // qwen3_moe: models/qwen3_moe/modeling_qwen3_moe.py rotate_half over the whole head.
           expected{"Qwen3-30B-A3B-Instruct-2507.json", "", 128, 128, 1e7, half},
           // phi: models/phi/modeling_phi.py rotate_half on q[..., :rotary_ndims], rotary_ndims =
           // head_dim * partial_rotary_factor (0.5 of 64); the config's rotary_dim 32 agrees.
           expected{"phi-1.json", "", 64, 32, 10000, half},
           // llama4 (text model llama4_text): models/llama4/modeling_llama4.py apply_rotary_emb,
           // view_as_complex over reshape(..., -1, 2): adjacent pairs over the whole head.
           expected{"Llama-4-Maverick-17B-128E.json", "", 128, 128, 500000, adjacent},
           // cohere: models/cohere/modeling_cohere.py rotate_half splits x[..., ::2] / x[..., 1::2]
           // and repeat_interleave's cos/sin: adjacent pairs over the whole head (4096 / 32).
           expected{"aya-23-8B.json", "", 128, 128, 10000, adjacent},
           // mixtral: models/mixtral/modeling_mixtral.py rotate_half over the whole head.
           expected{"Mixtral-8x7B-v0.1.json", "", 128, 128, 1e6, half},
           // gemma: models/gemma/modeling_gemma.py rotate_half over the given head_dim 256.
           expected{"gemma-2b.json", "", 256, 256, 10000, half},
           // qwen2_moe: models/qwen2_moe/modeling_qwen2_moe.py rotate_half over the whole head.
           expected{"Qwen1.5-MoE-A2.7B.json", "", 128, 128, 1e6, half},
           // deepseek_v2: DeepSeek-V2's modeling_deepseek.py apply_rotary_pos_emb views the
           // qk_rope_head_dim part as d/2 adjacent pairs (view(b, h, s, d // 2, 2)) before
           // rotate_half; transformers' models/deepseek_v2 rotates the same pairs as complex numbers.
           expected{"DeepSeek-V2-Lite.json", "", 64, 64, 10000, adjacent},
           // glm4v_moe (text model glm4v_moe_text): models/glm4v_moe/modeling_glm4v_moe.py
           // apply_multimodal_rotary_pos_emb, rotate_half on q[..., :rotary_dim]; rotary_dim =
           // head_dim * partial_rotary_factor (0.5 of 128).
           expected{"GLM-4.5V.json", "", 128, 64, 10000, half},
           // gemma4_text: models/gemma4/modeling_gemma4.py rotate_half over the layer's head:
           // global_head_dim 512 on full attention (proportional, 64 of 256 pairs at an angle),
           // head_dim 256 on sliding attention.
           expected{"gemma-4-31B-it.json", "full_attention", 512, 512, 1e6, half},
           expected{"gemma-4-31B-it.json", "sliding_attention", 256, 256, 10000, half},
       }) {
    const rope_spec s = read_spec(configs + e.file, {e.layer_type});
    EXPECT_EQ(s.head_dim, e.head_dim) << e.file;
    EXPECT_EQ(s.rotary_dim, e.rotary_dim) << e.file;
    EXPECT_EQ(s.base, e.base) << e.file;
    EXPECT_EQ(s.pair, e.pair) << e.file;
  }
}

// Every config in fixtures/model-configs/ has a stated outcome: it reads (the values are
// checked above and in spec_reader_test / current_formats_test), it needs a layer type, or it
// is refused for a named reason. A config added without an entry here fails the test, so none
// is read silently.
TEST(ModelFamilies, EveryFixtureConfigHasAStatedOutcome) {
  const std::map<std::string, std::string> outcome = {
      {"CodeLlama-7b-hf.json", "reads"},
      {"DeepSeek-V2-Lite.json", "reads"},
      {"DeepSeek-V3.json", "reads"},
      {"GLM-4.5V.json", "reads"},
      {"Llama-2-7b-hf.json", "reads"},
      {"Llama-3.1-8B-Instruct.json", "reads"},
      {"Llama-3.1-8B.json", "reads"},
      {"Llama-3.2-1B-Instruct.json", "reads"},
      {"Llama-3.2-1B.json", "reads"},
      {"Llama-4-Maverick-17B-128E.json", "reads"},
      {"Meta-Llama-3-8B.json", "reads"},
      {"Mistral-7B-Instruct-v0.2.json", "reads"},
      {"Mistral-7B-v0.1.json", "reads"},
      {"Mistral-Small-3.1-24B-Instruct-2503.json", "reads"},
      {"Mixtral-8x7B-v0.1.json", "reads"},
      {"Phi-3.5-mini-instruct.json", "reads"},
      {"Qwen1.5-MoE-A2.7B.json", "reads"},
      {"Qwen2.5-7B-Instruct.json", "reads"},
      {"Qwen2.5-VL-7B-Instruct.json", "reads"},
      {"Qwen3-30B-A3B-Instruct-2507.json", "reads"},
      {"Qwen3-8B.json", "reads"},
      {"Qwen3-Next-80B-A3B-Instruct.json", "reads"},
      {"Qwen3-VL-8B-Instruct.json", "reads"},
      {"aya-23-8B.json", "reads"},
      {"chatglm3-6b-32k.json", "'rope_ratio': 50 multiplies the base"},
      {"chatglm3-6b.json", "reads"},
      {"gemma-2-9b-it.json", "reads"},
      {"gemma-2b.json", "reads"},
      {"gemma-3-12b-it.json", "holds one RoPE setup per layer type"},
      {"gemma-3-1b-it.json", "holds one RoPE setup per layer type"},
      {"gemma-4-31B-it.json", "holds one RoPE setup per layer type"},
      {"glm-4-9b-chat.json", "'rope_ratio': 500 multiplies the base"},
      {"gpt-j-6b.json", "reads"},
      {"gpt-neox-20b.json", "reads"},
      {"phi-1.json", "reads"},
  };
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    if (entry.path().extension() != ".json") continue;
    const std::string file = entry.path().filename().string();
    ++seen;
    const auto it = outcome.find(file);
    ASSERT_NE(it, outcome.end()) << file << " has no stated outcome";
    const std::string error = error_of(load(file));
    if (it->second == "reads") EXPECT_EQ(error, "no error") << file;
    else EXPECT_NE(error.find(it->second), std::string::npos) << file << ": " << error;
  }
  EXPECT_EQ(seen, static_cast<int>(outcome.size()));
}

// DeepSeek-V2-Lite's YaRN block, as its config writes it (mscale and mscale_all_dim 0.707, not
// DeepSeek-V3's 1.0): read into the yarn type with every value kept.
TEST(ModelFamilies, DeepSeekV2LiteKeepsItsYarnBlock) {
  const rope_spec s = read_spec(configs + "DeepSeek-V2-Lite.json", {});
  ASSERT_EQ(type_of(s.scaling), scaling_type::yarn);
  const auto& yarn = std::get<yarn_scaling>(s.scaling);
  EXPECT_EQ(yarn.factor.numerator, 40);
  EXPECT_EQ(yarn.factor.denominator, 1);
  EXPECT_EQ(yarn.original_max_position_embeddings, 4096);
  EXPECT_EQ(yarn.beta_fast, 32);
  EXPECT_EQ(yarn.beta_slow, 1);
  EXPECT_EQ(yarn.mscale, 0.707);
  EXPECT_EQ(yarn.mscale_all_dim, 0.707);
  EXPECT_EQ(s.max_position_embeddings, 163840);
}

// GLM-4.5V's M-RoPE: contiguous sections [8, 12, 12] over the 32 rotated pairs (the
// mrope_section * 2 split in modeling_glm4v_moe.py; pair j takes stream i % 3 of its chunk).
TEST(ModelFamilies, Glm45VReadsItsContiguousSectionsOnHalfSplitPairs) {
  const rope_spec s = read_spec(configs + "GLM-4.5V.json", {});
  EXPECT_EQ(s.streams.rule, stream_rule::mrope_sections);
  EXPECT_EQ(s.streams.section, (std::vector<int>{8, 12, 12}));
  EXPECT_EQ(s.pair, pairing::half_split);
  EXPECT_EQ(s.rotary_dim, 64);
}

// ChatGLM's rope_ratio multiplies the base in ChatGLM3/GLM-4's modeling_chatglm.py and divides
// the positions in ChatGLM2's; the config cannot say which, so the spec must.
TEST(ModelFamilies, ChatGlmRopeRatioNeedsToSayWhatItScales) {
  json glm4 = load("glm-4-9b-chat.json");
  EXPECT_EQ(error_of(glm4),
            "S.json: field 'rope_ratio': 500 multiplies the base in ChatGLM3/GLM-4 code and divides "
            "the positions in ChatGLM2 code; give \"rope_ratio_applies_to\": \"base\" or \"positions\"");
  glm4["rope_ratio_applies_to"] = "base";
  const rope_spec s = parse_spec(glm4, "glm-4-9b-chat.json");
  EXPECT_EQ(s.base, 5000000.0);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.rotary_dim, 64);
  EXPECT_EQ(s.pair, pairing::adjacent);
  EXPECT_EQ(type_of(s.scaling), scaling_type::none);
  json glm3 = load("chatglm3-6b-32k.json");
  glm3["rope_ratio_applies_to"] = "positions";
  const rope_spec p = parse_spec(glm3, "chatglm3-6b-32k.json");
  EXPECT_EQ(p.base, 10000.0);
  EXPECT_EQ(type_of(p.scaling), scaling_type::linear);
  EXPECT_EQ(std::get<linear_scaling>(p.scaling).factor, 50.0);
  glm3["original_rope"] = false;
  EXPECT_EQ(error_of(glm3), "S.json: field 'original_rope': false selects a form modeling_chatglm.py "
                            "does not implement");
}

// A model_type outside the table has no pairing to assume: refused unless the spec gives one.
TEST(ModelFamilies, UnknownFamiliesMustGiveTheirPairing) {
  EXPECT_EQ(error_of(json{{"model_type", "mystery"}, {"head_dim", 64}, {"rope_theta", 10000}}),
            "S.json: field 'model_type': \"mystery\" has no pairing known to ropecheck "
            "(docs/pairing.md); give \"pairing\": \"half\" or \"adjacent\"");
  EXPECT_EQ(parse_spec(json{{"model_type", "mystery"}, {"head_dim", 64}, {"rope_theta", 10000},
                            {"pairing", "adjacent"}}, "S").pair,
            pairing::adjacent);
  // GLM (transformers' own) rotates adjacent pairs of the first half by default; DeepSeek-V3 in
  // transformers says its layout in rope_interleave.
  const rope_spec glm = parse_spec(json{{"model_type", "glm"}, {"head_dim", 128}, {"rope_theta", 10000}}, "S");
  EXPECT_EQ(glm.rotary_dim, 64);
  EXPECT_EQ(glm.pair, pairing::adjacent);
  EXPECT_EQ(parse_spec(json{{"model_type", "deepseek_v3"}, {"qk_rope_head_dim", 64}, {"rope_theta", 10000},
                            {"rope_interleave", false}}, "S").pair,
            pairing::half_split);
  for (const auto& f : spec_families::catalog()) EXPECT_FALSE(f.source.empty()) << f.model_type;
}

}  // namespace
}  // namespace ropecheck
