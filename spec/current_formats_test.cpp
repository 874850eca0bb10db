// The spec reader on the config formats transformers writes today: rope_parameters
// (rope_theta and partial_rotary_factor inside it), one setup per layer type with layer_types,
// text_config nesting, every rope_type of modeling_rope_utils, and the refusal of any RoPE key it
// does not read. The real configs are copies in fixtures/model-configs/ (sources in each file).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/scaling_readers.h"
#include "spec/spec_reader.h"
#include "spec/spec_test_support.h"

namespace ropecheck {
namespace {

using nlohmann::json;
using namespace spec_testing;

// The issue's example: a Llama 3.1 config in the current format reads exactly as its older
// rope_scaling spelling (the reader once ignored rope_parameters and used base 10000).
TEST(CurrentFormats, RopeParametersReadsAsRopeScaling) {
  const json current = json::parse(R"({"model_type":"llama","head_dim":128,"num_attention_heads":32,
      "hidden_size":4096,"max_position_embeddings":131072,
      "rope_parameters":{"rope_type":"llama3","rope_theta":500000.0,"factor":8.0,
        "low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192}})");
  const rope_spec now = parse_spec(current, "current.json");
  const rope_spec before = parse_spec(load("Llama-3.1-8B.json"), "Llama-3.1-8B.json");
  EXPECT_EQ(now.base, 500000.0);
  EXPECT_EQ(now.base, before.base);
  EXPECT_EQ(now.head_dim, before.head_dim);
  EXPECT_EQ(now.rotary_dim, before.rotary_dim);
  EXPECT_EQ(type_of(now.scaling), scaling_type::llama3);
  EXPECT_EQ(std::get<llama3_scaling>(now.scaling).factor, std::get<llama3_scaling>(before.scaling).factor);
  EXPECT_EQ(std::get<llama3_scaling>(now.scaling).low_freq_factor, std::get<llama3_scaling>(before.scaling).low_freq_factor);
  EXPECT_EQ(std::get<llama3_scaling>(now.scaling).high_freq_factor, std::get<llama3_scaling>(before.scaling).high_freq_factor);
  EXPECT_EQ(std::get<llama3_scaling>(now.scaling).original_max_position_embeddings,
            std::get<llama3_scaling>(before.scaling).original_max_position_embeddings);
  EXPECT_EQ(now.max_position_embeddings, before.max_position_embeddings);
}

// Qwen/Qwen3-8B as transformers 5.7 prints it: rope_theta only inside rope_parameters.
TEST(CurrentFormats, Qwen3InTheCurrentFormat) {
  const json qwen = load("Qwen3-8B.json");
  const rope_spec s = parse_spec(qwen, "Qwen3-8B.json");
  EXPECT_EQ(s.base, 1000000.0);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.rotary_dim, 128);
  EXPECT_EQ(s.pair, pairing::half_split);
  EXPECT_EQ(type_of(s.scaling), scaling_type::none);
  // One setup for every layer: a layer type the config lists is accepted, another is not.
  EXPECT_EQ(parse_spec(qwen, "Q", {"full_attention"}).base, 1000000.0);
  EXPECT_TRUE(error_of(qwen, {"sliding_attention"})
                  .starts_with("S.json: field 'layer_type': \"sliding_attention\" is not a layer type "
                               "of this config, which has one RoPE setup for every layer (layer_types: "))
      << error_of(qwen, {"sliding_attention"});
}

// Qwen3-Next: partial_rotary_factor inside rope_parameters (and at the top level, agreeing);
// linear_attention layers in layer_types do not make the one rope_parameters dict per-layer.
TEST(CurrentFormats, Qwen3NextPartialRotaryInsideRopeParameters) {
  json next = load("Qwen3-Next-80B-A3B-Instruct.json");
  const rope_spec s = parse_spec(next, "next.json");
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.rotary_dim, 64);
  EXPECT_EQ(s.base, 10000000.0);
  next["rope_parameters"]["partial_rotary_factor"] = 0.5;
  EXPECT_EQ(error_of(next), "S.json: field 'rope_parameters.partial_rotary_factor': 0.5 disagrees "
                            "with partial_rotary_factor 0.25");
  next.erase("partial_rotary_factor");
  EXPECT_EQ(parse_spec(next, "next.json").rotary_dim, 128);
}

// Gemma 3 12B (text_config nesting, the older spelling): global layers rope_theta 1e6 with
// linear ×8, sliding-window layers rope_local_base_freq 10000 unscaled. Which one is read must
// be chosen; leaving it out lists the choices.
TEST(CurrentFormats, Gemma3NeedsALayerTypeAndReadsBoth) {
  const json gemma = load("gemma-3-12b-it.json");
  EXPECT_EQ(error_of(gemma),
            "S.json: field 'text_config.rope_local_base_freq': holds one RoPE setup per layer type "
            "(full_attention, sliding_attention); choose one with --layer-type NAME or the spec "
            "key \"layer_type\"");
  const rope_spec full = parse_spec(gemma, "g", {"full_attention"});
  EXPECT_EQ(full.layer_type, "full_attention");
  EXPECT_EQ(full.head_dim, 256);
  EXPECT_EQ(full.rotary_dim, 256);
  EXPECT_EQ(full.base, 1000000.0);
  EXPECT_EQ(type_of(full.scaling), scaling_type::linear);
  EXPECT_EQ(std::get<linear_scaling>(full.scaling).factor, 8.0);
  const rope_spec sliding = parse_spec(gemma, "g", {"sliding_attention"});
  EXPECT_EQ(sliding.base, 10000.0);
  EXPECT_EQ(type_of(sliding.scaling), scaling_type::none);
  EXPECT_EQ(error_of(gemma, {"global"}), "S.json: field 'layer_type': \"global\" has no RoPE setup "
                                         "in this config (it has: full_attention, sliding_attention)");
  // The spec's own key does the same as the flag; the two must not disagree.
  json chosen = gemma;
  chosen["layer_type"] = "sliding_attention";
  EXPECT_EQ(parse_spec(chosen, "g").base, 10000.0);
  EXPECT_EQ(error_of(chosen, {"full_attention"}),
            "S.json: field 'layer_type': \"sliding_attention\" disagrees with --layer-type "
            "\"full_attention\"");

  const json one_b = load("gemma-3-1b-it.json");  // top level, rope_scaling null
  EXPECT_EQ(parse_spec(one_b, "g", {"full_attention"}).base, 1000000.0);
  EXPECT_EQ(type_of(parse_spec(one_b, "g", {"full_attention"}).scaling), scaling_type::none);
  EXPECT_EQ(parse_spec(one_b, "g", {"sliding_attention"}).base, 10000.0);
}

// The same Gemma 3 setups in the current per-layer-type form read the same.
TEST(CurrentFormats, PerLayerTypeRopeParameters) {
  json gemma = load("gemma-3-12b-it.json");
  json& text = gemma["text_config"];
  text.erase("rope_scaling");
  text.erase("rope_theta");
  text.erase("rope_local_base_freq");
  text["layer_types"] = {"sliding_attention", "sliding_attention", "sliding_attention",
                         "sliding_attention", "sliding_attention", "full_attention"};
  text["rope_parameters"] = json::parse(R"({
      "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
      "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})");
  EXPECT_EQ(error_of(gemma),
            "S.json: field 'text_config.rope_parameters': holds one RoPE setup per layer type "
            "(full_attention, sliding_attention); choose one with --layer-type NAME or the spec "
            "key \"layer_type\"");
  const rope_spec full = parse_spec(gemma, "g", {"full_attention"});
  EXPECT_EQ(full.base, 1000000.0);
  EXPECT_EQ(type_of(full.scaling), scaling_type::linear);
  EXPECT_EQ(std::get<linear_scaling>(full.scaling).factor, 8.0);
  EXPECT_EQ(parse_spec(gemma, "g", {"sliding_attention"}).base, 10000.0);
  // One per-layer entry (other layer types without RoPE) needs no choice.
  json one = gemma;
  one["text_config"]["rope_parameters"].erase("sliding_attention");
  EXPECT_EQ(parse_spec(one, "g").layer_type, "full_attention");
  EXPECT_EQ(error_of(one, {"sliding_attention"}),
            "S.json: field 'layer_type': \"sliding_attention\" has no RoPE setup in this config (it "
            "has: full_attention)");
  text["layer_types"] = {"full_attention"};
  EXPECT_EQ(error_of(gemma, {"full_attention"}),
            "S.json: field 'text_config.rope_parameters.sliding_attention': {\"rope_theta\":10000.0,"
            "\"rope_type\":\"default\"} is not one of layer_types [\"full_attention\"]");
}

// Qwen3-VL: the text model under text_config, with interleaved M-RoPE sections.
TEST(CurrentFormats, TextConfigNestingAndMRopeSections) {
  const rope_spec qwen3vl = parse_spec(load("Qwen3-VL-8B-Instruct.json"), "S.json");
  EXPECT_EQ(qwen3vl.head_dim, 128);
  EXPECT_EQ(qwen3vl.base, 5000000.0);
  EXPECT_EQ(qwen3vl.streams.section, (std::vector<int>{24, 20, 20}));
  EXPECT_EQ(qwen3vl.streams.rule, stream_rule::mrope_interleaved);
  json bad = load("Qwen3-VL-8B-Instruct.json");
  bad["text_config"]["rope_parameters"]["mrope_section"] = {24, 20, 21};
  EXPECT_EQ(error_of(bad), "S.json: field 'text_config.rope_parameters.mrope_section': [24,20,21] "
                           "sums to 65 pairs, not rotary_dim/2 = 64");
  // A top-level RoPE key beside text_config must be a copy of the nested one.
  json gemma = load("gemma-3-12b-it.json");
  gemma["rope_theta"] = 1000000;
  EXPECT_EQ(parse_spec(gemma, "g", {"full_attention"}).base, 1000000.0);
  gemma["rope_theta"] = 10000;
  EXPECT_EQ(error_of(gemma, {"full_attention"}),
            "S.json: field 'rope_theta': 10000 disagrees with text_config.rope_theta 1000000");
}

// A RoPE-looking key that nothing reads is refused by name, never replaced by a default.
TEST(CurrentFormats, UnreadRopeKeysAreRefused) {
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rope_freq_scale", 0.5}}),
            "S.json: field 'rope_freq_scale': 0.5 is a RoPE setting that ropecheck does not read "
            "(refused rather than ignored)");
  // Keys one family's code reads are refused elsewhere (model_families.h).
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rope_ratio", 500}}),
            "S.json: field 'rope_ratio': 500 is read only for model_type chatglm (this config gives "
            "none)");
  EXPECT_TRUE(error_of(json{{"head_dim", 64}, {"rope_freq_base", 5e5}})
                  .starts_with("S.json: field 'rope_freq_base': 500000.0 is a RoPE setting"));
  EXPECT_TRUE(error_of(json{{"text_config", {{"head_dim", 64}, {"rotary_base", 1}}}})
                  .starts_with("S.json: field 'text_config.rotary_base': 1 is a RoPE setting"));
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"_rope_note", "annotation"}}), "no error");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"rotary", false}}),
            "S.json: field 'rotary': false says the model has no rotary embedding");
  // Two spellings of the block must agree; a model_type whose default base is not known must
  // give one.
  EXPECT_EQ(error_of(json{{"head_dim", 64},
                          {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2}}},
                          {"rope_parameters", {{"rope_type", "linear"}, {"factor", 4}}}}),
            "S.json: field 'rope_parameters': {\"factor\":4,\"rope_type\":\"linear\"} disagrees with "
            "rope_scaling (two spellings of one setting)");
  EXPECT_EQ(error_of(json{{"head_dim", 64}, {"model_type", "qwen3"}}),
            "S.json: field 'rope_theta': missing (model_type \"qwen3\" has no default base known "
            "to ropecheck)");
  EXPECT_EQ(error_of(json{{"head_dim", 64},
                          {"rope_theta", 10000},
                          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 5e5}}}}),
            "S.json: field 'rope_parameters.rope_theta': 500000.0 disagrees with rope_theta 10000");
}

