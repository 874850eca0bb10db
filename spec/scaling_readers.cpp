// One reader per rope_type (scaling_readers.h). Keys and defaults follow Hugging Face
// transformers' modeling_rope_utils (RopeParameters, _validate_*_rope_parameters, the
// _compute_*_parameters functions), plus DeepSeek's and ggml's YaRN spellings and vLLM's
// LongRoPE mscales. Formulas: docs/scaling.md.
#include "spec/scaling_readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "spec/json_fields.h"
#include "spec/spec_reader.h"

namespace ropecheck::spec_scaling {
namespace {

using json = nlohmann::json;
namespace f = spec_fields;

double required_factor(const json& block, const context& ctx) {
  const auto v = f::positive(block, ctx.source, ctx.prefix, "factor");
  if (!v)
    f::missing(ctx.source, f::path(ctx.prefix, "factor"),
               fmt::format("rope_type \"{}\" needs it", ctx.type_name));
  return *v;
}

// L0 inside the block (also ggml's n_ctx_orig for YaRN, which must agree with it).
std::optional<std::int64_t> original_in_block(const json& block, const context& ctx) {
  auto l0 = f::length(block, ctx.source, ctx.prefix, "original_max_position_embeddings");
  if (const auto n = f::length(block, ctx.source, ctx.prefix, "n_ctx_orig")) {
    if (l0 && *l0 != *n)
      f::fail(ctx.source, f::path(ctx.prefix, "n_ctx_orig"), block["n_ctx_orig"],
              fmt::format("disagrees with original_max_position_embeddings {}", *l0));
    l0 = n;
  }
  return l0;
}

rope_scaling read_none(const json&, const context&) { return no_scaling{}; }

rope_scaling read_linear(const json& block, const context& ctx) {
  return linear_scaling{required_factor(block, ctx)};
}

rope_scaling read_ntk(const json& block, const context& ctx) {
  return ntk_scaling{required_factor(block, ctx)};
}

rope_scaling read_dynamic(const json& block, const context& ctx) {
  const double factor = required_factor(block, ctx);
  if (!ctx.max_position_embeddings)
    f::missing(ctx.source, "max_position_embeddings", "rope_type \"dynamic\" needs it");
  return dynamic_scaling{factor, *ctx.max_position_embeddings, ctx.own_convention};
}

// Gemma 4's proportional RoPE: θ_j/s for the first floor(p·head_dim/2) pairs of the whole head,
// 0 (pass-through) for the rest; p is partial_rotary_factor (read with the setup).
rope_scaling read_proportional(const json& block, const context& ctx) {
  return proportional_scaling{f::positive(block, ctx.source, ctx.prefix, "factor").value_or(1),
                              ctx.rotated_pairs};
}

rope_scaling read_llama3(const json& block, const context& ctx) {
  llama3_scaling sc;  // defaults: Llama 3.1's published values
  sc.factor = f::positive(block, ctx.source, ctx.prefix, "factor").value_or(sc.factor);
  sc.low_freq_factor = f::positive(block, ctx.source, ctx.prefix, "low_freq_factor").value_or(sc.low_freq_factor);
  sc.high_freq_factor = f::positive(block, ctx.source, ctx.prefix, "high_freq_factor").value_or(sc.high_freq_factor);
  sc.original_max_position_embeddings = original_in_block(block, ctx).value_or(sc.original_max_position_embeddings);
  // Equal factors (Llama 4) leave the smoothing band empty, as the reference implementations
  // define it; only a reversed band, where they would disagree on which side wins, is refused.
  if (sc.high_freq_factor < sc.low_freq_factor)
    f::fail(ctx.source, f::path(ctx.prefix, "high_freq_factor"), json(sc.high_freq_factor),
            fmt::format("is not >= low_freq_factor {}", sc.low_freq_factor));
  return sc;
}

rope_scaling read_yarn(const json& block, const context& ctx) {
  yarn_scaling sc;
  const auto factor = f::positive(block, ctx.source, ctx.prefix, "factor");
  const auto freq_scale = f::positive(block, ctx.source, ctx.prefix, "freq_scale");  // ggml: 1/s
  if (factor && freq_scale && *factor * *freq_scale != 1)
    f::fail(ctx.source, f::path(ctx.prefix, "freq_scale"), block["freq_scale"],
            fmt::format("is not 1/factor (factor {})", *factor));
  if (!factor && !freq_scale)
    f::missing(ctx.source, f::path(ctx.prefix, "factor"),
               fmt::format("rope_type \"{}\" needs it", ctx.type_name));
  sc.factor = {factor ? *factor : 1 / *freq_scale, 1};

  const auto in_block = original_in_block(block, ctx);
  // Hugging Face: L0 defaults to max_position_embeddings.
  const auto l0 = in_block ? in_block : ctx.max_position_embeddings;
  if (!l0)
    f::missing(ctx.source, f::path(ctx.prefix, "original_max_position_embeddings"),
               "yarn needs it, or max_position_embeddings");
  sc.original_max_position_embeddings = *l0;
  // Newer transformers derive s = max_position_embeddings / L0 when the block gives L0.
  if (ctx.convention == scaling_convention::hf_derived_factor && in_block && ctx.max_position_embeddings)
    sc.factor = {static_cast<double>(*ctx.max_position_embeddings), static_cast<double>(*in_block)};
  sc.beta_fast = f::positive(block, ctx.source, ctx.prefix, "beta_fast").value_or(sc.beta_fast);
  sc.beta_slow = f::positive(block, ctx.source, ctx.prefix, "beta_slow").value_or(sc.beta_slow);
  // β_fast counts the rotations of the fast end of the ramp, β_slow of the slow end: with
  // β_fast < β_slow the ramp runs backwards (Peng et al. §3.2 take β = 32 > α = 1).
  if (sc.beta_fast < sc.beta_slow)
    f::fail(ctx.source, f::path(ctx.prefix, "beta_fast"), json(sc.beta_fast),
            fmt::format("is below beta_slow {}: the YaRN ramp would run backwards", sc.beta_slow));
  sc.mscale = f::non_negative(block, ctx.source, ctx.prefix, "mscale");
  sc.mscale_all_dim = f::non_negative(block, ctx.source, ctx.prefix, "mscale_all_dim");
  const auto extrapolation = f::non_negative(block, ctx.source, ctx.prefix, "extrapolation_factor");
  const auto ext = f::non_negative(block, ctx.source, ctx.prefix, "ext_factor");
  if (extrapolation && ext)
    f::fail(ctx.source, f::path(ctx.prefix, "ext_factor"), block["ext_factor"],
            "is given with extrapolation_factor (two spellings of one value)");
  sc.extrapolation_factor = extrapolation ? *extrapolation : ext.value_or(1);
  sc.attn_factor = f::non_negative(block, ctx.source, ctx.prefix, "attn_factor").value_or(1);
  sc.attention_factor = f::positive(block, ctx.source, ctx.prefix, "attention_factor");
  sc.truncate = f::boolean(block, ctx.source, ctx.prefix, "truncate").value_or(true);
  sc.convention = ctx.own_convention;
  return sc;
}

std::vector<double> factor_list(const json& block, const context& ctx, const char* key) {
  const std::string field = f::path(ctx.prefix, key);
  const json* list = f::given(block, key);
  if (!list) f::missing(ctx.source, field, "longrope needs it");
  const int pairs = ctx.rotary_dim / 2;
  if (!list->is_array() || list->size() != static_cast<std::size_t>(pairs))
    f::fail(ctx.source, field, *list, fmt::format("is not an array of rotary_dim/2 = {} numbers", pairs));
  std::vector<double> factors;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
      f::fail(ctx.source, fmt::format("{}[{}]", field, i), v, "is not a finite number > 0");
    factors.push_back(v.get<double>());
  }
  return factors;
}

rope_scaling read_longrope(const json& block, const context& ctx) {
  longrope_scaling sc;
  const double factor = f::positive(block, ctx.source, ctx.prefix, "factor").value_or(1);
  const auto in_block = original_in_block(block, ctx);
  const auto given = in_block ? in_block : ctx.top_level_original;  // Phi-3: L0 at the top level
  const auto l0 = given ? given : ctx.max_position_embeddings;
  if (!l0) f::missing(ctx.source, "original_max_position_embeddings", "longrope needs it");
  sc.original_max_position_embeddings = *l0;
  if (!in_block && ctx.top_level_original && !ctx.max_position_embeddings)
    f::missing(ctx.source, "max_position_embeddings", "longrope needs it");
  // Phi-3 configs give L0 and a larger max_position_embeddings: s is their ratio (HF, vLLM).
  sc.factor = given && ctx.max_position_embeddings
                  ? factor_ratio{static_cast<double>(*ctx.max_position_embeddings), static_cast<double>(*given)}
                  : factor_ratio{factor, 1};
  sc.long_factor = factor_list(block, ctx, "long_factor");
  sc.short_factor = factor_list(block, ctx, "short_factor");
  sc.attention_factor = f::positive(block, ctx.source, ctx.prefix, "attention_factor");
  sc.long_mscale = f::positive(block, ctx.source, ctx.prefix, "long_mscale");
  sc.short_mscale = f::positive(block, ctx.source, ctx.prefix, "short_mscale");
  sc.convention = ctx.own_convention;
  return sc;
}

// One line per type, for headers and counterexamples.
std::string ratio(const factor_ratio& r) {
  return r.denominator == 1 ? fmt::format("{}", r.numerator) : fmt::format("{}/{}", r.numerator, r.denominator);
}

template <class T, class F>
std::string (*describe_as(F))(const rope_scaling&) {
  return [](const rope_scaling& s) { return F{}(std::get<T>(s)); };
}

// A parameter's field of struct T, for forensics (a double, a length or a flag).
template <class T, auto member>
double get_field(const rope_scaling& s) {
  const auto& v = std::get<T>(s).*member;
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, factor_ratio>) return v.value();
  else return static_cast<double>(v);
}
template <class T, auto member>
void set_field(rope_scaling& s, double value) {
  auto& v = std::get<T>(s).*member;
  using field = std::remove_cvref_t<decltype(v)>;
  if constexpr (std::is_same_v<field, factor_ratio>) v = {value, 1};
  else if constexpr (std::is_same_v<field, bool>) v = value != 0;
  else if constexpr (std::is_integral_v<field>) v = static_cast<field>(std::llround(value));
  else v = value;
}
template <class T, auto member>
parameter field(std::string_view key, published_values values, std::string_view mistake,
                std::vector<double> listed = {}, placement where = placement::block) {
  return {key, values, std::move(listed), where, false, get_field<T, member>, set_field<T, member>, mistake};
}

