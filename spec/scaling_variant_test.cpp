// The scaling as a type (rope_spec.h): every rope_type reads into its own struct; what depends
// on where a key appeared (Phi-3's top-level L0, the hf_derived_factor YaRN factor) is resolved
// by the reader, once; conventions live only on the types whose formula they change; refusals
// stay spec errors (exit 2 in the CLI). Expected values are the config's own numbers and their
// ratios, written out here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <variant>

#include "spec/scaling_readers.h"
#include "spec/spec_reader.h"
#include "spec/spec_test_support.h"

namespace ropecheck {
namespace {

using nlohmann::json;
using namespace spec_testing;

json config_with(json scaling, json extra = json::object()) {
  json c = {{"head_dim", 8}, {"max_position_embeddings", 131072}, {"rope_scaling", std::move(scaling)}};
  c.update(extra);
  return c;
}

const json long_factor = {1.0, 2.0, 3.0, 4.0};
const json short_factor = {1.0, 1.0, 1.0, 1.0};

// Each catalog entry's minimal block reads into the struct its entry declares (the reader and
// the declared type are separate fields: an entry pointing at another type's reader fails), and
// each type's description names it. The structs' values are checked below, written out.
TEST(ScalingVariant, EveryRopeTypeReadsIntoItsOwnStruct) {
  std::set<std::size_t> read_types;
  for (const spec_scaling::kind& k : spec_scaling::catalog()) {
    SCOPED_TRACE(std::string(k.name));
    ASSERT_FALSE(k.example.empty());
    const json block = json::parse(k.example);
    const json* written = block.contains("rope_type") ? &block["rope_type"] : &block["type"];
    EXPECT_EQ(*written, k.name);
    const rope_spec s = parse_spec(config_with(block), "S.json");
    EXPECT_EQ(s.scaling.index(), static_cast<std::size_t>(k.type));
    EXPECT_EQ(s.max_position_embeddings, 131072);
    EXPECT_TRUE(describe(s.scaling).starts_with(to_string(k.type))) << describe(s.scaling);
    read_types.insert(s.scaling.index());
  }
  EXPECT_EQ(read_types.size(), std::variant_size_v<rope_scaling>);  // every alternative has a reader
  const rope_spec linear = parse_spec(config_with({{"rope_type", "linear"}, {"factor", 2}}), "S");
  EXPECT_EQ(std::get<linear_scaling>(linear.scaling), linear_scaling{2});
  EXPECT_EQ(type_of(linear.scaling), scaling_type::linear);
  const rope_spec dynamic = parse_spec(config_with({{"rope_type", "dynamic"}, {"factor", 2}}), "S");
  EXPECT_EQ(std::get<dynamic_scaling>(dynamic.scaling),
            (dynamic_scaling{2, 131072, scaling_convention::hf}));
  // Proportional (Gemma 4): the whole head, floor(0.5 · 8 / 2) = 2 rotated pairs.
  const rope_spec proportional = parse_spec(
      config_with({{"rope_type", "proportional"}, {"factor", 2}}, {{"partial_rotary_factor", 0.5}}), "S");
  EXPECT_EQ(proportional.rotary_dim, 8);
  EXPECT_EQ(std::get<proportional_scaling>(proportional.scaling), (proportional_scaling{2, 2}));
  // An absent block is no scaling.
  EXPECT_TRUE(std::holds_alternative<no_scaling>(parse_spec(json{{"head_dim", 8}}, "S").scaling));
}

// The parameters the catalog publishes (config forensics varies them, the properties draw them)
// are keys the type's reader takes, where a config writes them; a field's getter reads the
// value written under its key (so a key is not paired with another field); its setter writes
// what its getter reads, and changes the struct.
TEST(ScalingVariant, CatalogParametersAreKeysTheReaderTakes) {
  for (const spec_scaling::kind& k : spec_scaling::catalog()) {
    const rope_spec example = parse_spec(config_with(json::parse(k.example)), "S.json");
    for (const spec_scaling::parameter& p : k.parameters) {
      SCOPED_TRACE(fmt::format("{}.{}", k.name, p.key));
      if (p.where != spec_scaling::placement::top_level) {
        EXPECT_NE(std::find(k.keys.begin(), k.keys.end(), p.key), k.keys.end());
      }
      EXPECT_EQ(p.get == nullptr, p.set == nullptr);
      if (!p.get) continue;
      EXPECT_FALSE(p.mistake.empty());
      {  // another value under the key reads into the parameter's field
        const bool flag = p.values == spec_scaling::published_values::flag;
        const double current = p.get(example.scaling);
        const double written = flag ? 1 - current
                               : p.values == spec_scaling::published_values::contexts ? (current == 4096 ? 2048 : 4096)
                                                                                      : (current == 3 ? 2 : 3);
        json block = json::parse(k.example), extra = json::object();
        json& where = p.where == spec_scaling::placement::top_level ? extra : block;
        where[std::string(p.key)] = flag ? json(written != 0) : json(written);
        EXPECT_EQ(p.get(parse_spec(config_with(block, extra), "S.json").scaling), written);
      }
      rope_scaling changed = example.scaling;
      const double other = p.get(changed) == 1 ? 0 : 1;
      p.set(changed, other);
      EXPECT_EQ(p.get(changed), other);
      EXPECT_FALSE(changed == example.scaling);
    }
  }
}

// docs/scaling.md's formula table has a row for every type of the catalog (a type's second
// name, Phi-3's `su`, in its row's first cell).
TEST(ScalingVariant, EveryTypeHasItsFormulaInTheDocs) {
  std::ifstream in(ROPECHECK_SOURCE_DIR "/docs/scaling.md");
  std::string line, first_cells;
  while (std::getline(in, line))
    if (line.starts_with("| `")) first_cells += line.substr(0, line.find(" | ", 2)) + "\n";
  for (const spec_scaling::kind& k : spec_scaling::catalog())
    EXPECT_NE(first_cells.find(fmt::format("`{}`", k.name)), std::string::npos) << k.name;
}

// LongRoPE's s: max_position_embeddings / L0 whenever the config gives L0 (at the top level as
// Phi-3 does, or in the block) and a context; the written factor otherwise. The old spec held
// two flags for where L0 appeared and both tiers branched on them; now s is the same struct
// whichever the spelling.
TEST(ScalingVariant, LongropeFactorIsResolvedAtParseTime) {
  const json block = {{"rope_type", "longrope"}, {"long_factor", long_factor}, {"short_factor", short_factor}};
  json in_block = block;
  in_block["original_max_position_embeddings"] = 4096;
  const rope_spec top = parse_spec(config_with(block, {{"original_max_position_embeddings", 4096}}), "S");
  const rope_spec inside = parse_spec(config_with(in_block), "S");
  const auto& a = std::get<longrope_scaling>(top.scaling);
  const auto& b = std::get<longrope_scaling>(inside.scaling);
  EXPECT_EQ(a.factor, (factor_ratio{131072, 4096}));
  EXPECT_EQ(a.factor.value(), 32.0);
  EXPECT_EQ(a.original_max_position_embeddings, 4096);
  EXPECT_TRUE(a == b);  // the two spellings read the same
  // Neither: L0 defaults to max_position_embeddings and s is the written factor (default 1).
  json written = block;
  written["factor"] = 8;
  const auto neither = std::get<longrope_scaling>(parse_spec(config_with(written), "S").scaling);
  EXPECT_EQ(neither.factor, (factor_ratio{8, 1}));
  EXPECT_EQ(neither.original_max_position_embeddings, 131072);
  // In the block and at the top level: the block's wins, as before.
  const auto both = std::get<longrope_scaling>(
      parse_spec(config_with(in_block, {{"original_max_position_embeddings", 2048}}), "S").scaling);
  EXPECT_EQ(both.factor, (factor_ratio{131072, 4096}));
  EXPECT_EQ(both.original_max_position_embeddings, 4096);
}

// YaRN's s under hf_derived_factor: max_position_embeddings / L0 when L0 is in the block, the
// written factor when L0 only defaults to max_position_embeddings; `factor` under every other
// convention.
TEST(ScalingVariant, YarnDerivedFactorIsResolvedAtParseTime) {
  const json block = {{"rope_type", "yarn"}, {"factor", 4}, {"original_max_position_embeddings", 32768}};
  const auto yarn_of = [](const json& config) { return std::get<yarn_scaling>(parse_spec(config, "S").scaling); };
  const yarn_scaling derived = yarn_of(config_with(block, {{"scaling_convention", "hf_derived_factor"}}));
  EXPECT_EQ(derived.factor, (factor_ratio{131072, 32768}));
  EXPECT_EQ(derived.convention, scaling_convention::hf);  // the rest of its formula is Hugging Face's
  EXPECT_EQ(yarn_of(config_with(block)).factor, (factor_ratio{4, 1}));
  json no_l0 = block;
  no_l0.erase("original_max_position_embeddings");
  const yarn_scaling defaulted = yarn_of(config_with(no_l0, {{"scaling_convention", "hf_derived_factor"}}));
  EXPECT_EQ(defaulted.factor, (factor_ratio{4, 1}));
  EXPECT_EQ(defaulted.original_max_position_embeddings, 131072);
  // Qwen2.5's documented block (L_max = L0 = 32768): s = 1.
  const std::string dir = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";
  json qwen = json::parse(std::ifstream(dir + "Qwen2.5-7B-Instruct.json"));
  qwen["rope_scaling"] = qwen["_documented_yarn_rope_scaling"]["rope_scaling"];
  qwen["scaling_convention"] = "hf_derived_factor";
  EXPECT_EQ(yarn_of(qwen).factor.value(), 1.0);
}

// A convention sits only on the types whose formula it changes; on the others it has nothing
// to say, and a type keeps only the conventions it distinguishes (the rest compute as hf).
TEST(ScalingVariant, ConventionsOnlyOnTheTypesTheyApplyTo) {
  const json yarn = {{"rope_type", "yarn"}, {"factor", 4}};
  const json dynamic = {{"rope_type", "dynamic"}, {"factor", 2}};
  const json longrope = {{"rope_type", "longrope"}, {"long_factor", long_factor}, {"short_factor", short_factor}};
  const auto convention = [](const json& block, const char* name) {
    return convention_of(parse_spec(config_with(block, {{"scaling_convention", name}}), "S").scaling);
  };
  EXPECT_EQ(convention(yarn, "deepseek"), scaling_convention::deepseek);
  EXPECT_EQ(convention(yarn, "ggml"), scaling_convention::ggml);
  EXPECT_EQ(convention(yarn, "vllm"), scaling_convention::hf);
  EXPECT_EQ(convention(dynamic, "vllm"), scaling_convention::vllm);
  EXPECT_EQ(convention(dynamic, "deepseek"), scaling_convention::hf);
  EXPECT_EQ(convention(longrope, "vllm"), scaling_convention::vllm);
  EXPECT_EQ(convention(longrope, "ggml"), scaling_convention::hf);
  EXPECT_EQ(convention({{"rope_type", "linear"}, {"factor", 2}}, "vllm"), std::nullopt);
  EXPECT_EQ(convention({{"rope_type", "llama3"}}, "deepseek"), std::nullopt);
}

// Refusals are unchanged by the variant: spec errors naming file, field and value.
TEST(ScalingVariant, RefusalsStaySpecErrors) {
  EXPECT_EQ(error_of({{"head_dim", 8}, {"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 2}}}}),
            "S.json: field 'max_position_embeddings': missing (rope_type \"dynamic\" needs it)");
  EXPECT_EQ(error_of({{"head_dim", 8},
                      {"original_max_position_embeddings", 4096},
                      {"rope_scaling",
                       {{"rope_type", "longrope"}, {"long_factor", long_factor}, {"short_factor", short_factor}}}}),
            "S.json: field 'max_position_embeddings': missing (longrope needs it)");
  EXPECT_EQ(error_of({{"head_dim", 8}, {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4}}}}),
            "S.json: field 'rope_scaling.original_max_position_embeddings': missing (yarn needs it, "
            "or max_position_embeddings)");
  EXPECT_EQ(error_of(config_with({{"rope_type", "llama3"}, {"low_freq_factor", 4}, {"high_freq_factor", 1}})),
            "S.json: field 'rope_scaling.high_freq_factor': 1.0 is not >= low_freq_factor 4");
  // ChatGLM's rope_ratio read as positions / r is a linear scaling; with a rope_scaling of its
  // own the two would have to compose, which ropecheck does not do: refused, not overwritten.
  const std::string dir = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";
  json glm = json::parse(std::ifstream(dir + "chatglm3-6b-32k.json"));
  glm["rope_ratio_applies_to"] = "positions";
  glm["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2}};
  EXPECT_EQ(error_of(glm),
            "S.json: field 'rope_ratio': 50 divides the positions of a rope_type \"linear\" setup, "
            "which ropecheck does not compose");
}

}  // namespace
}  // namespace ropecheck