// Gemma 4 31B (transformers 5.7): per-layer-type rope_parameters. Full attention: proportional
// RoPE on global_head_dim (512) wide heads — Gemma4TextRotaryEmbedding passes
// head_dim_key="global_head_dim" to the proportional init, whose int(0.25 · 512 // 2) = 64 pairs
// rotate and the rest stay at angle 0 — base 1e6; sliding-window layers: default RoPE on
// head_dim (256), base 1e4. Half-split pairs (modeling_gemma4.py rotate_half) in both.
TEST(CurrentFormats, Gemma4FullAttentionReadsOnItsGlobalHeadWidth) {
  json gemma4 = load("gemma-4-31B-it.json");
  const rope_spec full = parse_spec(gemma4, "g", {"full_attention"});
  EXPECT_EQ(full.head_dim, 512);
  EXPECT_EQ(full.rotary_dim, 512);
  EXPECT_EQ(full.pair, pairing::half_split);
  EXPECT_EQ(type_of(full.scaling), scaling_type::proportional);
  EXPECT_EQ(std::get<proportional_scaling>(full.scaling).rotated_pairs, 64);
  EXPECT_EQ(full.base, 1000000.0);
  const rope_spec sliding = parse_spec(gemma4, "g", {"sliding_attention"});
  EXPECT_EQ(sliding.head_dim, 256);
  EXPECT_EQ(sliding.rotary_dim, 256);
  EXPECT_EQ(sliding.base, 10000.0);
  EXPECT_EQ(type_of(sliding.scaling), scaling_type::none);
  // The width is read for the proportional init only, the one transformers hands it to: a
  // full-attention layer with another rope type and its own width is refused, not guessed.
  gemma4["text_config"]["rope_parameters"]["full_attention"] = {{"rope_type", "default"}, {"rope_theta", 1e6}};
  EXPECT_EQ(error_of(gemma4, {"full_attention"}),
            "S.json: field 'text_config.global_head_dim': 512 gives full-attention layers their own "
            "head width, which ropecheck reads with proportional RoPE only (transformers' Gemma 4 init), "
            "not rope_type \"default\"");
}

