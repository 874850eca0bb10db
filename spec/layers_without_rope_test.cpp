// Layers that apply no RoPE (rope_spec.h layers_without_rope): Llama 4's NoPE layers
// and Cohere2's full-attention layers are recorded in the spec, and choosing one of them (--layer,
// --layer-type) is refused, never read as a RoPE layer. The expected layer sets are written out
// from the rules in transformers' sources, not computed by the reader:
//   Llama4TextConfig: no_rope_layers 1 = RoPE, 0 = NoPE; default
//     [int((i + 1) % no_rope_layer_interval != 0) for i in range(num_hidden_layers)], interval 4;
//   modeling_llama4.py Llama4TextAttention: apply_rotary_emb only `if self.use_rope`;
//   modular_cohere2.py Cohere2Attention: sliding_window only on "sliding_attention" layers, and
//     apply_rotary_pos_emb only `if self.sliding_window is not None`; Cohere2Config builds
//     layer_types from sliding_window_pattern (default 4) when the config has none.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/spec_reader.h"
#include "spec/spec_test_support.h"

namespace ropecheck {
namespace {

using nlohmann::json;
using namespace spec_testing;

spec_options at_layer(std::int64_t layer, std::string layer_type = "") {
  spec_options o;
  o.layer = layer;
  o.layer_type = std::move(layer_type);
  return o;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Maverick's config has neither no_rope_layers nor no_rope_layer_interval, so transformers makes
// every 4th layer NoPE; the copied fixture has no num_hidden_layers either, so the set cannot be
// listed and a RoPE layer's index cannot be checked to exist: --layer is refused rather than guessed.
TEST(LayersWithoutRope, MaverickFixtureIsEveryFourthLayerWithoutALayerCount) {
  const json maverick = load("Llama-4-Maverick-17B-128E.json");
  const rope_spec spec = parse_spec(maverick, "M.json");
  EXPECT_EQ(spec.without_rope.every, 4);
  EXPECT_EQ(spec.without_rope.layers, 0);
  EXPECT_TRUE(spec.without_rope.indices.empty());
  EXPECT_EQ(spec.without_rope.field, "text_config.no_rope_layer_interval");
  EXPECT_TRUE(spec.without_rope.skips(3));
  EXPECT_FALSE(spec.without_rope.skips(4));
  EXPECT_TRUE(has(describe(spec.without_rope), "3, 7, 11, …")) << describe(spec.without_rope);
  EXPECT_TRUE(has(describe(spec.without_rope), "no num_hidden_layers")) << describe(spec.without_rope);
  EXPECT_FALSE(spec.layer.has_value());
  // Layer 3 has no RoPE whatever the layer count; whether layer 4 exists is not known.
  EXPECT_EQ(error_of(maverick, at_layer(3)),
            "S.json: field 'layer': 3 is a layer that applies no RoPE: (3 + 1) % "
            "text_config.no_rope_layer_interval 4 == 0 (nothing to check)");
  EXPECT_EQ(error_of(maverick, at_layer(4)),
            "S.json: field 'layer': 4 cannot be checked: the config gives no num_hidden_layers, so whether the "
            "layer exists is not known (refused rather than guessed)");
}

// The same text_config with Maverick's 48 layers (Llama4TextConfig's num_hidden_layers; the
// fixture left it out): layers 3, 7, …, 47 are NoPE.
TEST(LayersWithoutRope, MaverickWithItsLayerCountListsTheNopeLayers) {
  json maverick = load("Llama-4-Maverick-17B-128E.json");
  maverick["text_config"]["num_hidden_layers"] = 48;
  const rope_spec spec = parse_spec(maverick, "M.json");
  EXPECT_EQ(spec.without_rope.layers, 48);
  EXPECT_EQ(spec.without_rope.indices,
            (std::vector<std::int64_t>{3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47}));
  EXPECT_TRUE(has(describe(spec.without_rope), "(12 of 48 layers;")) << describe(spec.without_rope);

  EXPECT_EQ(error_of(maverick, at_layer(3)),
            "S.json: field 'layer': 3 is a layer that applies no RoPE: (3 + 1) % "
            "text_config.no_rope_layer_interval 4 == 0 (nothing to check)");
  EXPECT_TRUE(has(error_of(maverick, at_layer(47)), "applies no RoPE"));
  EXPECT_EQ(error_of(maverick, at_layer(48)),
            "S.json: field 'layer': 48 is past the model's last layer 47 (48 layers)");
  for (const std::int64_t layer : {0, 2, 4, 46}) {
    const rope_spec at = parse_spec(maverick, "M.json", at_layer(layer));
    EXPECT_EQ(at.layer, layer);
    EXPECT_EQ(at.head_dim, 128);
    EXPECT_EQ(at.base, 500000.0);
    EXPECT_EQ(at.pair, pairing::adjacent);
  }
  // The spec's own "layer" key chooses the same way, and must agree with --layer.
  json keyed = maverick;
  keyed["layer"] = 7;
  EXPECT_TRUE(has(error_of(keyed), "field 'layer': 7 is a layer that applies no RoPE"));
  keyed["layer"] = 5;
  EXPECT_EQ(parse_spec(keyed, "M.json").layer, 5);
  EXPECT_EQ(error_of(keyed, at_layer(6)), "S.json: field 'layer': 5 disagrees with --layer 6");
  keyed["layer"] = -1;
  EXPECT_TRUE(has(error_of(keyed), "field 'layer': -1 is not a layer index (an integer >= 0)"));
  keyed["layer"] = 1.5;
  EXPECT_TRUE(has(error_of(keyed), "field 'layer': 1.5 is not a layer index"));
  // A layer of the text model only: the vision tower has no --layer.
  EXPECT_TRUE(has(error_of(maverick, [] { spec_options o = at_layer(0); o.tower = "vision"; return o; }()),
                  "selects a text-model layer"));
}

// An explicit list: 1 = the layer uses RoPE, 0 = NoPE (despite the key's name). The list wins
// over no_rope_layer_interval, which transformers reads only when the list is absent or empty.
TEST(LayersWithoutRope, ExplicitListPolarityIsOneForRope) {
  const json config = json::parse(R"({"model_type": "llama4_text", "head_dim": 64, "rope_theta": 500000.0,
      "num_hidden_layers": 6, "no_rope_layers": [1, 1, 0, 1, 0, 1], "no_rope_layer_interval": 2})");
  const rope_spec spec = parse_spec(config, "L.json");
  EXPECT_EQ(spec.without_rope.indices, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(spec.without_rope.layers, 6);
  EXPECT_EQ(spec.without_rope.every, 0);
  EXPECT_EQ(error_of(config, at_layer(2)),
            "S.json: field 'layer': 2 is a layer that applies no RoPE: no_rope_layers[2] = 0 (nothing to check)");
  EXPECT_TRUE(has(error_of(config, at_layer(4)), "no_rope_layers[4] = 0"));
  for (const std::int64_t layer : {0, 1, 3, 5}) EXPECT_EQ(parse_spec(config, "L.json", at_layer(layer)).layer, layer);

  // A longer list than the layers ("at least the same length"): entries past the last layer are
  // not layers; without num_hidden_layers the list's length is the layer count.
  json longer = config;
  longer["no_rope_layers"] = json::array({1, 0, 1, 1, 1, 1, 0, 0});
  EXPECT_EQ(parse_spec(longer, "L.json").without_rope.indices, (std::vector<std::int64_t>{1}));
  longer.erase("num_hidden_layers");
  EXPECT_EQ(parse_spec(longer, "L.json").without_rope.indices, (std::vector<std::int64_t>{1, 6, 7}));
  EXPECT_EQ(parse_spec(longer, "L.json").without_rope.layers, 8);

  // An empty or null list is "not given": every no_rope_layer_interval-th layer.
  for (const json& empty : {json::array(), json(nullptr)}) {
    json c = config;
    c["no_rope_layers"] = empty;
    EXPECT_EQ(parse_spec(c, "L.json").without_rope.indices, (std::vector<std::int64_t>{1, 3, 5}));
  }
}

TEST(LayersWithoutRope, BadValuesAreRefusedNamingTheField) {
  const json base = json::parse(R"({"model_type": "llama4_text", "head_dim": 64, "rope_theta": 500000.0,
      "num_hidden_layers": 4})");
  const auto with = [&](const char* key, const json& value) {
    json c = base;
    c[key] = value;
    return error_of(c);
  };
  for (const json& bad : {json::array({1, 2, 1, 1}), json::array({"1", 1, 1, 1}), json::array({true, 1, 1, 1}),
                         json::array({1.0, 1, 1, 1})})
    EXPECT_TRUE(has(with("no_rope_layers", bad), "S.json: field 'no_rope_layers': " + bad.dump() +
                                                    " is not a list of 0/1 integers (1 = the layer uses RoPE, 0 = NoPE)"))
        << with("no_rope_layers", bad);
  EXPECT_TRUE(has(with("no_rope_layers", 4), "field 'no_rope_layers': 4 is not a list of 0/1 integers"));
  EXPECT_EQ(with("no_rope_layers", json::array({1, 1, 0})),
            "S.json: field 'no_rope_layers': [1,1,0] has 3 entries, fewer than num_hidden_layers 4 (one per layer)");
  for (const json& bad : {json(0), json(-4), json(2.5), json("4")})
    EXPECT_TRUE(has(with("no_rope_layer_interval", bad),
                    "field 'no_rope_layer_interval': " + bad.dump() + " is not an integer in [1, 1048576]"))
        << with("no_rope_layer_interval", bad);
  // Other families' code does not read them: refused rather than ignored.
  for (const char* key : {"no_rope_layers", "no_rope_layer_interval"}) {
    json llama = json::parse(R"({"model_type": "llama", "head_dim": 64, "rope_theta": 10000.0})");
    llama[key] = std::string(key) == "no_rope_layers" ? json::array({1, 0}) : json(4);
    EXPECT_TRUE(has(error_of(llama), std::string("field '") + key + "'")) << error_of(llama);
    EXPECT_TRUE(has(error_of(llama), "is read only for model_type llama4_text")) << error_of(llama);
  }
}

// Cohere2 with layer_types (transformers' current spelling): one RoPE setup, used by the
// sliding-window layers; full-attention layers have none.
TEST(LayersWithoutRope, Cohere2FullAttentionLayersHaveNoRope) {
  const json config = json::parse(R"({"model_type": "cohere2", "hidden_size": 512, "num_attention_heads": 4,
      "rope_theta": 50000.0, "num_hidden_layers": 8, "sliding_window": 4096,
      "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
                      "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]})");
  const rope_spec spec = parse_spec(config, "C.json");  // one setup: no choice needed
  EXPECT_EQ(spec.head_dim, 128);
  EXPECT_EQ(spec.base, 50000.0);
  EXPECT_EQ(spec.pair, pairing::adjacent);
  EXPECT_EQ(spec.without_rope.indices, (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(spec.without_rope.layer_type, "full_attention");
  EXPECT_TRUE(has(describe(spec.without_rope), "layers without RoPE: 3, 7 (2 of 8 layers; full_attention layers"))
      << describe(spec.without_rope);

  spec_options full;
  full.layer_type = "full_attention";
  EXPECT_TRUE(has(error_of(config, full), "S.json: field 'layer_type': \"full_attention\" is a layer type that "
                                          "applies no RoPE in this model (full_attention layers (layer_types) apply "
                                          "no RoPE): nothing to check"))
      << error_of(config, full);
  spec_options sliding;
  sliding.layer_type = "sliding_attention";
  EXPECT_EQ(parse_spec(config, "C.json", sliding).layer_type, "sliding_attention");

  EXPECT_EQ(error_of(config, at_layer(3)),
            "S.json: field 'layer': 3 is a layer that applies no RoPE: layer_types[3] = \"full_attention\" "
            "(nothing to check)");
  const rope_spec layer2 = parse_spec(config, "C.json", at_layer(2));
  EXPECT_EQ(layer2.layer_type, "sliding_attention");  // the layer's own type
  EXPECT_EQ(layer2.layer, 2);
  EXPECT_TRUE(has(error_of(config, at_layer(2, "full_attention")),
                  "field 'layer_type': \"full_attention\" disagrees with layer 2's type \"sliding_attention\""));

  json short_types = config;
  short_types["num_hidden_layers"] = 9;
  EXPECT_TRUE(has(error_of(short_types), "field 'layer_types': "));
  EXPECT_TRUE(has(error_of(short_types), "has 8 entries, not num_hidden_layers 9"));
}

// The older Cohere2 spelling: sliding_window_pattern (transformers' default 4), from which
// Cohere2Config derives layer_types; every pattern-th layer is full attention.
TEST(LayersWithoutRope, Cohere2SlidingWindowPattern) {
  json config = json::parse(R"({"model_type": "cohere2", "head_dim": 128, "rope_theta": 50000.0,
      "num_hidden_layers": 8, "sliding_window_pattern": 4})");
  EXPECT_EQ(parse_spec(config, "C.json").without_rope.indices, (std::vector<std::int64_t>{3, 7}));
  spec_options sliding;
  sliding.layer_type = "sliding_attention";
  EXPECT_EQ(parse_spec(config, "C.json", sliding).layer_type, "sliding_attention");
  spec_options full;
  full.layer_type = "full_attention";
  EXPECT_TRUE(has(error_of(config, full), "applies no RoPE"));
  EXPECT_EQ(parse_spec(config, "C.json", at_layer(6)).layer_type, "sliding_attention");
  EXPECT_TRUE(has(error_of(config, at_layer(7)), "(7 + 1) % sliding_window_pattern 4 == 0"));

  config["sliding_window_pattern"] = 2;
  EXPECT_EQ(parse_spec(config, "C.json").without_rope.indices, (std::vector<std::int64_t>{1, 3, 5, 7}));
  config.erase("sliding_window_pattern");  // transformers' default pattern 4, said in the rule
  const rope_spec defaulted = parse_spec(config, "C.json");
  EXPECT_EQ(defaulted.without_rope.indices, (std::vector<std::int64_t>{3, 7}));
  EXPECT_TRUE(has(defaulted.without_rope.rule, "transformers Cohere2Config's default")) << defaulted.without_rope.rule;
}

// Qwen3-Next: linear_attention layers (Gated DeltaNet, modular_qwen3_next.py) take no
// position_embeddings; the real config lists layer_types, full attention every 4th layer.
TEST(LayersWithoutRope, Qwen3NextLinearAttentionLayersHaveNoRope) {
  const json next = load("Qwen3-Next-80B-A3B-Instruct.json");
  const rope_spec spec = parse_spec(next, "Q.json");
  std::vector<std::int64_t> linear;  // every layer but 3, 7, …, 47 of the file's 48
  for (std::int64_t i = 0; i < 48; ++i)
    if (i % 4 != 3) linear.push_back(i);
  EXPECT_EQ(spec.without_rope.indices, linear);
  EXPECT_EQ(spec.without_rope.layers, 48);
  EXPECT_EQ(spec.without_rope.layer_type, "linear_attention");
  spec_options linear_type;
  linear_type.layer_type = "linear_attention";
  EXPECT_TRUE(has(error_of(next, linear_type), "field 'layer_type': \"linear_attention\" is a layer type that "
                                               "applies no RoPE"));
  spec_options full_type;
  full_type.layer_type = "full_attention";
  EXPECT_EQ(parse_spec(next, "Q.json", full_type).rotary_dim, 64);  // 256 × 0.25
  EXPECT_EQ(parse_spec(next, "Q.json", at_layer(3)).layer_type, "full_attention");
  EXPECT_EQ(error_of(next, at_layer(0)),
            "S.json: field 'layer': 0 is a layer that applies no RoPE: layer_types[0] = \"linear_attention\" "
            "(nothing to check)");

  // Without layer_types, Qwen3NextConfig derives them from full_attention_interval (default 4).
  json derived = json::parse(R"({"model_type": "qwen3_next", "head_dim": 256, "partial_rotary_factor": 0.25,
      "rope_theta": 10000000, "num_hidden_layers": 8, "full_attention_interval": 2})");
  EXPECT_EQ(parse_spec(derived, "Q.json").without_rope.indices, (std::vector<std::int64_t>{0, 2, 4, 6}));
  derived.erase("full_attention_interval");
  EXPECT_EQ(parse_spec(derived, "Q.json").without_rope.indices, (std::vector<std::int64_t>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(parse_spec(derived, "Q.json", at_layer(7)).layer_type, "full_attention");
  EXPECT_TRUE(has(error_of(derived, at_layer(6)), "layer_types[6] = \"linear_attention\""));
}

// Llama 4 configs that also list layer_types (transformers' newest Llama4TextConfig derives
// "chunked_attention" for RoPE layers and "full_attention" for NoPE layers): a layer type whose
// layers are all NoPE is refused.
TEST(LayersWithoutRope, Llama4LayerTypeOfOnlyNopeLayersIsRefused) {
  const json config = json::parse(R"({"model_type": "llama4_text", "head_dim": 64, "rope_theta": 500000.0,
      "num_hidden_layers": 4, "layer_types": ["chunked_attention", "chunked_attention", "chunked_attention",
      "full_attention"]})");
  spec_options full;
  full.layer_type = "full_attention";
  EXPECT_TRUE(has(error_of(config, full), "field 'layer_type': \"full_attention\" is a layer type that applies no "
                                          "RoPE"))
      << error_of(config, full);
  spec_options chunked;
  chunked.layer_type = "chunked_attention";
  EXPECT_EQ(parse_spec(config, "L.json", chunked).layer_type, "chunked_attention");
}

// With one RoPE setup per layer type, --layer reads its own layer type's setup (layer_types[i]).
TEST(LayersWithoutRope, LayerPicksItsLayerTypesSetup) {
  const json config = json::parse(R"({"model_type": "gemma3_text", "head_dim": 256,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
      "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})");
  const rope_spec full = parse_spec(config, "G.json", at_layer(1));
  EXPECT_EQ(full.layer_type, "full_attention");
  EXPECT_EQ(full.base, 1000000.0);
  const rope_spec sliding = parse_spec(config, "G.json", at_layer(2));
  EXPECT_EQ(sliding.layer_type, "sliding_attention");
  EXPECT_EQ(sliding.base, 10000.0);
  EXPECT_EQ(sliding.without_rope.layers, 3);  // no num_hidden_layers: one layer_types entry a layer
  EXPECT_TRUE(has(error_of(config, at_layer(3)), "is past the model's last layer 2 (3 layers)"));
}

// Families whose every layer rotates: the spec says so; --layer is checked against the layer count.
TEST(LayersWithoutRope, OtherFamiliesRotateEveryLayer) {
  json llama = load("Llama-3.1-8B.json");
  const rope_spec spec = parse_spec(llama, "L.json");
  EXPECT_FALSE(spec.without_rope.any());
  EXPECT_EQ(describe(spec.without_rope), "every layer applies RoPE");
  // The copied fixture keeps only RoPE fields (no num_hidden_layers): no layer can be checked.
  ASSERT_FALSE(llama.contains("num_hidden_layers"));
  EXPECT_EQ(error_of(llama, at_layer(0)),
            "S.json: field 'layer': 0 cannot be checked: the config gives no num_hidden_layers, so whether the "
            "layer exists is not known (refused rather than guessed)");
  llama["num_hidden_layers"] = 32;  // Llama 3.1 8B's
  EXPECT_EQ(parse_spec(llama, "L.json", at_layer(31)).layer, 31);
  EXPECT_TRUE(has(error_of(llama, at_layer(32)), "is past the model's last layer 31"));
}

}  // namespace
}  // namespace ropecheck
