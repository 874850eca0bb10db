// The JSON spec reader (spec_reader.h): a Hugging Face config.json, older or current format, or
// ropecheck's own spec fields into one rope_spec, refusing anything it does not understand.
// The steps: find the text model (text_config), its RoPE setups and the one asked for
// (rope_setups.h), then read head width, base, rotated dims and the scaling block, whose type
// has its own reader (scaling_readers.h).
#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "spec/json_fields.h"
#include "spec/model_families.h"
#include "spec/rope_setups.h"
#include "spec/scaling_readers.h"
#include "io/io_error.h"
#include "io/json_file.h"

namespace ropecheck {
namespace {

using json = nlohmann::json;
namespace f = spec_fields;
using spec_setups::setup;
using spec_setups::text_model;

// The default base of model types whose configs may leave rope_theta out: the value the model's
// code then uses. Without a model_type the spec is ropecheck's own and the default is 10000; an
// unlisted model_type without a base is refused, since its code's default is not known here.
struct base_default {
  std::string_view model_type;
  double base;
};
constexpr base_default base_defaults[] = {
    {"llama", 10000.0},         // transformers LlamaConfig(rope_theta=10000.0)
    {"gptj", 10000.0},          // transformers modeling_gptj create_sinusoidal_positions: 10000
    {"gpt_neox", 10000.0},      // transformers GPTNeoXConfig(rotary_emb_base=10000)
    {"gemma3_text", 1000000.0}, // transformers Gemma3TextConfig(rope_theta=1_000_000.0)
    {"chatglm", 10000.0},       // modeling_chatglm.py RotaryEmbedding.forward_impl(base=10000)
};

// The keys of a scaling block that are not scaling parameters: its type, and the base and
// rotated fraction the current format moves into it.
constexpr std::string_view common_block_keys[] = {"rope_type", "type", "rope_theta",
                                                  "partial_rotary_factor", "mrope_section",
                                                  "mrope_interleaved"};

int read_head_dim(const text_model& text, const spec_families::family* family,
                  std::string_view source) {
  const json& config = *text.config;
  if (family && family->chatglm)  // modeling_chatglm.py: kv_channels, else hidden_size / heads
    if (auto v = f::small_int(config, source, text.prefix, "kv_channels")) return *v;
  for (const char* field : {"qk_rope_head_dim", "head_dim"})
    if (auto v = f::small_int(config, source, text.prefix, field)) return *v;
  for (auto [width, heads] : {std::pair{"hidden_size", "num_attention_heads"},
                              std::pair{"n_embd", "n_head"}}) {
    const auto w = f::small_int(config, source, text.prefix, width);
    const auto h = f::small_int(config, source, text.prefix, heads);
    if (w && h) {
      if (*w % *h != 0)
        f::fail(source, f::path(text.prefix, width), config[width],
                fmt::format("is not divisible by {} = {}", heads, *h));
      return *w / *h;
    }
  }
  f::missing(source, f::path(text.prefix, "head_dim"),
             "give head_dim, or hidden_size and num_attention_heads");
}

std::string model_type_of(const json& root, const text_model& text, std::string_view source) {
  if (auto t = f::text(*text.config, source, text.prefix, "model_type")) return *t;
  if (text.config != &root) return f::text(root, source, "", "model_type").value_or("");
  return "";
}

// The spec's own "pairing" key, else the family's (model_families.h), else half-split for
// ropecheck's own specs (no model_type). A model_type the table does not hold is refused.
pairing read_pairing(const json& root, const text_model& text, const std::string& model_type,
                     const spec_families::family* family, std::string_view source) {
  if (const json* p = f::given(root, "pairing")) {
    if (*p == "half") return pairing::half_split;
    if (*p == "adjacent") return pairing::adjacent;
    f::fail(source, "pairing", *p, "is not \"half\" or \"adjacent\"");
  }
  if (model_type.empty()) return pairing::half_split;
  if (!family)
    f::fail(source, f::path(text.prefix, "model_type"), json(model_type),
            "has no pairing known to ropecheck (docs/pairing.md); give \"pairing\": \"half\" or "
            "\"adjacent\"");
  // transformers' DeepSeek-V3 says it outright: rope_interleave (default true) pairs adjacent.
  if (const auto interleave = f::boolean(*text.config, source, text.prefix, "rope_interleave"))
    return *interleave ? pairing::adjacent : pairing::half_split;
  return family->pair;
}

// Keys only some families' code reads: anywhere else they would be ignored, so they are refused.
void refuse_other_families_keys(const text_model& text, const spec_families::family* family,
                                std::string_view source) {
  const std::string_view type = family ? family->model_type : "";
  const auto only = [&](std::string_view key, bool allowed, std::string_view who) {
    if (const json* v = f::given(*text.config, key); v && !allowed)
      f::fail(source, f::path(text.prefix, key), *v,
              fmt::format("is read only for model_type {} ({})", who,
                          type.empty() ? std::string("this config gives none")
                                       : fmt::format("not \"{}\"", type)));
  };
  const bool chatglm = family && family->chatglm;
  only("rope_ratio", chatglm, "chatglm");
  only("original_rope", chatglm, "chatglm");
  only("rope_interleave", type == "deepseek_v3" || type == "deepseek_v2", "deepseek_v3");
  only("no_rope_layers", type == "llama4_text" || type == "llama4", "llama4_text");
  only("no_rope_layer_interval", type == "llama4_text" || type == "llama4", "llama4_text");
  if (const auto original = f::boolean(*text.config, source, text.prefix, "original_rope");
      original == false)
    f::fail(source, f::path(text.prefix, "original_rope"), json(false),
            "selects a form modeling_chatglm.py does not implement");
}

// ChatGLM: base 10000·rope_ratio in ChatGLM3 and GLM-4's modeling_chatglm.py, but positions /
// rope_ratio in ChatGLM2's; the config does not say which code it runs with, so a ratio other
// than 1 needs the spec's own "rope_ratio_applies_to": "base" or "positions".
void read_chatglm_ratio(const json& root, const text_model& text, std::string_view source,
                        rope_spec& spec) {
  const auto ratio = f::positive(*text.config, source, text.prefix, "rope_ratio");
  const auto applies_to = f::text(root, source, "", "rope_ratio_applies_to");
  if (!ratio || *ratio == 1) return;
  if (!applies_to)
    f::fail(source, f::path(text.prefix, "rope_ratio"), *f::given(*text.config, "rope_ratio"),
            "multiplies the base in ChatGLM3/GLM-4 code and divides the positions in ChatGLM2 "
            "code; give \"rope_ratio_applies_to\": \"base\" or \"positions\"");
  if (*applies_to == "base") {
    spec.base *= *ratio;
  } else if (*applies_to == "positions") {
    if (type_of(spec.scaling) != scaling_type::none)
      f::fail(source, f::path(text.prefix, "rope_ratio"), *f::given(*text.config, "rope_ratio"),
              fmt::format("divides the positions of a rope_type \"{}\" setup, which ropecheck "
                          "does not compose",
                          to_string(type_of(spec.scaling))));
    spec.scaling = linear_scaling{*ratio};  // m / r · θ_j = m · θ_j / r
  } else {
    f::fail(source, "rope_ratio_applies_to", *f::given(root, "rope_ratio_applies_to"),
            "is not \"base\" or \"positions\"");
  }
}

// A number given inside the setup's block or at the text model's top level (the current format
// moves rope_theta and partial_rotary_factor into the block); given in both, they must agree.
struct located_number {
  std::optional<double> value;
  const json* written = nullptr;  // the JSON value, for messages
  std::string field;
};

located_number block_or_top(const setup& s, const text_model& text, std::string_view key,
                            std::string_view top_key, std::string_view source) {
  const auto inside = s.block ? f::number(*s.block, source, s.block_prefix, key) : std::nullopt;
  const auto top = f::number(*text.config, source, text.prefix, top_key);
  if (inside && top && *inside != *top)
    f::fail(source, f::path(s.block_prefix, key), *f::given(*s.block, key),
            fmt::format("disagrees with {} {}", f::path(text.prefix, top_key), *top));
  if (inside) return {inside, f::given(*s.block, key), f::path(s.block_prefix, key)};
  if (top) return {top, f::given(*text.config, top_key), f::path(text.prefix, top_key)};
  return {};
}

double read_base(const setup& s, const text_model& text, const std::string& model_type,
                 std::string_view source) {
  located_number base;
  if (s.base) {
    if (!s.base->is_number()) f::fail(source, s.base_field, *s.base, "is not a number");
    base = {s.base->get<double>(), s.base, s.base_field};
  } else {
    const bool neox = !f::given(*text.config, "rope_theta") && f::given(*text.config, "rotary_emb_base");
    base = block_or_top(s, text, "rope_theta", neox ? "rotary_emb_base" : "rope_theta", source);
  }
  if (!base.value) {
    if (model_type.empty()) return 10000.0;
    for (const base_default& d : base_defaults)
      if (d.model_type == model_type) return d.base;
    f::missing(source, f::path(text.prefix, "rope_theta"),
               fmt::format("model_type \"{}\" has no default base known to ropecheck", model_type));
  }
  if (!std::isfinite(*base.value) || !(*base.value > 1))
    f::fail(source, base.field, *base.written, "is not a finite number > 1");
  return *base.value;
}

// The spec's convention as a type reads it: the ones whose formula differs for it kept, every
// other one hf (their code computes this type as Hugging Face's does).
scaling_convention own_convention(const spec_scaling::kind& kind, scaling_convention c) {
  return std::find(kind.conventions.begin(), kind.conventions.end(), c) != kind.conventions.end()
             ? c
             : scaling_convention::hf;
}

const spec_scaling::kind& read_kind(const setup& s, std::string_view source) {
  static const spec_scaling::kind& unscaled = *spec_scaling::find("default");
  if (!s.block) return unscaled;
  const json& block = *s.block;
  const json* rope_type = f::given(block, "rope_type");
  const json* type = f::given(block, "type");
  if (rope_type && type && *rope_type != *type)
    f::fail(source, f::path(s.block_prefix, "type"), *type,
            fmt::format("disagrees with {}.rope_type {}", s.block_prefix, rope_type->dump()));
  const json* written = rope_type ? rope_type : type;
  const std::string type_field = f::path(s.block_prefix, rope_type ? "rope_type" : "type");
  if (!written) {
    // The current format defaults rope_type to "default" (standardize_rope_params); the older
    // rope_scaling always named it.
    if (s.block_prefix.ends_with("rope_scaling"))
      f::fail(source, s.block_prefix, block, "has no 'rope_type' or 'type'");
    return unscaled;
  }
  // Qwen2-VL's configs name M-RoPE as the type; transformers reads it as "default" with sections.
  if (*written == "mrope") {
    if (!f::given(block, "mrope_section"))
      f::missing(source, f::path(s.block_prefix, "mrope_section"), "rope_type \"mrope\" needs it");
    return unscaled;
  }
  const spec_scaling::kind* k = written->is_string() ? spec_scaling::find(written->get<std::string>()) : nullptr;
  if (!k)
    f::fail(source, type_field, *written,
            fmt::format("is not a known rope_type ({})", spec_scaling::names()));
  for (const auto& [key, value] : block.items()) {
    const bool common = std::find(std::begin(common_block_keys), std::end(common_block_keys), key) !=
                        std::end(common_block_keys);
    if (!common && std::find(k->keys.begin(), k->keys.end(), key) == k->keys.end())
      f::fail(source, f::path(s.block_prefix, key), value,
              fmt::format("is not a key of rope_type \"{}\"", k->name));
  }
  return *k;
}

// Rotated dims: rotary_dim, else int(head_dim × partial_rotary_factor) (or GPT-NeoX rotary_pct),
// else the whole head. A whole-head type (the catalog's whole_head: proportional RoPE) spans the
// whole head and rotates its first floor(partial_rotary_factor × head_dim / 2) pairs (transformers
// _compute_proportional_rope_parameters), which this returns for the scaling reader (0 for the
// other types).
int read_rotated_dims(const setup& s, const text_model& text, const spec_scaling::kind& kind,
                       const spec_families::family* family, std::string_view source,
                       rope_spec& spec) {
  const json& config = *text.config;
  std::string field = f::path(text.prefix, "head_dim");
  located_number fraction = block_or_top(s, text, "partial_rotary_factor", "partial_rotary_factor", source);
  if (!fraction.value) {
    if (const auto pct = f::number(config, source, text.prefix, "rotary_pct"))
      fraction = {pct, f::given(config, "rotary_pct"), f::path(text.prefix, "rotary_pct")};
  }
  if (fraction.value && !(*fraction.value > 0 && *fraction.value <= 1))
    f::fail(source, fraction.field, *fraction.written, "is not in (0, 1]");
  if (kind.whole_head) {  // proportional
    spec.rotary_dim = spec.head_dim;
    const int rotated_pairs = static_cast<int>(std::floor(fraction.value.value_or(1) * spec.head_dim / 2));
    if (rotated_pairs < 1)
      f::fail(source, fraction.field, fraction.written ? *fraction.written : json(*fraction.value),
              "rotates no pair of the head");
    return rotated_pairs;
  }
  if (family && family->default_rotary_fraction && !fraction.value)
    fraction = {family->default_rotary_fraction, nullptr, f::path(text.prefix, "partial_rotary_factor")};
  if (family && family->chatglm) {
    spec.rotary_dim = spec.head_dim / 2;  // RotaryEmbedding(rotary_dim // 2): half of each head
  } else if (const auto v = f::small_int(config, source, text.prefix, "rotary_dim")) {
    spec.rotary_dim = *v;
    field = f::path(text.prefix, "rotary_dim");
  } else if (fraction.value) {
    spec.rotary_dim = static_cast<int>(spec.head_dim * *fraction.value);  // Transformers: int(head_dim * factor)
    field = fraction.field;
  } else {
    spec.rotary_dim = spec.head_dim;
  }
  const json* written = f::given(config, "rotary_dim") ? f::given(config, "rotary_dim")
                        : fraction.value                ? fraction.written
                                                        : nullptr;
  const json value = written ? *written : json(spec.rotary_dim);  // a family default has no JSON
  if (spec.rotary_dim % 2 != 0 || spec.rotary_dim < 2)
    f::fail(source, field, value,
            fmt::format("gives rotary_dim {}, which is not even and >= 2", spec.rotary_dim));
  if (spec.rotary_dim > spec.head_dim)
    f::fail(source, field, value,
            fmt::format("gives rotary_dim {} > head_dim {}", spec.rotary_dim, spec.head_dim));
  return 0;
}

// M-RoPE's sections (rope_spec.h): three positive pair counts summing to rotary_dim/2, and
// whether they are interleaved (Qwen3-VL's mrope_interleaved).
void read_mrope(const json& block, const std::string& prefix, std::string_view source,
                rope_spec& spec) {
  const json* section = f::given(block, "mrope_section");
  const auto interleaved = f::boolean(block, source, prefix, "mrope_interleaved");
  if (!section) {
    if (interleaved)
      f::missing(source, f::path(prefix, "mrope_section"), "mrope_interleaved needs the sections");
    return;
  }
  const std::string field = f::path(prefix, "mrope_section");
  int total = 0;
  if (!section->is_array() || section->size() != 3 ||
      !std::all_of(section->begin(), section->end(), [&](const json& v) {
        return v.is_number_integer() && v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= (1 << 20);
      }))
    f::fail(source, field, *section, "is not three positive integers (temporal, height, width pairs)");
  for (const json& v : *section) spec.streams.section.push_back(static_cast<int>(v.get<std::int64_t>()));
  for (int n : spec.streams.section) total += n;
  if (total != spec.rotary_dim / 2)
    f::fail(source, field, *section,
            fmt::format("sums to {} pairs, not rotary_dim/2 = {}", total, spec.rotary_dim / 2));
  spec.streams.rule = interleaved.value_or(false) ? stream_rule::mrope_interleaved : stream_rule::mrope_sections;
  // Interleaved, pair j is height's when j % 3 == 1 and width's when j % 3 == 2, below 3·section:
  // a section of more than a third of the pairs would silently get fewer pairs than it says.
  const int pairs = spec.rotary_dim / 2;
  for (int s = 1; interleaved.value_or(false) && s <= 2; ++s)
    if (3 * (spec.streams.section[s] - 1) + s >= pairs)
      f::fail(source, field, *section,
              fmt::format("is interleaved, but its {} section {} does not fit in {} pairs (pair j is {}'s only "
                          "when j % 3 == {}, so at most {} of them)",
                          s == 1 ? "height" : "width", spec.streams.section[s], pairs, s == 1 ? "height" : "width",
                          s, (pairs - s + 2) / 3));
}

std::optional<scaling_convention> convention_named(const std::string& name) {
  for (auto c : {scaling_convention::hf, scaling_convention::hf_derived_factor,
                 scaling_convention::vllm, scaling_convention::deepseek, scaling_convention::ggml})
    if (to_string(c) == name) return c;
  return std::nullopt;
}

// ropecheck's own keys, read from the spec's top level (docs/scaling.md, "Spec keys"). The
// convention goes to the scaling reader, which keeps it on the types it applies to.
scaling_convention read_own_keys(const json& root, std::string_view source, rope_spec& spec) {
  if (auto n = f::length(root, source, "", "sequence_length")) spec.sequence_length = *n;
  spec.attention_factor = f::positive(root, source, "", "attention_factor");
  if (const json* c = f::given(root, "scaling_convention")) {
    const auto convention = c->is_string() ? convention_named(c->get<std::string>()) : std::nullopt;
    if (!convention)
      f::fail(source, "scaling_convention", *c,
              "is not one of \"hf\", \"hf_derived_factor\", \"vllm\", \"deepseek\", \"ggml\"");
    return *convention;
  }
  return scaling_convention::hf;
}

// ropecheck's own "stream_layout" key: a 2-D vision layout on a text-form spec (what `ropecheck
// identify` writes for a vision output, whose tower config need not exist): "vision_rows_first",
// "vision_columns_first" or "vision_alternating" (rope_spec.h). M-RoPE is spelled as configs
// spell it (mrope_section), so the key refuses a spec that has sections as well — except
// "mrope_interleaved_4": ggml's four-stream IMROPE, which no config spells, on top of the
// config's interleaved sections (Qwen3-VL's, as llama.cpp runs it).
void read_stream_layout_key(const json& root, std::string_view source, rope_spec& spec) {
  const json* given = f::given(root, "stream_layout");
  if (!given) return;
  if (given->is_string() && given->get<std::string>() == to_string(stream_rule::mrope_interleaved_4)) {
    if (spec.streams.rule != stream_rule::mrope_interleaved)
      f::fail(source, "stream_layout", *given,
              "needs interleaved M-RoPE sections (mrope_section with mrope_interleaved: true), which ggml's "
              "four-stream IMROPE assigns");
    spec.streams.rule = stream_rule::mrope_interleaved_4;
    return;
  }
  std::optional<stream_rule> rule;
  for (const stream_rule r :
       {stream_rule::vision_rows_first, stream_rule::vision_columns_first, stream_rule::vision_alternating})
    if (given->is_string() && given->get<std::string>() == to_string(r)) rule = r;
  if (!rule)
    f::fail(source, "stream_layout", *given,
            "is not \"vision_rows_first\", \"vision_columns_first\", \"vision_alternating\" or "
            "\"mrope_interleaved_4\" (M-RoPE is given by mrope_section)");
  if (spec.streams.multi())
    f::fail(source, "stream_layout", *given, "comes with M-RoPE sections: one layout per spec");
  spec.streams = {*rule, {}};
  if (const std::string problem = stream_layout_problem(spec.streams, spec.rotary_dim); !problem.empty())
    f::fail(source, "stream_layout", *given, problem);
}

// The layer type asked for: --layer-type, or the spec's own "layer_type" key; both must agree.
std::string chosen_layer_type(const json& root, const spec_options& options, std::string_view source) {
  const auto in_spec = f::text(root, source, "", "layer_type");
  if (in_spec && !options.layer_type.empty() && *in_spec != options.layer_type)
    f::fail(source, "layer_type", root["layer_type"],
            fmt::format("disagrees with --layer-type \"{}\"", options.layer_type));
  return options.layer_type.empty() ? in_spec.value_or("") : options.layer_type;
}

// The layer asked for: --layer, or the spec's own "layer" key (an integer >= 0); both must agree.
std::optional<std::int64_t> chosen_layer(const json& root, const spec_options& options, std::string_view source) {
  std::optional<std::int64_t> in_spec;
  if (const json* v = f::given(root, "layer")) {
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0)
      f::fail(source, "layer", *v, "is not a layer index (an integer >= 0)");
    in_spec = v->get<std::int64_t>();
  }
  if (in_spec && options.layer && *in_spec != *options.layer)
    f::fail(source, "layer", root["layer"], fmt::format("disagrees with --layer {}", *options.layer));
  return options.layer ? options.layer : in_spec;
}

// 2-D vision RoPE of a vision tower (`--tower vision`), from the config's `vision_config`
// (rope_spec.h stream_layout; docs/spec.md "Position streams" cites each family's modeling code):
//   qwen2_vl / qwen2_5_vl (and glm4v, whose vision tower is Qwen2.5-VL's): head_dim =
//     hidden_size (Qwen2-VL: embed_dim) / num_heads, the whole head rotated, base 10000 (fixed
//     in VisionRotaryEmbedding), half-split, rows first.
//   pixtral (vision_config.model_type; Mistral3, Pixtral): head_dim (else hidden_size /
//     num_attention_heads), rope_theta (PixtralVisionConfig's default 10000), half-split as
//     transformers' modeling_pixtral.py rotates (mistral-inference's original checkpoints rotate
//     adjacent pairs: "pairing": "adjacent"), alternating θ.
//   llama4_vision_model: hidden_size / num_attention_heads, rope_theta, adjacent
//     (view_as_complex), columns first; its positions are (row + 1, col + 1), 0 for the CLS token.
rope_spec parse_vision_spec(const json& root, std::string_view source) {
  const json* vision = f::given(root, "vision_config");
  if (vision == nullptr || !vision->is_object())
    f::missing(source, "vision_config", "--tower vision reads the vision tower's config");
  const std::string prefix = "vision_config";
  const auto own_type = f::text(*vision, source, prefix, "model_type");
  const auto root_type = f::text(root, source, "", "model_type");
  const std::string type = own_type ? *own_type : root_type.value_or("");
  rope_spec spec;
  spec.source = source;
  auto width = [&](std::initializer_list<const char*> hidden_keys, const char* heads_key) {
    for (const char* key : hidden_keys)
      if (const auto hidden = f::small_int(*vision, source, prefix, key)) {
        const auto heads = f::small_int(*vision, source, prefix, heads_key);
        if (!heads || *heads <= 0 || *hidden % *heads != 0)
          f::fail(source, f::path(prefix, heads_key), heads ? json(*heads) : json(nullptr),
                  fmt::format("does not divide {} {}", key, *hidden));
        return *hidden / *heads;
      }
    f::missing(source, f::path(prefix, *hidden_keys.begin()), "the vision head width needs it");
  };
  if (type == "qwen2_vl" || type == "qwen2_5_vl" || type == "glm4v") {
    spec.head_dim = width({"hidden_size", "embed_dim"}, "num_heads");
    spec.base = 10000.0;
    spec.pair = pairing::half_split;
    spec.streams.rule = stream_rule::vision_rows_first;
  } else if (type == "pixtral") {
    const auto given = f::small_int(*vision, source, prefix, "head_dim");
    spec.head_dim = given ? *given : width({"hidden_size"}, "num_attention_heads");
    spec.base = f::positive(*vision, source, prefix, "rope_theta").value_or(10000.0);
    spec.pair = pairing::half_split;
    spec.streams.rule = stream_rule::vision_alternating;
  } else if (type == "llama4_vision_model" || type == "llama4") {
    spec.head_dim = width({"hidden_size"}, "num_attention_heads");
    const auto theta = f::positive(*vision, source, prefix, "rope_theta");
    if (!theta) f::missing(source, f::path(prefix, "rope_theta"), "Llama 4's vision RoPE base");
    spec.base = *theta;
    spec.pair = pairing::adjacent;
    spec.streams.rule = stream_rule::vision_columns_first;
  } else {
    f::fail(source, own_type ? f::path(prefix, "model_type") : "model_type", json(type),
            "is not a vision tower whose 2-D RoPE ropecheck knows (qwen2_vl, qwen2_5_vl, glm4v, "
            "pixtral, llama4_vision_model)");
  }
  spec.rotary_dim = spec.head_dim;
  if (const json* p = f::given(root, "pairing")) {  // ropecheck's own key overrides the family's
    if (!p->is_string() || (*p != "adjacent" && *p != "half"))
      f::fail(source, "pairing", *p, "is not \"adjacent\" or \"half\"");
    spec.pair = *p == "adjacent" ? pairing::adjacent : pairing::half_split;
  }
  if (const std::string problem = stream_layout_problem(spec.streams, spec.rotary_dim); !problem.empty())
    f::fail(source, f::path(prefix, "head_dim"), json(spec.head_dim), problem);
  return spec;
}

}  // namespace