// Every rope_type of transformers' modeling_rope_utils (ROPE_INIT_FUNCTIONS plus "default")
// reads in the current form, with rope_theta inside the block.
TEST(CurrentFormats, EveryRopeTypeReads) {
  const json blocks = json::parse(R"({
      "default": {},
      "linear": {"factor": 2.0},
      "dynamic": {"factor": 2.0},
      "yarn": {"factor": 4.0, "original_max_position_embeddings": 1024},
      "longrope": {"long_factor": [1, 2, 3, 4], "short_factor": [1, 1, 1, 1],
                   "original_max_position_embeddings": 1024},
      "llama3": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                 "original_max_position_embeddings": 1024},
      "proportional": {"partial_rotary_factor": 0.25}})");
  for (const auto& [name, extra] : blocks.items()) {
    json block = extra;
    block["rope_type"] = name;
    block["rope_theta"] = 50000.0;
    const json config = {{"head_dim", 8}, {"max_position_embeddings", 4096}, {"rope_parameters", block}};
    const rope_spec s = parse_spec(config, "S.json");
    EXPECT_EQ(s.base, 50000.0) << name;
    EXPECT_EQ(to_string(type_of(s.scaling)), name == "default" ? "default" : name) << name;
  }
  // Proportional (Gemma 4) spans the whole head and rotates floor(p·head_dim/2) pairs.
  const auto p = parse_spec(json::parse(R"({"head_dim": 512, "rope_parameters": {
      "rope_type": "proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.25}})"), "S");
  EXPECT_EQ(p.rotary_dim, 512);
  EXPECT_EQ(std::get<proportional_scaling>(p.scaling).rotated_pairs, 64);
  EXPECT_EQ(std::get<proportional_scaling>(p.scaling).factor, 1.0);
  // Llama 4's llama3 scaling has low_freq_factor = high_freq_factor: an empty smoothing band.
  const auto llama4 = parse_spec(json::parse(R"({"head_dim": 128, "rope_scaling": {
      "rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
      "original_max_position_embeddings": 8192}, "rope_theta": 500000.0})"), "S");
  EXPECT_EQ(std::get<llama3_scaling>(llama4.scaling).high_freq_factor, std::get<llama3_scaling>(llama4.scaling).low_freq_factor);
  // The catalog holds each of them (and ropecheck's ntk, Phi-3's su).
  for (const char* name : {"default", "linear", "ntk", "dynamic", "yarn", "longrope", "su", "llama3",
                           "proportional"})
    EXPECT_NE(spec_scaling::find(name), nullptr) << name;
}

}  // namespace
}  // namespace ropecheck
