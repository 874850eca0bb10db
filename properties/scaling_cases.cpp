// scaling_cases: the JSON of a scaled spec, drawn field by field inside rc::gen::exec (so a
// counterexample shows the JSON, and shrinking walks each field toward its first choice), from
// the scaling catalog's types and their parameters' published values.
#include "properties/scaling_cases.h"

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "spec/scaling_readers.h"
#include "spec/spec_reader.h"

namespace ropecheck::properties::gen {

namespace {

using nlohmann::json;

json plain_config(const rope_shape& shape) {
  return {{"head_dim", shape.head_dim},
          {"rotary_dim", shape.rotary_dim},
          {"rope_theta", shape.base},
          {"pairing", std::string(to_string(shape.pair))}};
}

generated_spec read(json config) {
  rope_spec spec = parse_spec(config, "generated");
  return {std::move(config), std::move(spec)};
}

// A given outright: the published mscale-like values, powers of two (exact scaling), A just
// above and below 1 (§16's worst and best cases), and anything in [1/4, 4].
rc::Gen<double> attention_factor() {
  return weighted_one_of<double>(
      {{1, element_of(std::vector<double>{0.5, 0.7071067811865476, 1.25, 1.4142135623730951, 2.0,
                                          1 + 0x1p-20, 1 - 0x1p-20})},
       {1, log_uniform(0.25, 4.0)}});
}

// An integer log-uniform in [1, hi]: short and long sequences alike.
rc::Gen<std::int64_t> log_uniform_length(std::int64_t hi) {
  return rc::gen::map(log_uniform(1.0, static_cast<double>(hi)),
                      [](double v) { return static_cast<std::int64_t>(std::floor(v)); });
}

// Every scaling type of the spec's catalog (spec/scaling_readers.h) that the shape allows.
std::vector<const spec_scaling::kind*> drawable_types(const rope_shape& shape) {
  std::vector<const spec_scaling::kind*> types;
  for (std::size_t i = 1; i < std::variant_size_v<rope_scaling>; ++i) {
    const spec_scaling::kind& kind = spec_scaling::of(static_cast<scaling_type>(i));
    if (shape.rotary_dim >= kind.min_rotary_dim && (!kind.whole_head || shape.rotary_dim == shape.head_dim))
      types.push_back(&kind);
  }
  return types;
}

std::vector<double> as_vector(std::span<const double> values) { return {values.begin(), values.end()}; }

// One parameter's value, drawn from the values published configs give it. The factor and the
// original context are drawn once per spec (max_position_embeddings is their product).
json draw_value(const spec_scaling::parameter& p, const rope_shape& shape, double factor, std::int64_t l0) {
  using spec_scaling::published_values;
  switch (p.values) {
    case published_values::factors: return factor;
    case published_values::contexts: return l0;
    case published_values::flag: return *element_of<bool>({true, false});
    case published_values::listed: return *element_of(p.listed);
    case published_values::per_pair_growth: {
      const double growth = *element_of(p.listed);
      json list = json::array();
      for (int j = 0; j < shape.rotary_dim / 2; ++j) list.push_back(1.0 + growth * j);
      return list;
    }
    case published_values::head_fraction: {  // the fractions that rotate at least one pair
      std::vector<double> fractions;
      for (const double f : p.listed)
        if (f * shape.head_dim / 2 >= 1) fractions.push_back(f);
      return *element_of(fractions);
    }
  }
  return nullptr;
}

json scaled_config(const rope_shape& shape) {
  const spec_scaling::kind& kind = **element_of(drawable_types(shape));
  const auto convention = *element_of<std::string>(
      {"hf", "vllm", "hf_derived_factor", "deepseek", "ggml"});
  const double factor = *element_of(as_vector(spec_scaling::published_factors()));
  const auto l0 = static_cast<std::int64_t>(*element_of(as_vector(spec_scaling::published_contexts())));
  const auto max_position = static_cast<std::int64_t>(static_cast<double>(l0) * factor);
  const std::int64_t length = *weighted_one_of<std::int64_t>(
      {{1, element_of<std::int64_t>({l0, l0 + 1, l0 + 2, max_position, max_position + 1})},
       {2, log_uniform_length(8 * max_position)}});

  json config = plain_config(shape);
  config["max_position_embeddings"] = max_position;
  config["scaling_convention"] = convention;
  config["sequence_length"] = length;
  json scaling = {{"rope_type", kind.name}};
  bool previous_drawn = false;
  for (const spec_scaling::parameter& p : kind.parameters) {
    const bool drawn = p.with_previous ? previous_drawn
                                       : !p.optional || *weighted_element<bool>({{2, false}, {1, true}});
    previous_drawn = drawn;
    if (!drawn) continue;
    bool top_level = p.where == spec_scaling::placement::top_level;
    if (p.where == spec_scaling::placement::block_or_top_level) top_level = *element_of<bool>({false, true});
    json& block = top_level ? config : scaling;
    if (top_level && block.contains(p.key)) continue;  // drawn for every spec above
    block[std::string(p.key)] = draw_value(p, shape, factor, l0);
  }
  config["rope_scaling"] = scaling;
  if (*weighted_element<bool>({{3, false}, {1, true}}))
    config["attention_factor"] = *attention_factor();
  return config;
}

}  // namespace

rc::Gen<generated_spec> scaled_spec(const rope_shape& shape) {
  return rc::gen::exec([shape] { return read(scaled_config(shape)); });
}

rc::Gen<generated_spec> kernel_spec(const rope_shape& shape, bool with_attention_factor) {
  const auto plain = rc::gen::exec([shape] { return read(plain_config(shape)); });
  if (!with_attention_factor) {
    // Every rope_scaling still, its attention factor given outright as 1 (a kernel that serves
    // no attention factor: fast::kernel_domain).
    const auto scaled_without_factor = rc::gen::exec([shape] {
      json config = scaled_config(shape);
      config["attention_factor"] = 1.0;
      return read(std::move(config));
    });
    return weighted_one_of<generated_spec>({{3, plain}, {2, scaled_without_factor}});
  }
  const auto plain_with_factor = rc::gen::exec([shape] {
    json config = plain_config(shape);
    config["attention_factor"] = *attention_factor();
    return read(std::move(config));
  });
  return weighted_one_of<generated_spec>(
      {{3, plain}, {1, plain_with_factor}, {2, scaled_spec(shape)}});
}

}  // namespace ropecheck::properties::gen
