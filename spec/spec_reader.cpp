#include "spec/spec_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

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

void refuse_scaling(const json& config, std::string_view source) {
  const auto it = config.find("rope_scaling");
  if (it == config.end() || it->is_null()) return;
  if (!it->is_object()) fail(source, "rope_scaling", *it, "is not an object or null");
  for (const char* key : {"rope_type", "type"}) {
    if (const auto t = it->find(key); t != it->end()) {
      if (*t == "default") return;
      fail(source, fmt::format("rope_scaling.{}", key), *t,
           "is not supported yet (only unscaled RoPE)");
    }
  }
  fail(source, "rope_scaling", *it, "has no 'rope_type' or 'type'");
}

}  // namespace

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
  refuse_scaling(config, source);

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
  return spec;
}

rope_spec read_spec(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw spec_error(fmt::format("{}: cannot open the spec file", file.string()));
  json config;
  try {
    config = json::parse(in);
  } catch (const json::parse_error& e) {
    throw spec_error(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
  return parse_spec(config, file.string());
}

}  // namespace ropecheck
