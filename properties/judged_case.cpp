// judged_case: the case file's JSON both ways, and the call run again (judged_case.h).
#include "properties/judged_case.h"

#include <rapidcheck.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "io/io_error.h"
#include "numeric/storage_element.h"
#include "properties/kernel_cases.h"

namespace ropecheck::properties {

namespace {

using nlohmann::json;

// "0x1.921fb54442d18p+1": every bit of the double, and what C's strtod reads back exactly.
std::string hex(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

json hex_list(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(hex(v));
  return out;
}

// The reader's checks, each an io_error naming the file and the field.
struct reader {
  const std::string& file;

  [[noreturn]] void refuse(const std::string& field, std::string_view problem, const json& value) const {
    throw io_error(file, "field '" + field + "'", problem, value.is_string() ? value.get<std::string>() : value.dump());
  }
  const json& member(const json& j, const std::string& key, const std::string& at) const {
    if (!j.is_object() || !j.contains(key)) refuse(at + key, "is missing", json());
    return j[key];
  }
  std::string text(const json& j, const std::string& key, const std::string& at = "") const {
    const json& v = member(j, key, at);
    if (!v.is_string()) refuse(at + key, "is not a string", v);
    return v.get<std::string>();
  }
  std::int64_t integer(const json& j, const std::string& key, std::int64_t lo, std::int64_t hi,
                       const std::string& at = "") const {
    const json& v = member(j, key, at);
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      refuse(at + key, "is not an integer in " + std::to_string(lo) + " ... " + std::to_string(hi), v);
    return v.get<std::int64_t>();
  }
  // A hex float as %a prints it (or inf, -inf, nan), read whole.
  double number(const json& v, const std::string& field) const {
    if (!v.is_string()) refuse(field, "is not a hex float string", v);
    const std::string s = v.get<std::string>();
    const bool special = s == "inf" || s == "-inf" || s == "nan" || s == "-nan";
    if (!special && s.rfind("0x", 0) != 0 && s.rfind("-0x", 0) != 0)
      refuse(field, "is not a hex float (\"0x1.8p+1\")", v);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) refuse(field, "is not a hex float (\"0x1.8p+1\")", v);
    return d;
  }
  std::vector<double> numbers(const json& j, const std::string& key, const std::string& at = "") const {
    const json& v = member(j, key, at);
    if (!v.is_array()) refuse(at + key, "is not an array", v);
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(number(v[i], at + key + "[" + std::to_string(i) + "]"));
    return out;
  }
};

}  // namespace

std::string judged_case_json(const judged_case& c, const std::string& kernel, const std::string& role) {
  json outputs = json::array();
  for (const judged_output& o : c.outputs)
    outputs.push_back({{"tensor", o.key ? "K" : "Q"},
                       {"token", o.token},
                       {"head", o.head},
                       {"index", o.index},
                       {"pair", o.pair},
                       {"partner", o.partner},
                       {"reference", hex(o.reference)},
                       {"kernel", hex(o.kernel)},
                       {"error", hex(o.error())},
                       {"bound", hex(o.bound)},
                       {"error_over_bound", hex(o.over_bound())}});
  json j = {{"judged_case", 1},
            {"role", role},
            {"kernel", kernel},
            {"property", c.property},
            {"dtype", std::string(to_string(c.storage))},
            {"spec",
             {{"pairing", std::string(to_string(c.pair))},
              {"head_dim", c.head_dim},
              {"rotary_dim", c.rotary_dim},
              {"base", hex(c.base)},
              {"scaling", c.scaling},
              {"theta", hex_list(c.theta)},
              {"attention_factor", hex(c.attention_factor)}}},
            {"direction", "forward"},
            {"positions", c.positions},
            {"q", {{"heads", c.q_heads}, {"values", hex_list(c.q)}}},
            {"k", {{"heads", c.k_heads}, {"values", hex_list(c.k)}}},
            {"bound", c.bound_source},
            {"outputs", outputs}};
  return j.dump(1) + "\n";
}

judged_case read_judged_case(const json& j, const std::string& file, std::string& kernel) {
  const reader r{file};
  r.integer(j, "judged_case", 1, 1);  // the format's only version
  judged_case c;
  kernel = r.text(j, "kernel");
  c.property = r.text(j, "property");
  const auto storage = parse_dtype(r.text(j, "dtype"));
  if (!storage) r.refuse("dtype", "is not a dtype ropecheck knows", j["dtype"]);
  c.storage = *storage;
  if (r.text(j, "direction") != "forward") r.refuse("direction", "is not forward", j["direction"]);
  const json& spec = r.member(j, "spec", "");
  const std::string pairing_name = r.text(spec, "pairing", "spec.");
  if (pairing_name != "half" && pairing_name != "adjacent")
    r.refuse("spec.pairing", "is not half or adjacent", spec["pairing"]);
  c.pair = pairing_name == "half" ? pairing::half_split : pairing::adjacent;
  c.head_dim = static_cast<int>(r.integer(spec, "head_dim", 2, 1 << 16, "spec."));
  c.rotary_dim = static_cast<int>(r.integer(spec, "rotary_dim", 2, c.head_dim, "spec."));
  if (c.rotary_dim % 2 != 0) r.refuse("spec.rotary_dim", "is odd", spec["rotary_dim"]);
  c.base = r.number(r.member(spec, "base", "spec."), "spec.base");
  c.scaling = r.text(spec, "scaling", "spec.");
  c.theta = r.numbers(spec, "theta", "spec.");
  if (std::ssize(c.theta) != c.rotary_dim / 2)
    r.refuse("spec.theta", "does not hold rotary_dim / 2 values", json(c.theta.size()));
  c.attention_factor = r.number(r.member(spec, "attention_factor", "spec."), "spec.attention_factor");
  const json& positions = r.member(j, "positions", "");
  if (!positions.is_array() || positions.empty()) r.refuse("positions", "is not a non-empty array", positions);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    // An unsigned integer past 2^63 − 1 would wrap to a negative position.
    if (!positions[t].is_number_integer() ||
        (positions[t].is_number_unsigned() &&
         positions[t].get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
      r.refuse("positions[" + std::to_string(t) + "]", "is not an integer in [-2^63, 2^63 − 1]", positions[t]);
    c.positions.push_back(positions[t].get<std::int64_t>());
  }
  const auto tokens = static_cast<std::int64_t>(c.positions.size());
  for (const auto& [key, heads, values] : {std::tuple{"q", &c.q_heads, &c.q}, std::tuple{"k", &c.k_heads, &c.k}}) {
    const json& tensor = r.member(j, key, "");
    *heads = static_cast<int>(r.integer(tensor, "heads", key == std::string("q") ? 1 : 0, 1 << 16,
                                        std::string(key) + "."));
    *values = r.numbers(tensor, "values", std::string(key) + ".");
    if (std::ssize(*values) != tokens * *heads * c.head_dim)
      r.refuse(std::string(key) + ".values", "does not hold tokens × heads × head_dim values",
               json(values->size()));
    // The call holds storage values: one the dtype cannot hold exactly would be rounded into
    // another call than the one the file records.
    for (std::size_t i = 0; i < values->size(); ++i)
      if (!(round_to_storage(c.storage, (*values)[i]) == (*values)[i]))
        r.refuse(std::string(key) + ".values[" + std::to_string(i) + "]",
                 "is not a value of the case's storage dtype", json((*values)[i]));
  }
  c.bound_source = r.text(j, "bound");
  const json& outputs = r.member(j, "outputs", "");
  if (!outputs.is_array() || outputs.empty()) r.refuse("outputs", "is not a non-empty array", outputs);
  for (std::size_t n = 0; n < outputs.size(); ++n) {
    const std::string at = "outputs[" + std::to_string(n) + "].";
    const json& o = outputs[n];
    judged_output out;
    const std::string tensor = r.text(o, "tensor", at);
    if (tensor != "Q" && tensor != "K") r.refuse(at + "tensor", "is not Q or K", o["tensor"]);
    out.key = tensor == "K";
    out.token = r.integer(o, "token", 0, tokens - 1, at);
    out.head = static_cast<int>(r.integer(o, "head", 0, (out.key ? c.k_heads : c.q_heads) - 1, at));
    out.index = static_cast<int>(r.integer(o, "index", 0, c.head_dim - 1, at));
    out.pair = static_cast<int>(r.integer(o, "pair", 0, c.rotary_dim / 2 - 1, at));
    out.partner = static_cast<int>(r.integer(o, "partner", -1, c.head_dim - 1, at));
    out.reference = r.number(r.member(o, "reference", at), at + "reference");
    out.kernel = r.number(r.member(o, "kernel", at), at + "kernel");
    out.bound = r.number(r.member(o, "bound", at), at + "bound");
    if (!(out.bound > 0)) r.refuse(at + "bound", "is not a number > 0", o["bound"]);
    c.outputs.push_back(out);
  }
  return c;
}

std::vector<double> rerun_judged_case(const fast::kernel_info& kernel, const judged_case& j) {
  using namespace kernel_support;
  kernel_case c;
  c.shape = rope_shape{j.head_dim, j.rotary_dim, j.base, j.pair};
  c.frequencies = fast::rope_frequencies{j.theta, j.attention_factor};
  c.storage = j.storage;
  c.positions = j.positions;
  c.q_heads = j.q_heads;
  c.k_heads = j.k_heads;
  c.q = value_rows{j.storage, j.head_dim, j.q};
  c.k = value_rows{j.storage, j.head_dim, j.k};
  if (!kernel.supports(j.storage) || !kernel.supports(j.pair))
    throw std::runtime_error("kernel " + std::string(kernel.name) + " does not serve " +
                             std::string(to_string(j.storage)) + " " + std::string(to_string(j.pair)));
  // prepare_angles reports a refusal as a failed RapidCheck case, as properties do.
  fast::rope_angles angles;
  try {
    angles = prepare_angles(kernel, c);
  } catch (const rc::detail::CaseResult& r) {
    throw std::runtime_error(r.description);
  }
  tensor_buffers q = packed_buffers(c.q, c.storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, c.storage, c.k_heads, c.shape.head_dim, c.tokens());
  const fast::status s =
      apply_served(kernel, make_call(c, fast::direction::forward, c.positions, &q, c.k_heads > 0 ? &k : nullptr),
                   angles);
  if (!s.ok()) throw std::runtime_error("kernel " + std::string(kernel.name) + " refused the call: " + s.message);
  std::vector<double> out;
  out.reserve(j.outputs.size());
  for (const judged_output& o : j.outputs) {
    const tensor_buffers& t = o.key ? k : q;
    const double y = t.output.get(element_index(t, o.token, o.head, o.index));
    out.push_back(o.partner < 0 ? y : std::hypot(y, t.output.get(element_index(t, o.token, o.head, o.partner))));
  }
  return out;
}

}  // namespace ropecheck::properties