// A parameter configs often leave out (the reader's default then applies).
parameter optional(parameter p) {
  p.optional = true;
  return p;
}

constexpr std::string_view factor_mistake = "a factor from another config or key, or given as 1/s as ggml's freq_scale is";
constexpr std::string_view context_mistake = "another context length taken for the original one";

// Hugging Face's LongRoPE block (Phi-3 calls it "su" first), shared by both names.
kind longrope_kind(std::string_view name, std::string_view example) {
  return {name,
          scaling_type::longrope,
          {"factor", "long_factor", "short_factor", "original_max_position_embeddings", "attention_factor",
           "long_mscale", "short_mscale"},
          read_longrope,
          describe_as<longrope_scaling>([](const longrope_scaling& s) {
            return fmt::format("longrope (convention {}), s {}, L0 {}", to_string(s.convention), ratio(s.factor),
                               s.original_max_position_embeddings);
          }),
          {scaling_convention::hf, scaling_convention::vllm},
          // Phi-3 writes no factor (s is max_position_embeddings / L0).
          {optional(field<longrope_scaling, &longrope_scaling::factor>("factor", published_values::factors,
                                                                       factor_mistake)),
           field<longrope_scaling, &longrope_scaling::original_max_position_embeddings>(
               "original_max_position_embeddings", published_values::contexts, context_mistake, {},
               placement::block_or_top_level),  // Phi-3 writes it at the top level
           // Phi-3's tables: short factors near 1, long ones growing with the pair index.
           {"long_factor", published_values::per_pair_growth, {0.37, 0.05, 2.0}},
           {"short_factor", published_values::per_pair_growth, {0.01}}},
          2,
          false,
          example};
}

