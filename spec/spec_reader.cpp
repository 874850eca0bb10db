// The JSON spec reader (spec_reader.h): a Hugging Face config.json or ropecheck's own spec
// fields into one rope_spec, refusing anything it does not understand.
#include "spec/spec_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/io_error.h"
#include "io/json_file.h"

namespace ropecheck {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(std::string_view source, std::string_view field, const json& value,
                       std::string_view problem) {
  throw spec_error(fmt::format("{}: field '{}': {} {}", source, field, value.dump(), problem));
}

std::optional<double> number_field(const json& config, std::string_view source,
                                   const char* field) {
  const auto it = config.find(field);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) fail(source, field, *it, "is not a number");
  return it->get<double>();
}

std::optional<int> int_field(const json& config, std::string_view source, const char* field) {
  const auto it = config.find(field);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1 ||
      it->get<std::int64_t>() > (1 << 20))
    fail(source, field, *it, "is not an integer in [1, 1048576]");
  return static_cast<int>(it->get<std::int64_t>());
}

int read_head_dim(const json& config, std::string_view source) {
  for (const char* field : {"qk_rope_head_dim", "head_dim"}) {
    if (auto v = int_field(config, source, field)) return *v;
  }
  for (auto [width, heads] : {std::pair{"hidden_size", "num_attention_heads"},
                              std::pair{"n_embd", "n_head"}}) {
    const auto w = int_field(config, source, width);
    const auto h = int_field(config, source, heads);
    if (w && h) {
      if (*w % *h != 0)
        fail(source, width, config[width],
             fmt::format("is not divisible by {} = {}", heads, *h));
      return *w / *h;
    }
  }
  throw spec_error(fmt::format(
      "{}: field 'head_dim': missing (give head_dim, or hidden_size and num_attention_heads)",
      source));
}

int read_rotary_dim(const json& config, std::string_view source, int head_dim) {
  if (auto v = int_field(config, source, "rotary_dim")) return *v;
  for (const char* field : {"partial_rotary_factor", "rotary_pct"}) {
    if (auto f = number_field(config, source, field)) {
      if (!(*f > 0 && *f <= 1)) fail(source, field, config[field], "is not in (0, 1]");
      return static_cast<int>(head_dim * *f);  // Transformers: int(head_dim * factor)
    }
  }
  return head_dim;
}

pairing read_pairing(const json& config, std::string_view source) {
  if (const auto it = config.find("pairing"); it != config.end()) {
    if (*it == "half") return pairing::half_split;
    if (*it == "adjacent") return pairing::adjacent;
    fail(source, "pairing", *it, "is not \"half\" or \"adjacent\"");
  }
  const auto model_type = config.value("model_type", json()).is_string()
                              ? config["model_type"].get<std::string>()
                              : std::string();
  // GPT-J's rotate_every_two and DeepSeek's interleaved rope pair adjacent coordinates.
  if (model_type == "gptj" || model_type == "deepseek_v2" || model_type == "deepseek_v3")
    return pairing::adjacent;
  return pairing::half_split;
}

std::optional<std::int64_t> int64_field(const json& object, std::string_view source,
                                        const std::string& field, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  // Integral-valued floats (8192.0) are accepted: some configs are re-saved through Python floats.
  if (!it->is_number() || !(it->get<double>() >= 1 && it->get<double>() <= 2147483648.0) ||
      it->get<double>() != std::floor(it->get<double>()))
    fail(source, field, *it, "is not an integer in [1, 2^31]");
  return static_cast<std::int64_t>(it->get<double>());
}