// A type's name is its first rope_type in the reader catalog ("default" for none, "longrope"
// before Phi-3's "su").
std::string_view to_string(scaling_type t) { return spec_scaling::of(t).name; }

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

std::string describe(const layers_without_rope& l) {
  if (!l.any()) return "every layer applies RoPE";
  std::string listed;
  constexpr std::size_t shown = 16;
  for (std::size_t k = 0; k < l.indices.size() && k < shown; ++k)
    listed += fmt::format("{}{}", k == 0 ? "" : ", ", l.indices[k]);
  if (l.indices.size() > shown) listed += ", …";
  if (l.layers == 0 && l.every > 0)  // periodic, but the config gives no layer count
    return fmt::format("layers without RoPE: {}, {}, {}, … (the config gives no num_hidden_layers; {})",
                       l.every - 1, 2 * l.every - 1, 3 * l.every - 1, l.rule);
  if (l.layers == 0) return fmt::format("layers without RoPE: {} (the config gives no num_hidden_layers)", l.rule);
  return fmt::format("layers without RoPE: {} ({} of {} layers; {})", listed.empty() ? "none" : listed,
                     l.indices.size(), l.layers, l.rule);
}

rope_spec parse_spec(const json& root, std::string_view source, const spec_options& options) {
  if (!root.is_object()) throw spec_error(fmt::format("{}: the spec is not a JSON object", source));
  if (options.tower == "vision") {
    if (options.layer || f::given(root, "layer"))
      throw spec_error(fmt::format("{}: field 'layer': selects a text-model layer, not one of the vision tower "
                                   "(--tower vision)", source));
    return parse_vision_spec(root, source);
  }
  if (!options.tower.empty() && options.tower != "text")
    throw spec_error(fmt::format("--tower: '{}' is not text or vision", options.tower));
  text_model text = spec_setups::find_text_model(root, source);
  spec_setups::refuse_unread_rope_keys(root, text, source);
  if (const auto uses_rope = f::boolean(*text.config, source, text.prefix, "rotary"); uses_rope == false)
    f::fail(source, f::path(text.prefix, "rotary"), json(false), "says the model has no rotary embedding");
  const std::string model_type = model_type_of(root, text, source);
  const spec_families::family* family = spec_families::find(model_type);
  refuse_other_families_keys(text, family, source);

  // Which layers apply no RoPE, then the layer (or layer type) asked for: a layer picks its own
  // layer type's setup, and one without RoPE is refused.
  const layers_without_rope without = spec_setups::find_layers_without_rope(text, model_type, source);
  std::string layer_type = chosen_layer_type(root, options, source);
  const std::optional<std::int64_t> layer = chosen_layer(root, options, source);
  if (layer) {
    spec_setups::check_layer(without, *layer, source);
    const std::string its_type = spec_setups::layer_type_of(text, *layer);
    if (!layer_type.empty() && !its_type.empty() && layer_type != its_type)
      f::fail(source, "layer_type", json(layer_type),
              fmt::format("disagrees with layer {}'s type \"{}\" (layer_types)", *layer, its_type));
    if (layer_type.empty()) layer_type = its_type;
  }
  spec_setups::refuse_rope_free_layer_type(without, text, layer_type, source);
  const setup chosen = spec_setups::choose(spec_setups::find_setups(text, source), text, layer_type, source);

  rope_spec spec;
  spec.source = source;
  spec.without_rope = without;
  spec.layer = layer;
  spec.layer_type = chosen.layer_type;
  spec.head_dim = read_head_dim(text, family, source);
  const spec_scaling::kind& kind = read_kind(chosen, source);
  // Gemma 4: full-attention layers are global_head_dim wide, sliding-window layers head_dim.
  // transformers' Gemma4TextRotaryEmbedding hands global_head_dim to the proportional init
  // (head_dim_key="global_head_dim"), the rope type Gemma 4's full attention uses; with any
  // other rope type the width its init would take is not the layer's, so that is refused.
  if (const auto global = f::small_int(*text.config, source, text.prefix, "global_head_dim");
      global && *global != spec.head_dim && chosen.layer_type != "sliding_attention") {
    if (kind.type != scaling_type::proportional)
      f::fail(source, f::path(text.prefix, "global_head_dim"), json(*global),
              fmt::format("gives full-attention layers their own head width, which ropecheck reads with "
                          "proportional RoPE only (transformers' Gemma 4 init), not rope_type \"{}\"",
                          kind.name));
    spec.head_dim = static_cast<int>(*global);
  }
  spec.base = read_base(chosen, text, model_type, source);
  spec.pair = read_pairing(root, text, model_type, family, source);
  const scaling_convention convention = read_own_keys(root, source, spec);
  // Before the scaling: longrope counts rotary_dim/2 factors, proportional its rotated pairs.
  const int rotated_pairs = read_rotated_dims(chosen, text, kind, family, source, spec);
  const auto max_pos = f::length(*text.config, source, text.prefix, "max_position_embeddings");
  spec.max_position_embeddings = max_pos.value_or(0);
  if (chosen.block) {
    const spec_scaling::context ctx{source,
                                    chosen.block_prefix,
                                    std::string(kind.name),
                                    max_pos,
                                    f::length(*text.config, source, text.prefix,
                                              "original_max_position_embeddings"),
                                    f::path(text.prefix, "original_max_position_embeddings"),
                                    spec.rotary_dim,
                                    convention,
                                    own_convention(kind, convention),
                                    rotated_pairs};
    spec.scaling = kind.read(*chosen.block, ctx);
  }
  if (family && family->chatglm) read_chatglm_ratio(root, text, source, spec);
  if (chosen.block) read_mrope(*chosen.block, chosen.block_prefix, source, spec);
  read_stream_layout_key(root, source, spec);
  return spec;
}

rope_spec read_spec(const std::filesystem::path& file, const spec_options& options) {
  json config;
  try {
    // io/json_file.h: a regular file only; a repeated key or a number past double's range is
    // an error naming the field.
    config = read_json_file(file);
  } catch (const io_error& e) {
    throw spec_error(e.what());
  }
  return parse_spec(config, file.string(), options);
}

}  // namespace ropecheck