const std::vector<kind>& kinds() {
  static const std::vector<kind> table = {
      {"default", scaling_type::none, {}, read_none,
       describe_as<no_scaling>([](const no_scaling&) { return std::string("default"); }), {}, {}, 2, false,
       R"({"rope_type": "default"})"},
      {"linear", scaling_type::linear, {"factor"}, read_linear,
       describe_as<linear_scaling>([](const linear_scaling& s) { return fmt::format("linear, s {}", s.factor); }),
       {},
       {field<linear_scaling, &linear_scaling::factor>("factor", published_values::factors, factor_mistake)},
       2, false, R"({"rope_type": "linear", "factor": 2})"},
      {"ntk", scaling_type::ntk, {"factor"}, read_ntk,
       describe_as<ntk_scaling>([](const ntk_scaling& s) { return fmt::format("ntk, s {}", s.factor); }),
       {},
       {field<ntk_scaling, &ntk_scaling::factor>("factor", published_values::factors, factor_mistake)},
       4, false, R"({"rope_type": "ntk", "factor": 2})"},
      {"dynamic", scaling_type::dynamic, {"factor"}, read_dynamic,
       describe_as<dynamic_scaling>([](const dynamic_scaling& s) {
         return fmt::format("dynamic (convention {}), s {}, max_position_embeddings {}", to_string(s.convention),
                            s.factor, s.max_position_embeddings);
       }),
       {scaling_convention::hf, scaling_convention::vllm},
       {field<dynamic_scaling, &dynamic_scaling::factor>("factor", published_values::factors, factor_mistake),
        field<dynamic_scaling, &dynamic_scaling::max_position_embeddings>(
            "max_position_embeddings", published_values::contexts, context_mistake,
            {}, placement::top_level)},
       4, false, R"({"rope_type": "dynamic", "factor": 2})"},
      {"yarn", scaling_type::yarn,
       {"factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale",
        "mscale_all_dim", "truncate", "extrapolation_factor", "attn_factor", "freq_scale", "ext_factor",
        "n_ctx_orig"},
       read_yarn,
       describe_as<yarn_scaling>([](const yarn_scaling& s) {
         return fmt::format("yarn (convention {}), s {}, L0 {}", to_string(s.convention), ratio(s.factor),
                            s.original_max_position_embeddings);
       }),
       {scaling_convention::hf, scaling_convention::deepseek, scaling_convention::ggml},
       {field<yarn_scaling, &yarn_scaling::factor>("factor", published_values::factors, factor_mistake),
        field<yarn_scaling, &yarn_scaling::original_max_position_embeddings>(
            "original_max_position_embeddings", published_values::contexts, context_mistake),
        field<yarn_scaling, &yarn_scaling::beta_fast>("beta_fast", published_values::listed,
                                                      "the config's beta_fast not read: YaRN's default or another model's value used", {32, 16}),
        optional(field<yarn_scaling, &yarn_scaling::beta_slow>(
            "beta_slow", published_values::listed, "the config's beta_slow not read: YaRN's default used", {1})),
        optional(field<yarn_scaling, &yarn_scaling::truncate>(
            "truncate", published_values::flag,
            "the config's truncate ignored: the correction range rounded, or not, regardless")),
        // DeepSeek's pair and attn_factor (DeepSeek, ggml): forensics drops them as a structural edit.
        {"mscale", published_values::listed, {1.0, 0.707}, placement::block, true},
        {"mscale_all_dim", published_values::listed, {1.0, 0.0}, placement::block, true, nullptr, nullptr, {}, true},
        {"attn_factor", published_values::listed, {0.9, 1.1}, placement::block, true}},
       2, false, R"({"rope_type": "yarn", "factor": 2})"},
      {"llama3", scaling_type::llama3,
       {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
       read_llama3,
       describe_as<llama3_scaling>([](const llama3_scaling& s) {
         return fmt::format("llama3, s {}, low_freq_factor {}, high_freq_factor {}, L0 {}", s.factor,
                            s.low_freq_factor, s.high_freq_factor, s.original_max_position_embeddings);
       }),
       {},
       // Llama 3.1 to 4 publish low 1 and high 4; 2 and 2.5 keep any pair a valid band (high ≥ low).
       {field<llama3_scaling, &llama3_scaling::factor>("factor", published_values::factors, factor_mistake),
        field<llama3_scaling, &llama3_scaling::low_freq_factor>(
            "low_freq_factor", published_values::listed,
            "the config's low_freq_factor not read: Llama 3.1's default or another model's value used", {1, 2}),
        field<llama3_scaling, &llama3_scaling::high_freq_factor>(
            "high_freq_factor", published_values::listed,
            "the config's high_freq_factor not read: Llama 3.1's default or another model's value used", {4, 2.5}),
        field<llama3_scaling, &llama3_scaling::original_max_position_embeddings>(
            "original_max_position_embeddings", published_values::contexts, context_mistake)},
       2, false, R"({"rope_type": "llama3"})"},
      longrope_kind("longrope", R"({"rope_type": "longrope", "long_factor": [1, 2, 3, 4], "short_factor": [1, 1, 1, 1]})"),
      longrope_kind("su", R"({"type": "su", "long_factor": [1, 2, 3, 4], "short_factor": [1, 1, 1, 1]})"),
      {"proportional", scaling_type::proportional, {"factor"}, read_proportional,
       describe_as<proportional_scaling>([](const proportional_scaling& s) {
         return fmt::format("proportional, s {}, rotated_pairs {}", s.factor, s.rotated_pairs);
       }),
       {},
       {field<proportional_scaling, &proportional_scaling::factor>("factor", published_values::factors,
                                                                   factor_mistake),
        // Gemma 4's rotated fraction of the whole head, written at the top level.
        {"partial_rotary_factor", published_values::head_fraction, {1.0, 0.5, 0.25}, placement::top_level}},
       2, true, R"({"rope_type": "proportional", "factor": 2})"},
  };
  return table;
}

}  // namespace

std::span<const kind> catalog() { return kinds(); }

const kind* find(std::string_view name) {
  for (const kind& k : kinds())
    if (k.name == name) return &k;
  return nullptr;
}

std::string names() {
  std::string out;
  for (const kind& k : kinds()) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

const kind& of(scaling_type type) {
  for (const kind& k : kinds())
    if (k.type == type) return k;
  throw std::logic_error("spec_scaling::of: a scaling_type without a catalog entry");
}

std::span<const double> published_factors() {
  static const double factors[] = {2, 4, 8, 16, 32, 40, 64, 2.5};
  return factors;
}

std::span<const double> published_contexts() {
  // Powers of two: DeepSeek-V3 and gpt-oss 4096, Llama 3.1 8192, Qwen2.5 32768.
  static const double contexts[] = {2048, 4096, 8192, 16384, 32768, 65536, 131072};
  return contexts;
}

}  // namespace ropecheck::spec_scaling

namespace ropecheck {

std::string describe(const rope_scaling& scaling) {
  return spec_scaling::of(type_of(scaling)).describe(scaling);
}

}  // namespace ropecheck
