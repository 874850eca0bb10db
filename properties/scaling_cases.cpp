// scaling_cases: the JSON of a scaled spec, drawn field by field inside rc::gen::exec (so a
// counterexample shows the JSON, and shrinking walks each field toward its first choice).
#include "properties/scaling_cases.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

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

// Every scaling the spec knows (its variant, scaling_type), drawn where the shape allows it: a
// type added to the spec is drawn here or this fails to compile (the switch has no default).
std::vector<std::string> drawable_types(const rope_shape& shape) {
  std::vector<std::string> types;
  for (std::size_t i = 1; i < std::variant_size_v<rope_scaling>; ++i) {
    const auto type = static_cast<scaling_type>(i);
    bool drawable = true;
    switch (type) {
      case scaling_type::ntk:
      case scaling_type::dynamic: drawable = shape.rotary_dim > 2; break;  // b·s^(d/(d−2)) needs d > 2
      // Gemma 4's spans the whole head (its rotated pairs come from partial_rotary_factor).
      case scaling_type::proportional: drawable = shape.rotary_dim == shape.head_dim; break;
      case scaling_type::none:
      case scaling_type::linear:
      case scaling_type::yarn:
      case scaling_type::llama3:
      case scaling_type::longrope: break;
    }
    if (drawable) types.emplace_back(to_string(type));
  }
  return types;
}

json scaled_config(const rope_shape& shape) {
  const int pairs = shape.rotary_dim / 2;
  const auto type = *element_of(drawable_types(shape));
  const auto convention = *element_of<std::string>(
      {"hf", "vllm", "hf_derived_factor", "deepseek", "ggml"});
  const double factor = *element_of<double>({2, 4, 8, 16, 32, 40, 2.5});
  const std::int64_t l0 = *element_of<std::int64_t>({4096, 8192, 2048, 32768});
  const auto max_position = static_cast<std::int64_t>(static_cast<double>(l0) * factor);
  const std::int64_t length = *weighted_one_of<std::int64_t>(
      {{1, element_of<std::int64_t>({l0, l0 + 1, l0 + 2, max_position, max_position + 1})},
       {2, log_uniform_length(8 * max_position)}});

  json config = plain_config(shape);
  config["max_position_embeddings"] = max_position;
  config["scaling_convention"] = convention;
  config["sequence_length"] = length;
  json scaling = {{"rope_type", type}};
  if (type != "longrope") scaling["factor"] = factor;
  if (type == "yarn") {
    scaling["original_max_position_embeddings"] = l0;
    if (*weighted_element<bool>({{2, false}, {1, true}})) {  // DeepSeek's mscale pair
      scaling["mscale"] = *element_of<double>({1.0, 0.707});
      scaling["mscale_all_dim"] = *element_of<double>({1.0, 0.0});
    }
    if (*weighted_element<bool>({{3, false}, {1, true}}))  // DeepSeek / ggml attn_factor
      scaling["attn_factor"] = *element_of<double>({0.9, 1.1});
    scaling["truncate"] = *element_of<bool>({true, false});
    scaling["beta_fast"] = *element_of<double>({32.0, 16.0});
  }
  if (type == "llama3") {
    const double low = *element_of<double>({1.0, 2.0});
    scaling["low_freq_factor"] = low;
    scaling["high_freq_factor"] = low + *element_of<double>({3.0, 0.5});
    scaling["original_max_position_embeddings"] = l0;
  }
  if (type == "longrope") {
    // Phi-3's factor lists: short ones near 1, long ones growing with the pair index.
    const double growth = *element_of<double>({0.37, 0.05, 2.0});
    json long_factor = json::array(), short_factor = json::array();
    for (int i = 0; i < pairs; ++i) {
      long_factor.push_back(1.0 + growth * i);
      short_factor.push_back(1.0 + 0.01 * i);
    }
    scaling["long_factor"] = long_factor;
    scaling["short_factor"] = short_factor;
    if (*element_of<bool>({true, false})) config["original_max_position_embeddings"] = l0;
    else scaling["original_max_position_embeddings"] = l0;
  }
  if (type == "proportional") {  // the first pairs rotated by θ_j/s, the rest by 0 (at least one rotated)
    std::vector<double> fractions{1.0};
    for (const double f : {0.5, 0.25})
      if (f * shape.head_dim / 2 >= 1) fractions.push_back(f);
    config["partial_rotary_factor"] = *element_of(fractions);
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
