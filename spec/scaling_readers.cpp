// One reader per rope_type (scaling_readers.h). Keys and defaults follow Hugging Face
// transformers' modeling_rope_utils (RopeParameters, _validate_*_rope_parameters, the
// _compute_*_parameters functions), plus DeepSeek's and ggml's YaRN spellings and vLLM's
// LongRoPE mscales. Formulas: docs/scaling.md.
#include "spec/scaling_readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

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

// The convention as a type reads it: the ones it distinguishes kept, every other one hf (their
// code computes this type as Hugging Face's does).
scaling_convention one_of(scaling_convention c, std::initializer_list<scaling_convention> distinguished) {
  return std::find(distinguished.begin(), distinguished.end(), c) != distinguished.end()
             ? c
             : scaling_convention::hf;
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
  return dynamic_scaling{factor, *ctx.max_position_embeddings,
                         one_of(ctx.convention, {scaling_convention::vllm})};
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
  sc.convention = one_of(ctx.convention, {scaling_convention::deepseek, scaling_convention::ggml});
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
  sc.convention = one_of(ctx.convention, {scaling_convention::vllm});
  return sc;
}

const std::array<kind, 9> kinds = {{
    {"default", scaling_type::none, {}, read_none},
    {"linear", scaling_type::linear, {"factor"}, read_linear},
    {"ntk", scaling_type::ntk, {"factor"}, read_ntk},
    {"dynamic", scaling_type::dynamic, {"factor"}, read_dynamic},
    {"yarn", scaling_type::yarn,
     {"factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow",
      "mscale", "mscale_all_dim", "truncate", "extrapolation_factor", "attn_factor", "freq_scale",
      "ext_factor", "n_ctx_orig"},
     read_yarn},
    {"llama3", scaling_type::llama3,
     {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
     read_llama3},
    {"longrope", scaling_type::longrope,
     {"factor", "long_factor", "short_factor", "original_max_position_embeddings",
      "attention_factor", "long_mscale", "short_mscale"},
     read_longrope},
    {"su", scaling_type::longrope,  // Phi-3's first name for longrope
     {"factor", "long_factor", "short_factor", "original_max_position_embeddings",
      "attention_factor", "long_mscale", "short_mscale"},
     read_longrope},
    {"proportional", scaling_type::proportional, {"factor"}, read_proportional},
}};

}  // namespace

std::span<const kind> catalog() { return kinds; }

const kind* find(std::string_view name) {
  for (const kind& k : kinds)
    if (k.name == name) return &k;
  return nullptr;
}

std::string names() {
  std::string out;
  for (const kind& k : kinds) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

}  // namespace ropecheck::spec_scaling
