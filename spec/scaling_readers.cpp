// One reader per rope_type (scaling_readers.h). Keys and defaults follow Hugging Face
// transformers' modeling_rope_utils (RopeParameters, _validate_*_rope_parameters, the
// _compute_*_parameters functions), plus DeepSeek's and ggml's YaRN spellings and vLLM's
// LongRoPE mscales. Formulas: docs/scaling.md.
#include "spec/scaling_readers.h"

#include <fmt/format.h>

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
std::optional<std::int64_t> original_in_block(const json& block, const context& ctx,
                                              rope_scaling& sc) {
  auto l0 = f::length(block, ctx.source, ctx.prefix, "original_max_position_embeddings");
  if (const auto n = f::length(block, ctx.source, ctx.prefix, "n_ctx_orig")) {
    if (l0 && *l0 != *n)
      f::fail(ctx.source, f::path(ctx.prefix, "n_ctx_orig"), block["n_ctx_orig"],
              fmt::format("disagrees with original_max_position_embeddings {}", *l0));
    l0 = n;
  }
  if (l0) sc.original_max_in_rope_scaling = true;
  return l0;
}

void read_none(const json&, const context&, rope_scaling&) {}

void read_factor_only(const json& block, const context& ctx, rope_scaling& sc) {
  sc.factor = required_factor(block, ctx);
}

void read_dynamic(const json& block, const context& ctx, rope_scaling& sc) {
  sc.factor = required_factor(block, ctx);
  if (!ctx.max_position_embeddings)
    f::missing(ctx.source, "max_position_embeddings", "rope_type \"dynamic\" needs it");
}

// Gemma 4's proportional RoPE: θ_j/s for the first floor(p·head_dim/2) pairs of the whole head,
// 0 (pass-through) for the rest; p is partial_rotary_factor (read with the setup).
void read_proportional(const json& block, const context& ctx, rope_scaling& sc) {
  sc.factor = f::positive(block, ctx.source, ctx.prefix, "factor").value_or(1);
}

void read_llama3(const json& block, const context& ctx, rope_scaling& sc) {
  // Defaults are Llama 3.1's published values.
  sc.factor = f::positive(block, ctx.source, ctx.prefix, "factor").value_or(8);
  sc.low_freq_factor = f::positive(block, ctx.source, ctx.prefix, "low_freq_factor").value_or(1);
  sc.high_freq_factor = f::positive(block, ctx.source, ctx.prefix, "high_freq_factor").value_or(4);
  sc.original_max_position_embeddings = original_in_block(block, ctx, sc).value_or(8192);
  // Equal factors (Llama 4) leave the smoothing band empty, as the reference implementations
  // define it; only a reversed band, where they would disagree on which side wins, is refused.
  if (sc.high_freq_factor < sc.low_freq_factor)
    f::fail(ctx.source, f::path(ctx.prefix, "high_freq_factor"), json(sc.high_freq_factor),
            fmt::format("is not >= low_freq_factor {}", sc.low_freq_factor));
}

void read_yarn(const json& block, const context& ctx, rope_scaling& sc) {
  const auto factor = f::positive(block, ctx.source, ctx.prefix, "factor");
  const auto freq_scale = f::positive(block, ctx.source, ctx.prefix, "freq_scale");  // ggml: 1/s
  if (factor && freq_scale && *factor * *freq_scale != 1)
    f::fail(ctx.source, f::path(ctx.prefix, "freq_scale"), block["freq_scale"],
            fmt::format("is not 1/factor (factor {})", *factor));
  if (!factor && !freq_scale)
    f::missing(ctx.source, f::path(ctx.prefix, "factor"),
               fmt::format("rope_type \"{}\" needs it", ctx.type_name));
  sc.factor = factor ? *factor : 1 / *freq_scale;

  auto l0 = original_in_block(block, ctx, sc);
  if (!l0) l0 = ctx.max_position_embeddings;  // Hugging Face: L0 defaults to max_position_embeddings
  if (!l0)
    f::missing(ctx.source, f::path(ctx.prefix, "original_max_position_embeddings"),
               "yarn needs it, or max_position_embeddings");
  sc.original_max_position_embeddings = *l0;
  sc.beta_fast = f::positive(block, ctx.source, ctx.prefix, "beta_fast").value_or(32);
  sc.beta_slow = f::positive(block, ctx.source, ctx.prefix, "beta_slow").value_or(1);
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

void read_longrope(const json& block, const context& ctx, rope_scaling& sc) {
  sc.factor = f::positive(block, ctx.source, ctx.prefix, "factor").value_or(1);
  auto l0 = original_in_block(block, ctx, sc);
  if (!l0 && ctx.top_level_original) {
    l0 = ctx.top_level_original;
    sc.original_max_top_level = true;
  }
  if (!l0) l0 = ctx.max_position_embeddings;
  if (!l0) f::missing(ctx.source, "original_max_position_embeddings", "longrope needs it");
  sc.original_max_position_embeddings = *l0;
  if (sc.original_max_top_level && !ctx.max_position_embeddings)
    f::missing(ctx.source, "max_position_embeddings", "longrope needs it");
  sc.long_factor = factor_list(block, ctx, "long_factor");
  sc.short_factor = factor_list(block, ctx, "short_factor");
  sc.attention_factor = f::positive(block, ctx.source, ctx.prefix, "attention_factor");
  sc.long_mscale = f::positive(block, ctx.source, ctx.prefix, "long_mscale");
  sc.short_mscale = f::positive(block, ctx.source, ctx.prefix, "short_mscale");
}

const std::array<kind, 9> kinds = {{
    {"default", scaling_type::none, {}, read_none},
    {"linear", scaling_type::linear, {"factor"}, read_factor_only},
    {"ntk", scaling_type::ntk, {"factor"}, read_factor_only},
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