double positive_number(const json& object, std::string_view source, const std::string& field,
                       const char* key) {
  const json& v = object[key];
  if (!v.is_number()) fail(source, field, v, "is not a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || !(d > 0)) fail(source, field, v, "is not a finite number > 0");
  return d;
}

std::optional<scaling_type> scaling_type_named(const std::string& name) {
  if (name == "default") return scaling_type::none;
  if (name == "linear") return scaling_type::linear;
  if (name == "ntk") return scaling_type::ntk;
  if (name == "dynamic") return scaling_type::dynamic;
  if (name == "yarn") return scaling_type::yarn;
  if (name == "llama3") return scaling_type::llama3;
  if (name == "longrope" || name == "su") return scaling_type::longrope;  // `su`: Phi-3's first name
  return std::nullopt;
}

// The keys each rope_type may carry (Hugging Face's rope_config_validation, plus DeepSeek's and
// ggml's YaRN spellings, and vLLM's LongRoPE mscales). Anything else is refused by name.
std::vector<std::string_view> keys_of(scaling_type t) {
  std::vector<std::string_view> keys = {"rope_type", "type"};
  auto add = [&](std::initializer_list<std::string_view> more) {
    keys.insert(keys.end(), more.begin(), more.end());
  };
  switch (t) {
    case scaling_type::none: break;
    case scaling_type::linear:
    case scaling_type::ntk:
    case scaling_type::dynamic: add({"factor"}); break;
    case scaling_type::yarn:
      add({"factor", "original_max_position_embeddings", "attention_factor", "beta_fast",
           "beta_slow", "mscale", "mscale_all_dim", "truncate", "extrapolation_factor",
           "attn_factor", "freq_scale", "ext_factor", "n_ctx_orig"});
      break;
    case scaling_type::llama3:
      add({"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"});
      break;
    case scaling_type::longrope:
      add({"factor", "long_factor", "short_factor", "original_max_position_embeddings",
           "attention_factor", "long_mscale", "short_mscale"});
      break;
  }
  return keys;
}

std::optional<scaling_convention> convention_named(const std::string& name) {
  for (auto c : {scaling_convention::hf, scaling_convention::hf_derived_factor,
                 scaling_convention::vllm, scaling_convention::deepseek, scaling_convention::ggml})
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::vector<double> factor_list(const json& rs, std::string_view source, const char* key,
                                int rotary_dim) {
  const std::string field = fmt::format("rope_scaling.{}", key);
  const auto it = rs.find(key);
  if (it == rs.end() || it->is_null())
    throw spec_error(fmt::format("{}: field '{}': missing (longrope needs it)", source, field));
  if (!it->is_array() || it->size() != static_cast<std::size_t>(rotary_dim / 2))
    fail(source, field, *it,
         fmt::format("is not an array of rotary_dim/2 = {} numbers", rotary_dim / 2));
  std::vector<double> f;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
      fail(source, fmt::format("{}[{}]", field, i), v, "is not a finite number > 0");
    f.push_back(v.get<double>());
  }
  return f;
}

// rope_scaling as a Hugging Face config.json writes it, plus ropecheck's top-level keys
// (scaling_convention, attention_factor, sequence_length). See docs/scaling.md.
void read_scaling(const json& config, std::string_view source, rope_spec& spec) {
  rope_scaling& sc = spec.scaling;
  const auto max_pos = int64_field(config, source, "max_position_embeddings",
                                   "max_position_embeddings");
  sc.max_position_embeddings = max_pos.value_or(0);
  if (auto n = int64_field(config, source, "sequence_length", "sequence_length"))
    spec.sequence_length = *n;
  if (config.contains("attention_factor") && !config["attention_factor"].is_null())
    spec.attention_factor = positive_number(config, source, "attention_factor", "attention_factor");
  if (const auto it = config.find("scaling_convention"); it != config.end()) {
    const auto c = it->is_string() ? convention_named(it->get<std::string>()) : std::nullopt;
    if (!c)
      fail(source, "scaling_convention", *it,
           "is not one of \"hf\", \"hf_derived_factor\", \"vllm\", \"deepseek\", \"ggml\"");
    sc.convention = *c;
  }

  const auto it = config.find("rope_scaling");
  if (it == config.end() || it->is_null()) return;
  const json& rs = *it;
  if (!rs.is_object()) fail(source, "rope_scaling", rs, "is not an object or null");
  const char* type_key = rs.contains("rope_type") ? "rope_type" : "type";
  if (!rs.contains(type_key)) fail(source, "rope_scaling", rs, "has no 'rope_type' or 'type'");
  if (rs.contains("rope_type") && rs.contains("type") && rs["rope_type"] != rs["type"])
    fail(source, "rope_scaling.type", rs["type"],
         fmt::format("disagrees with rope_scaling.rope_type {}", rs["rope_type"].dump()));
  const json& type_value = rs[type_key];
  const auto type =
      type_value.is_string() ? scaling_type_named(type_value.get<std::string>()) : std::nullopt;
  if (!type)
    fail(source, fmt::format("rope_scaling.{}", type_key), type_value,
         "is not a known rope_type (default, linear, ntk, dynamic, yarn, llama3, longrope, su)");
  sc.type = *type;
  const auto allowed = keys_of(sc.type);
  for (const auto& [key, value] : rs.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(source, fmt::format("rope_scaling.{}", key), value,
           fmt::format("is not a key of rope_type \"{}\"", type_value.get<std::string>()));
  }
  auto field = [](const char* key) { return fmt::format("rope_scaling.{}", key); };
  auto number = [&](const char* key) -> std::optional<double> {
    if (!rs.contains(key) || rs[key].is_null()) return std::nullopt;
    return positive_number(rs, source, field(key), key);
  };
  auto require = [&](std::optional<double> v, const char* key) {
    if (!v)
      throw spec_error(fmt::format("{}: field '{}': missing (rope_type \"{}\" needs it)", source,
                                   field(key), type_value.get<std::string>()));
    return *v;
  };
  auto original = [&]() -> std::optional<std::int64_t> {
    if (auto v = int64_field(rs, source, field("original_max_position_embeddings"),
                             "original_max_position_embeddings")) {
      sc.original_max_in_rope_scaling = true;
      return v;
    }
    return std::nullopt;
  };

  switch (sc.type) {
    case scaling_type::none: return;
    case scaling_type::linear:
    case scaling_type::ntk: sc.factor = require(number("factor"), "factor"); return;
    case scaling_type::dynamic:
      sc.factor = require(number("factor"), "factor");
      if (!max_pos)
        throw spec_error(fmt::format(
            "{}: field 'max_position_embeddings': missing (rope_type \"dynamic\" needs it)",
            source));
      return;
    case scaling_type::llama3: {
      // Defaults are Llama 3.1's published values.
      sc.factor = number("factor").value_or(8);
      sc.low_freq_factor = number("low_freq_factor").value_or(1);
      sc.high_freq_factor = number("high_freq_factor").value_or(4);
      sc.original_max_position_embeddings = original().value_or(8192);
      if (!(sc.high_freq_factor > sc.low_freq_factor))
        fail(source, field("high_freq_factor"), rs.value("high_freq_factor", json(4)),
             fmt::format("is not > low_freq_factor {}", sc.low_freq_factor));
      return;
    }
    case scaling_type::yarn: {
      const auto factor = number("factor");
      const auto freq_scale = number("freq_scale");  // ggml: freq_scale = 1/s
      if (factor && freq_scale && *factor * *freq_scale != 1)
        fail(source, field("freq_scale"), rs["freq_scale"],
             fmt::format("is not 1/factor (factor {})", *factor));
      sc.factor = factor ? *factor : 1 / require(freq_scale, "factor");
      auto l0 = original();
      if (auto n = int64_field(rs, source, field("n_ctx_orig"), "n_ctx_orig")) {
        if (l0 && *l0 != *n)
          fail(source, field("n_ctx_orig"), rs["n_ctx_orig"],
               fmt::format("disagrees with original_max_position_embeddings {}", *l0));
        l0 = n;
        sc.original_max_in_rope_scaling = true;
      }
      if (!l0) l0 = max_pos;  // Hugging Face: L0 defaults to max_position_embeddings
      if (!l0)
        throw spec_error(fmt::format(
            "{}: field 'rope_scaling.original_max_position_embeddings': missing (yarn needs it, "
            "or max_position_embeddings)",
            source));
      sc.original_max_position_embeddings = *l0;
      sc.beta_fast = number("beta_fast").value_or(32);
      sc.beta_slow = number("beta_slow").value_or(1);
      for (const char* key : {"mscale", "mscale_all_dim", "extrapolation_factor", "ext_factor",
                              "attn_factor"}) {
        // These may be 0 (ggml ext_factor 0 turns the ramp off; DeepSeek mscale_all_dim 0).
        if (!rs.contains(key) || rs[key].is_null()) continue;
        if (!rs[key].is_number() || !std::isfinite(rs[key].get<double>()) ||
            rs[key].get<double>() < 0)
          fail(source, field(key), rs[key], "is not a finite number >= 0");
      }
      auto given = [&](const char* key) { return rs.contains(key) && !rs[key].is_null(); };
      if (given("mscale")) sc.mscale = rs["mscale"].get<double>();
      if (given("mscale_all_dim")) sc.mscale_all_dim = rs["mscale_all_dim"].get<double>();
      if (given("extrapolation_factor") && given("ext_factor"))
        fail(source, field("ext_factor"), rs["ext_factor"],
             "is given with extrapolation_factor (two spellings of one value)");
      for (const char* key : {"extrapolation_factor", "ext_factor"})
        if (given(key)) sc.extrapolation_factor = rs[key].get<double>();
      if (given("attn_factor")) sc.attn_factor = rs["attn_factor"].get<double>();
      sc.attention_factor = number("attention_factor");
      if (rs.contains("truncate")) {
        if (!rs["truncate"].is_boolean())
          fail(source, field("truncate"), rs["truncate"], "is not true or false");
        sc.truncate = rs["truncate"].get<bool>();
      }
      return;
    }
    case scaling_type::longrope: {
      sc.factor = number("factor").value_or(1);
      auto l0 = original();
      if (!l0) {
        if (auto top = int64_field(config, source, "original_max_position_embeddings",
                                   "original_max_position_embeddings")) {
          l0 = top;
          sc.original_max_top_level = true;
        }
      }
      if (!l0) l0 = max_pos;
      if (!l0)
        throw spec_error(fmt::format(
            "{}: field 'original_max_position_embeddings': missing (longrope needs it)", source));
      sc.original_max_position_embeddings = *l0;
      if (sc.original_max_top_level && !max_pos)
        throw spec_error(fmt::format(
            "{}: field 'max_position_embeddings': missing (longrope needs it)", source));
      sc.long_factor = factor_list(rs, source, "long_factor", spec.rotary_dim);
      sc.short_factor = factor_list(rs, source, "short_factor", spec.rotary_dim);
      sc.attention_factor = number("attention_factor");
      sc.long_mscale = number("long_mscale");
      sc.short_mscale = number("short_mscale");
      return;
    }
  }
}

}  // namespace

