// The spec reader accepts Hugging Face config.json files as they are published and refuses
// bad specs with one line naming the file, the field and the value.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "spec/spec_reader.h"

namespace ropecheck {
namespace {

using nlohmann::json;

std::string error_of(const json& config) {
  try {
    parse_spec(config, "S.json");
  } catch (const spec_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SpecReader, ReadsTheRealModelConfigs) {
  const std::string dir = ROPECHECK_SHARED_DIR "/model-configs/";
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

TEST(SpecReader, RefusesScalingUntilItIsSupported) {
  const std::string dir = ROPECHECK_SHARED_DIR "/model-configs/";
  for (const char* file : {"Llama-3.1-8B.json", "DeepSeek-V3.json", "Phi-3.5-mini-instruct.json"}) {
    try {
      read_spec(dir + file);
      ADD_FAILURE() << file << " was accepted";
    } catch (const spec_error& e) {
      EXPECT_NE(std::string(e.what()).find("rope_scaling."), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_spec(json{{"head_dim", 64}, {"rope_scaling", {{"rope_type", "default"}}}}, "S")
                .rotary_dim,
            64);
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
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rope_scaling", {{"rope_type", "yarn"}}}}),
            "S.json: field 'rope_scaling.rope_type': \"yarn\" is not supported yet (only unscaled "
            "RoPE)");
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
