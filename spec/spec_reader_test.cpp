// The spec reader accepts Hugging Face config.json files as they are published and refuses
// bad specs with one line naming the file, the field and the value.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/spec_reader.h"
#include "spec/spec_test_support.h"

namespace ropecheck {
namespace {

using nlohmann::json;
using namespace spec_testing;

TEST(SpecReader, ReadsTheRealModelConfigs) {
  const std::string dir = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";
  struct expected {
    const char* file;
    int head_dim;
    int rotary_dim;
    double base;
    pairing pair;
  };
  for (const auto& e : {
           expected{"Llama-2-7b-hf.json", 128, 128, 10000, pairing::half_split},
           expected{"Meta-Llama-3-8B.json", 128, 128, 500000, pairing::half_split},
           expected{"Mistral-7B-Instruct-v0.2.json", 128, 128, 1e6, pairing::half_split},
           expected{"CodeLlama-7b-hf.json", 128, 128, 1e6, pairing::half_split},
           expected{"Qwen2.5-7B-Instruct.json", 128, 128, 1e6, pairing::half_split},
           expected{"gpt-neox-20b.json", 96, 24, 10000, pairing::half_split},
           expected{"gpt-j-6b.json", 256, 64, 10000, pairing::adjacent},
           expected{"gemma-2-9b-it.json", 256, 256, 10000, pairing::half_split},
       }) {
    const rope_spec spec = read_spec(dir + e.file);
    EXPECT_EQ(spec.head_dim, e.head_dim) << e.file;
    EXPECT_EQ(spec.rotary_dim, e.rotary_dim) << e.file;
    EXPECT_EQ(spec.base, e.base) << e.file;
    EXPECT_EQ(spec.pair, e.pair) << e.file;
  }
}

TEST(SpecReader, ReadsTheScaledModelConfigs) {
  const std::string dir = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";
  for (const char* file : {"Llama-3.1-8B.json", "Llama-3.1-8B-Instruct.json"}) {
    const rope_spec s = read_spec(dir + file);
    EXPECT_EQ(type_of(s.scaling), scaling_type::llama3) << file;
    EXPECT_EQ(std::get<llama3_scaling>(s.scaling).factor, 8.0);
    EXPECT_EQ(std::get<llama3_scaling>(s.scaling).low_freq_factor, 1.0);
    EXPECT_EQ(std::get<llama3_scaling>(s.scaling).high_freq_factor, 4.0);
    EXPECT_EQ(std::get<llama3_scaling>(s.scaling).original_max_position_embeddings, 8192);
  }
  for (const char* file : {"Llama-3.2-1B.json", "Llama-3.2-1B-Instruct.json"}) {
    const rope_spec s = read_spec(dir + file);
    EXPECT_EQ(s.head_dim, 64) << file;
    EXPECT_EQ(type_of(s.scaling), scaling_type::llama3);
    EXPECT_EQ(std::get<llama3_scaling>(s.scaling).factor, 32.0);
  }
  const rope_spec ds = read_spec(dir + "DeepSeek-V3.json");
  EXPECT_EQ(ds.rotary_dim, 64);
  EXPECT_EQ(ds.pair, pairing::adjacent);
  EXPECT_EQ(type_of(ds.scaling), scaling_type::yarn);
  EXPECT_EQ(std::get<yarn_scaling>(ds.scaling).factor, (factor_ratio{40, 1}));
  EXPECT_EQ(std::get<yarn_scaling>(ds.scaling).beta_fast, 32.0);
  EXPECT_EQ(std::get<yarn_scaling>(ds.scaling).beta_slow, 1.0);
  EXPECT_EQ(std::get<yarn_scaling>(ds.scaling).mscale, 1.0);
  EXPECT_EQ(std::get<yarn_scaling>(ds.scaling).mscale_all_dim, 1.0);
  EXPECT_EQ(std::get<yarn_scaling>(ds.scaling).original_max_position_embeddings, 4096);
  EXPECT_EQ(ds.max_position_embeddings, 163840);
  EXPECT_TRUE(std::get<yarn_scaling>(ds.scaling).truncate);

  const rope_spec phi = read_spec(dir + "Phi-3.5-mini-instruct.json");
  EXPECT_EQ(phi.rotary_dim, 96);
  EXPECT_EQ(type_of(phi.scaling), scaling_type::longrope);
  ASSERT_EQ(std::get<longrope_scaling>(phi.scaling).long_factor.size(), 48u);
  ASSERT_EQ(std::get<longrope_scaling>(phi.scaling).short_factor.size(), 48u);
  EXPECT_EQ(std::get<longrope_scaling>(phi.scaling).long_factor.front(), 1.0800000429153442);
  EXPECT_EQ(std::get<longrope_scaling>(phi.scaling).long_factor.back(), 64.83999633789062);
  EXPECT_EQ(std::get<longrope_scaling>(phi.scaling).short_factor.front(), 1.0);
  EXPECT_EQ(std::get<longrope_scaling>(phi.scaling).original_max_position_embeddings, 4096);
  EXPECT_EQ(phi.max_position_embeddings, 131072);
  // L0 at the top level (Phi-3): s = max_position_embeddings / L0, resolved by the reader.
  EXPECT_EQ(std::get<longrope_scaling>(phi.scaling).factor, (factor_ratio{131072, 4096}));
  EXPECT_TRUE(depends_on_sequence_length(phi));

  // Qwen2.5's documented YaRN block, added to its config as the Qwen docs say.
  std::ifstream in(dir + "Qwen2.5-7B-Instruct.json");
  json qwen = json::parse(in);
  EXPECT_EQ(type_of(parse_spec(qwen, "Q").scaling), scaling_type::none);
  qwen["rope_scaling"] = qwen["_documented_yarn_rope_scaling"]["rope_scaling"];
  const rope_spec q = parse_spec(qwen, "Q");
  EXPECT_EQ(type_of(q.scaling), scaling_type::yarn);
  EXPECT_EQ(std::get<yarn_scaling>(q.scaling).factor, (factor_ratio{4, 1}));
  EXPECT_EQ(std::get<yarn_scaling>(q.scaling).original_max_position_embeddings, 32768);

  // M-RoPE (Qwen2-VL's "mrope" type) is 1-D frequencies with three position streams.
  const rope_spec vl = read_spec(dir + "Qwen2.5-VL-7B-Instruct.json");
  EXPECT_EQ(type_of(vl.scaling), scaling_type::none);
  EXPECT_EQ(vl.streams.section, (std::vector<int>{16, 24, 24}));
  EXPECT_EQ(vl.streams.rule, stream_rule::mrope_sections);
  EXPECT_EQ(type_of(parse_spec(json{{"head_dim", 64}, {"rope_scaling", {{"rope_type", "default"}}}}, "S")
                        .scaling),
            scaling_type::none);
}

TEST(SpecReader, ReadsEveryScalingSpelling) {
  const json base = {{"head_dim", 8}, {"max_position_embeddings", 2048}};
  auto with = [&](json extra) {
    json c = base;
    c.update(extra);
    return parse_spec(c, "S.json");
  };
  EXPECT_EQ(type_of(with({{"rope_scaling", {{"type", "linear"}, {"factor", 2}}}}).scaling),
            scaling_type::linear);
  EXPECT_EQ(type_of(with({{"rope_scaling", {{"rope_type", "ntk"}, {"factor", 2}}}}).scaling),
            scaling_type::ntk);
  const auto dyn = with({{"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 2}}},
                         {"sequence_length", 5000},
                         {"scaling_convention", "vllm"}});
  EXPECT_EQ(type_of(dyn.scaling), scaling_type::dynamic);
  EXPECT_EQ(dyn.sequence_length, 5000);
  EXPECT_EQ(convention_of(dyn.scaling), scaling_convention::vllm);
  EXPECT_FALSE(depends_on_sequence_length(dyn));  // vLLM's "dynamic" is static
  const auto su = with({{"rope_scaling",
                         {{"type", "su"},
                          {"long_factor", {1, 2, 3, 4}},
                          {"short_factor", {1, 1, 1, 1}}}},
                        {"original_max_position_embeddings", 1024}});
  EXPECT_EQ(type_of(su.scaling), scaling_type::longrope);
  EXPECT_EQ(std::get<longrope_scaling>(su.scaling).long_factor[3], 4.0);
  // ggml's YaRN spelling maps onto the same fields.
  const auto ggml = with({{"rope_scaling",
                           {{"type", "yarn"},
                            {"freq_scale", 0.25},
                            {"n_ctx_orig", 4096},
                            {"ext_factor", 0.5},
                            {"attn_factor", 2}}},
                          {"scaling_convention", "ggml"}});
  EXPECT_EQ(std::get<yarn_scaling>(ggml.scaling).factor, (factor_ratio{4, 1}));
  EXPECT_EQ(std::get<yarn_scaling>(ggml.scaling).original_max_position_embeddings, 4096);
  EXPECT_EQ(std::get<yarn_scaling>(ggml.scaling).extrapolation_factor, 0.5);
  EXPECT_EQ(std::get<yarn_scaling>(ggml.scaling).attn_factor, 2.0);
  const auto yarn = with({{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4}, {"truncate", false}}},
                          {"attention_factor", 1.5}});
  EXPECT_FALSE(std::get<yarn_scaling>(yarn.scaling).truncate);
  EXPECT_EQ(std::get<yarn_scaling>(yarn.scaling).original_max_position_embeddings, 2048);  // HF: max_position_embeddings
  EXPECT_EQ(yarn.attention_factor, 1.5);
  const auto llama3 = with({{"rope_scaling", {{"rope_type", "llama3"}}}});
  EXPECT_EQ(std::get<llama3_scaling>(llama3.scaling).factor, 8.0);
  EXPECT_EQ(std::get<llama3_scaling>(llama3.scaling).original_max_position_embeddings, 8192);
}

TEST(SpecReader, BadScalingsNameFileFieldAndValue) {
  const json base = {{"head_dim", 8}};
  auto error_with = [&](json extra) {
    json c = base;
    c.update(extra);
    return error_of(c);
  };
  // The known types, written out; a type appended to the catalog follows them.
  const std::string unknown = error_with({{"rope_scaling", {{"rope_type", "yarm"}}}});
  EXPECT_TRUE(unknown.starts_with("S.json: field 'rope_scaling.rope_type': \"yarm\" is not a known rope_type (default, "
                                  "linear, ntk, dynamic, yarn, llama3, longrope, su, proportional"))
      << unknown;
  EXPECT_TRUE(unknown.ends_with(")")) << unknown;
  EXPECT_EQ(error_with({{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2}, {"fator", 3}}}}),
            "S.json: field 'rope_scaling.fator': 3 is not a key of rope_type \"linear\"");
  EXPECT_EQ(error_with({{"rope_scaling", {{"rope_type", "linear"}}}}),
            "S.json: field 'rope_scaling.factor': missing (rope_type \"linear\" needs it)");
  EXPECT_EQ(error_with({{"rope_scaling", {{"rope_type", "linear"}, {"factor", -2}}}}),
            "S.json: field 'rope_scaling.factor': -2 is not a finite number > 0");
  EXPECT_EQ(error_with({{"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 2}}}}),
            "S.json: field 'max_position_embeddings': missing (rope_type \"dynamic\" needs it)");
  EXPECT_EQ(error_with({{"rope_scaling", {{"rope_type", "yarn"}, {"type", "linear"}}}}),
            "S.json: field 'rope_scaling.type': \"linear\" disagrees with rope_scaling.rope_type "
            "\"yarn\"");
  EXPECT_EQ(error_with({{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4}}}}),
            "S.json: field 'rope_scaling.original_max_position_embeddings': missing (yarn needs "
            "it, or max_position_embeddings)");
  EXPECT_EQ(error_with({{"rope_scaling",
                         {{"rope_type", "longrope"},
                          {"original_max_position_embeddings", 64},
                          {"long_factor", {1, 2}},
                          {"short_factor", {1, 1, 1, 1}}}}}),
            "S.json: field 'rope_scaling.long_factor': [1,2] is not an array of rotary_dim/2 = 4 "
            "numbers");
  EXPECT_EQ(error_with({{"scaling_convention", "transformers"}}),
            "S.json: field 'scaling_convention': \"transformers\" is not one of \"hf\", "
            "\"hf_derived_factor\", \"vllm\", \"deepseek\", \"ggml\"");
  EXPECT_EQ(error_with({{"sequence_length", 0}}),
            "S.json: field 'sequence_length': 0 is not an integer in [1, 2^31]");
  EXPECT_EQ(error_with({{"rope_scaling",
                         {{"rope_type", "yarn"}, {"factor", 4}, {"freq_scale", 0.5},
                          {"original_max_position_embeddings", 64}}}}),
            "S.json: field 'rope_scaling.freq_scale': 0.5 is not 1/factor (factor 4)");
}