std::string_view to_string(scaling_type t) {
  switch (t) {
    case scaling_type::none: return "default";
    case scaling_type::linear: return "linear";
    case scaling_type::ntk: return "ntk";
    case scaling_type::dynamic: return "dynamic";
    case scaling_type::yarn: return "yarn";
    case scaling_type::llama3: return "llama3";
    case scaling_type::longrope: return "longrope";
  }
  return "?";
}

std::string_view to_string(scaling_convention c) {
  switch (c) {
    case scaling_convention::hf: return "hf";
    case scaling_convention::hf_derived_factor: return "hf_derived_factor";
    case scaling_convention::vllm: return "vllm";
    case scaling_convention::deepseek: return "deepseek";
    case scaling_convention::ggml: return "ggml";
  }
  return "?";
}

rope_spec parse_spec(const json& config, std::string_view source) {
  if (!config.is_object())
    throw spec_error(fmt::format("{}: the spec is not a JSON object", source));
  rope_spec spec;
  spec.source = source;
  spec.head_dim = read_head_dim(config, source);
  spec.rotary_dim = read_rotary_dim(config, source, spec.head_dim);
  const char* base_field = config.contains("rope_theta") ? "rope_theta" : "rotary_emb_base";
  spec.base = number_field(config, source, base_field).value_or(10000.0);
  spec.pair = read_pairing(config, source);

  const char* rotary_field = config.contains("rotary_dim")              ? "rotary_dim"
                             : config.contains("partial_rotary_factor") ? "partial_rotary_factor"
                             : config.contains("rotary_pct")            ? "rotary_pct"
                                                                        : "head_dim";
  if (spec.rotary_dim % 2 != 0 || spec.rotary_dim < 2)
    fail(source, rotary_field, config.value(rotary_field, json(spec.rotary_dim)),
         fmt::format("gives rotary_dim {}, which is not even and >= 2", spec.rotary_dim));
  if (spec.rotary_dim > spec.head_dim)
    fail(source, rotary_field, config.value(rotary_field, json(spec.rotary_dim)),
         fmt::format("gives rotary_dim {} > head_dim {}", spec.rotary_dim, spec.head_dim));
  if (!std::isfinite(spec.base) || !(spec.base > 1))
    fail(source, base_field, config[base_field], "is not a finite number > 1");
  read_scaling(config, source, spec);  // after rotary_dim: longrope checks its factor counts
  return spec;
}

rope_spec read_spec(const std::filesystem::path& file) {
  json config;
  try {
    // io/json_file.h: a regular file only; a repeated key or a number past double's range is
    // an error naming the field.
    config = read_json_file(file);
  } catch (const io_error& e) {
    throw spec_error(e.what());
  }
  return parse_spec(config, file.string());
}

}  // namespace ropecheck
