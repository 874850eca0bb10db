// The neighbouring specs of config_neighbours.h, as two tables: the scaling parameters, each
// with the values configs conventionally give it, and the structural edits (the scaling
// dropped, a convention, a table or two factors exchanged, the attention factor or DeepSeek's
// mscale keys, the base, the rotary dims, the sequence length, another layer type's setup).
#include "audit/config_neighbours.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "io/json_file.h"
#include "spec/rope_setups.h"
#include "spec/scaling_readers.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

// The values a parameter is tried at: those published configs give it (spec/scaling_readers.h),
// plus for a factor 1 (no scaling) and 1/s (ggml's freq_scale), for a context the spec's own.
std::vector<double> values_of(const spec_scaling::parameter& p, const rope_spec& spec, double current) {
  using spec_scaling::published_values;
  std::vector<double> v;
  switch (p.values) {
    case published_values::factors: {
      v = {1};
      const auto factors = spec_scaling::published_factors();
      v.insert(v.end(), factors.begin(), factors.end());
      if (current > 0 && current != 1) v.push_back(1 / current);
      break;
    }
    case published_values::contexts: {
      const auto contexts = spec_scaling::published_contexts();
      v.assign(contexts.begin(), contexts.end());
      v.push_back(static_cast<double>(spec.max_position_embeddings));
      break;
    }
    case published_values::flag: v = {0, 1}; break;
    case published_values::listed: v = p.listed; break;
    case published_values::per_pair_growth:
    case published_values::head_fraction: break;  // not a number of the struct
  }
  // Each once, in the order above (a tie names the first neighbour).
  std::vector<double> once;
  for (const double x : v)
    if (std::find(once.begin(), once.end(), x) == once.end()) once.push_back(x);
  return once;
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

// What the structural edits read besides the spec.
struct edit_input {
  const rope_spec& spec;
  std::int64_t sequence_length;
  double attention_factor;
  std::span<const rope_spec> other_layer_types;
};

using structural_edit = void (*)(const edit_input&, std::vector<config_neighbour>&);

void scaling_dropped(const edit_input& in, std::vector<config_neighbour>& out) {
  if (type_of(in.spec.scaling) == scaling_type::none) return;
  rope_spec n = in.spec;
  n.scaling = no_scaling{};
  out.push_back({"rope_scaling", "none", std::string(to_string(type_of(in.spec.scaling))),
                 "the scaling computed but not applied", std::move(n)});
}

void other_convention(const edit_input& in, std::vector<config_neighbour>& out) {
  const auto current = convention_of(in.spec.scaling);
  if (!current) return;
  // The conventions the type distinguishes (its catalog entry); hf_derived_factor is resolved by
  // the reader into YaRN's factor, which the factor parameter varies.
  for (const scaling_convention c : spec_scaling::of(type_of(in.spec.scaling)).conventions) {
    if (c == *current) continue;
    rope_spec n = in.spec;
    std::visit(
        [c](auto& s) {
          if constexpr (requires { s.convention; }) s.convention = c;
        },
        n.scaling);
    out.push_back({"scaling_convention", std::string(to_string(c)), std::string(to_string(*current)),
                   "another implementation's formula", std::move(n)});
  }
}

void llama3_factors_exchanged(const edit_input& in, std::vector<config_neighbour>& out) {
  const auto* l = std::get_if<llama3_scaling>(&in.spec.scaling);
  if (!l || l->low_freq_factor == l->high_freq_factor) return;
  rope_spec n = in.spec;
  auto& m = std::get<llama3_scaling>(n.scaling);
  std::swap(m.low_freq_factor, m.high_freq_factor);
  out.push_back({"rope_scaling.low_freq_factor, high_freq_factor",
                 fmt::format("{}, {}", number(m.low_freq_factor), number(m.high_freq_factor)),
                 fmt::format("{}, {}", number(l->low_freq_factor), number(l->high_freq_factor)),
                 "the two factors exchanged", std::move(n)});
}

void longrope_tables_exchanged(const edit_input& in, std::vector<config_neighbour>& out) {
  const auto* l = std::get_if<longrope_scaling>(&in.spec.scaling);
  if (!l || l->long_factor == l->short_factor) return;
  const bool long_regime = in.sequence_length > l->original_max_position_embeddings;
  rope_spec n = in.spec;
  auto& m = std::get<longrope_scaling>(n.scaling);
  std::swap(m.long_factor, m.short_factor);
  out.push_back({"rope_scaling.long_factor / short_factor", long_regime ? "short_factor" : "long_factor",
                 fmt::format("{} (sequence length {}, original_max_position_embeddings {})",
                             long_regime ? "long_factor" : "short_factor", in.sequence_length,
                             l->original_max_position_embeddings),
                 "the other factor table used: the regime chosen by another length", std::move(n)});
}

void attention_factor_edits(const edit_input& in, std::vector<config_neighbour>& out) {
  const double a = in.attention_factor;
  if (a == 1 || !std::isfinite(a)) return;
  const std::pair<double, const char*> edits[] = {
      {1.0, "YaRN's mscale ignored: the attention factor missing from cos/sin"},
      {a * a, "the attention factor applied twice: in the cos/sin cache and again on the outputs"},
  };
  for (const auto& [value, mistake] : edits) {
    rope_spec n = in.spec;
    n.attention_factor = value;
    out.push_back({"attention_factor", number(value), number(a), mistake, std::move(n)});
  }
}

// DeepSeek's YaRN attention factor g(s, mscale)/g(s, mscale_all_dim): either key not read.
void yarn_mscale_keys_dropped(const edit_input& in, std::vector<config_neighbour>& out) {
  const auto* y = std::get_if<yarn_scaling>(&in.spec.scaling);
  if (!y) return;
  using key = std::optional<double> yarn_scaling::*;
  const std::pair<const char*, key> keys[] = {{"mscale", &yarn_scaling::mscale},
                                              {"mscale_all_dim", &yarn_scaling::mscale_all_dim}};
  for (const auto& [name, member] : keys) {
    if (!(y->*member)) continue;
    rope_spec n = in.spec;
    std::get<yarn_scaling>(n.scaling).*member = std::nullopt;
    out.push_back({fmt::format("rope_scaling.{}", name), "absent", number(*(y->*member)),
                   "the key not read: the attention factor computed without it", std::move(n)});
  }
}

void default_base(const edit_input& in, std::vector<config_neighbour>& out) {
  for (const double base : {10000.0, 500000.0, 1000000.0, 100000.0, 50000.0}) {
    if (base == in.spec.base) continue;
    rope_spec n = in.spec;
    n.base = base;
    out.push_back({"rope_theta", number(base), number(in.spec.base), "the config's base not read, a default used",
                   std::move(n)});
  }
}

void partial_rotary_ignored(const edit_input& in, std::vector<config_neighbour>& out) {
  if (in.spec.rotary_dim == in.spec.head_dim || spec_scaling::of(type_of(in.spec.scaling)).whole_head) return;
  rope_spec n = in.spec;
  n.rotary_dim = n.head_dim;
  out.push_back({"partial_rotary_factor", "1", number(static_cast<double>(in.spec.rotary_dim) / in.spec.head_dim),
                 "partial_rotary_factor not read: every dim rotated", std::move(n)});
}

// A length-dependent base computed once at another length: the context the scaling is built
// for (s·L_max), the trained one, or the next powers of two (an allocated cache).
void other_sequence_length(const edit_input& in, std::vector<config_neighbour>& out) {
  if (!depends_on_sequence_length(in.spec)) return;
  std::vector<std::int64_t> lengths;
  if (const auto* d = std::get_if<dynamic_scaling>(&in.spec.scaling))
    lengths.push_back(std::llround(d->factor * static_cast<double>(d->max_position_embeddings)));
  if (in.spec.max_position_embeddings > 0) lengths.push_back(in.spec.max_position_embeddings);
  std::int64_t power = 1;
  while (power < in.sequence_length && power < (std::int64_t{1} << 40)) power *= 2;
  lengths.push_back(power);
  lengths.push_back(2 * power);
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (const std::int64_t length : lengths) {
    if (length <= 0 || length == in.sequence_length) continue;
    rope_spec n = in.spec;
    n.sequence_length = length;
    out.push_back({"sequence_length", std::to_string(length), std::to_string(in.sequence_length),
                   "the length-dependent frequencies computed once at another length", std::move(n)});
  }
}

void other_layer_type(const edit_input& in, std::vector<config_neighbour>& out) {
  const auto setup = [](const rope_spec& s) {
    return fmt::format("rope_theta {}, {}", number(s.base), describe(s.scaling));
  };
  for (const rope_spec& other : in.other_layer_types) {
    if (other.head_dim != in.spec.head_dim || other.layer_type == in.spec.layer_type) continue;
    rope_spec n = in.spec;
    n.base = other.base;
    n.scaling = other.scaling;
    n.attention_factor = other.attention_factor;
    n.rotary_dim = other.rotary_dim;
    out.push_back({"layer_type", fmt::format("{} ({})", other.layer_type, setup(other)),
                   fmt::format("{} ({})", in.spec.layer_type, setup(in.spec)),
                   "the layer given another layer type's RoPE setup", std::move(n)});
  }
}

// The scaling's parameters, each at its other conventional values.
void scaling_parameters(const edit_input& in, std::vector<config_neighbour>& out) {
  for (const spec_scaling::parameter& p : spec_scaling::of(type_of(in.spec.scaling)).parameters) {
    if (!p.get) continue;
    const double current = p.get(in.spec.scaling);
    const bool flag = p.values == spec_scaling::published_values::flag;
    const auto text = [flag](double v) { return flag ? std::string(v != 0 ? "true" : "false") : number(v); };
    const std::string field = p.where == spec_scaling::placement::top_level ? std::string(p.key)
                                                                            : fmt::format("rope_scaling.{}", p.key);
    for (const double v : values_of(p, in.spec, current)) {
      if (v == current || !(v > 0 || flag)) continue;
      rope_spec n = in.spec;
      p.set(n.scaling, v);
      out.push_back({field, text(v), text(current), std::string(p.mistake), std::move(n)});
    }
  }
}

// In the order a tie is named in: the coarser mistake first.
const structural_edit edits[] = {
    scaling_dropped,          other_layer_type,          scaling_parameters, attention_factor_edits,
    yarn_mscale_keys_dropped, llama3_factors_exchanged, longrope_tables_exchanged, other_convention,
    other_sequence_length,    default_base,              partial_rotary_ignored,
};

}  // namespace

std::vector<config_neighbour> config_neighbours(const rope_spec& spec, std::int64_t sequence_length,
                                                double attention_factor,
                                                std::span<const rope_spec> other_layer_types) {
  rope_spec audited = spec;
  if (audited.sequence_length == 0) audited.sequence_length = sequence_length;
  const edit_input in{audited, audited.sequence_length, attention_factor, other_layer_types};
  std::vector<config_neighbour> out;
  for (const structural_edit edit : edits) edit(in, out);
  return out;
}

std::vector<rope_spec> other_layer_type_specs(const std::filesystem::path& spec_file, std::string_view layer_type,
                                              const std::string& tower) {
  if (layer_type.empty() || tower == "vision") return {};
  const nlohmann::json config = read_json_file(spec_file);
  const std::string source = spec_file.string();
  std::vector<rope_spec> out;
  for (const spec_setups::setup& s : spec_setups::find_setups(spec_setups::find_text_model(config, source), source)) {
    if (s.layer_type.empty() || s.layer_type == layer_type) continue;
    try {
      out.push_back(parse_spec(config, source, spec_options{s.layer_type, tower}));
    } catch (const spec_error&) {
      // a layer type without RoPE: no setup to try
    }
  }
  return out;
}

}  // namespace ropecheck::audit