TEST(SpecReader, OwnKeysOverrideAndDefaultsApply) {
  const auto s = parse_spec(json{{"head_dim", 64}, {"rotary_dim", 32}, {"pairing", "adjacent"}},
                            "S.json");
  EXPECT_EQ(s.rotary_dim, 32);
  EXPECT_EQ(s.pair, pairing::adjacent);
  EXPECT_EQ(s.base, 10000.0);
  EXPECT_EQ(parse_spec(json{{"head_dim", 64}, {"partial_rotary_factor", 0.5}}, "S").rotary_dim, 32);
  EXPECT_EQ(parse_spec(json{{"hidden_size", 4096}, {"num_attention_heads", 32}}, "S").head_dim, 128);
}

TEST(SpecReader, BadSpecsNameFileFieldAndValue) {
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rotary_dim", 31}}),
            "S.json: field 'rotary_dim': 31 gives rotary_dim 31, which is not even and >= 2");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rotary_dim", 128}}),
            "S.json: field 'rotary_dim': 128 gives rotary_dim 128 > head_dim 64");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rope_theta", 1}}),
            "S.json: field 'rope_theta': 1 is not a finite number > 1");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rope_theta", "big"}}),
            "S.json: field 'rope_theta': \"big\" is not a number");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"pairing", "interleaved"}}),
            "S.json: field 'pairing': \"interleaved\" is not \"half\" or \"adjacent\"");
  EXPECT_EQ(error_of(json{{"head_dim", -4}}),
            "S.json: field 'head_dim': -4 is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of(json{{"hidden_size", 100}, {"num_attention_heads", 3}}),
            "S.json: field 'hidden_size': 100 is not divisible by num_attention_heads = 3");
  EXPECT_EQ(error_of(json{{"rope_theta", 10000}}),
            "S.json: field 'head_dim': missing (give head_dim, or hidden_size and "
            "num_attention_heads)");
  EXPECT_EQ(error_of(json::array()), "S.json: the spec is not a JSON object");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"partial_rotary_factor", 1.5}}),
            "S.json: field 'partial_rotary_factor': 1.5 is not in (0, 1]");
}

TEST(SpecReader, UnreadableOrInvalidFilesAreErrors) {
  EXPECT_THROW(read_spec("/nonexistent/spec.json"), spec_error);
  EXPECT_THROW(read_spec(ROPECHECK_SOURCE_DIR "/spec/spec_reader.h"), spec_error);
}

}  // namespace
}  // namespace ropecheck
