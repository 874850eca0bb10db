// One C-ABI call as a case file, and back (abi_case.h).
#include "abi/abi_case.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "abi/abi_dtype.h"
#include "io/io_error.h"

namespace ropecheck::abi {
namespace {

using json = nlohmann::json;

constexpr const char* case_kind = "ropecheck_kernel_call";
constexpr const char* pointer_names[] = {"q.input",   "q.output", "k.input",     "k.output",
                                         "positions", "inverse_frequencies", "pair_streams"};

std::string dtype_name(std::int32_t d) {
  if (const std::optional<dtype> t = dtype_of_abi_code(d)) return std::string(to_string(*t));
  return fmt::format("dtype {}", d);
}

json tensor_json(const ropecheck_tensor& t) {
  return {{"heads", t.heads},
          {"input_token_stride", t.input_token_stride},
          {"input_head_stride", t.input_head_stride},
          {"output_token_stride", t.output_token_stride},
          {"output_head_stride", t.output_head_stride}};
}

json place_json(const call_image::place& p) {
  switch (p.kind) {
    case call_image::place::null: return nullptr;
    case call_image::place::zeroed: return "zeroed";
    case call_image::place::in_region: return {{"region", p.region}, {"offset", p.offset}};
  }
  return nullptr;
}

std::string hex_bytes(const unsigned char* p, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = digits[p[i] >> 4];
    s[2 * i + 1] = digits[p[i] & 15];
  }
  return s;
}

}  // namespace

std::string describe_call(const ropecheck_rope_call& c) {
  const auto tensor = [](const char* name, const ropecheck_tensor& t) {
    return t.heads == 1 ? fmt::format("{} 1 head", name) : fmt::format("{} {} heads", name, t.heads);
  };
  return fmt::format("{} {} {}, {} tokens, {}, {}, head_dim {}, rotary_dim {}{}", dtype_name(c.dtype),
                     c.pairing == ROPECHECK_PAIRING_ADJACENT ? "adjacent" : "half",
                     c.direction == ROPECHECK_DIRECTION_INVERSE ? "inverse" : "forward", c.tokens,
                     tensor("Q", c.q), tensor("K", c.k), c.head_dim, c.rotary_dim,
                     c.abi_version >= 2 && c.position_streams > 1
                         ? fmt::format(", {} position streams", c.position_streams)
                         : std::string());
}

std::string case_json(const ropecheck_rope_call& c, const call_image& image, const std::string& kernel,
                      std::size_t pairs) {
  json j;
  j["case"] = case_kind;
  j["kernel"] = kernel;
  j["call"] = describe_call(c);
  j["abi_version"] = c.abi_version;
  j["dtype"] = c.dtype;
  j["pairing"] = c.pairing;
  j["direction"] = c.direction;
  j["head_dim"] = c.head_dim;
  j["rotary_dim"] = c.rotary_dim;
  j["tokens"] = c.tokens;
  j["q"] = tensor_json(c.q);
  j["k"] = tensor_json(c.k);
  j["position_dtype"] = c.position_dtype;
  j["attention_factor"] = fmt::format("{:a}", c.attention_factor);  // hex: exact
  j["message_capacity"] = c.message_capacity;
  j["position_streams"] = c.position_streams;
  j["position_stream_stride"] = c.position_stream_stride;
  j["output_scale"] = fmt::format("{:a}", static_cast<double>(c.output_scale));
  j["pairs"] = pairs;  // θ_j (and pair_streams) entries the call carried
  json regions = json::array();
  for (const auto& r : image.regions)
    regions.push_back({{"align64", reinterpret_cast<std::uintptr_t>(r.start) % 64},
                       {"holds_output", r.holds_output},
                       {"hex", hex_bytes(r.start, r.bytes)}});
  j["regions"] = std::move(regions);
  const call_image::place* places[] = {&image.q_input,   &image.q_output, &image.k_input, &image.k_output,
                                       &image.positions, &image.inverse_frequencies, &image.pair_streams};
  json pointers;
  for (int i = 0; i < 7; ++i) pointers[pointer_names[i]] = place_json(*places[i]);
  j["pointers"] = std::move(pointers);
  return j.dump(1) + "\n";
}

replayed_call::replayed_call(const std::string& text, const std::string& file) {
  try {
    parse(text, file);
  } catch (const json::exception& e) {  // a field of the wrong JSON type
    throw io_error(file, "(case)", "is not a kernel case file", e.what());
  }
}

void replayed_call::parse(const std::string& text, const std::string& file) {
  const json j = json::parse(text, nullptr, false);
  const auto bad = [&](const std::string& field, const std::string& problem, const json& value) {
    return io_error(file, field, problem, value.is_discarded() ? std::string("?") : value.dump());
  };
  if (j.is_discarded() || !j.is_object()) throw io_error(file, "(top level)", "is not a JSON object", "");
  if (j.value("case", "") != case_kind)
    throw bad("case", fmt::format("is not \"{}\" (a kernel call saved by the gate)", case_kind), j.value("case", json()));
  const auto integer = [&](const json& o, const std::string& key, const std::string& path) -> std::int64_t {
    if (!o.contains(key) || !o[key].is_number_integer()) throw bad(path, "is not an integer", o.value(key, json()));
    return o[key].get<std::int64_t>();
  };
  const auto hex_double = [&](const std::string& key) {
    const std::string s = j.value(key, "");
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) throw bad(key, "is not a hex float", j.value(key, json()));
    return v;
  };
  if (!j.contains("kernel") || !j["kernel"].is_string()) throw bad("kernel", "is not a string", j.value("kernel", json()));
  kernel_ = j["kernel"].get<std::string>();
  call_.abi_version = static_cast<std::uint32_t>(integer(j, "abi_version", "abi_version"));
  call_.dtype = static_cast<std::int32_t>(integer(j, "dtype", "dtype"));
  call_.pairing = static_cast<std::int32_t>(integer(j, "pairing", "pairing"));
  call_.direction = static_cast<std::int32_t>(integer(j, "direction", "direction"));
  call_.head_dim = integer(j, "head_dim", "head_dim");
  call_.rotary_dim = integer(j, "rotary_dim", "rotary_dim");
  call_.tokens = integer(j, "tokens", "tokens");
  for (auto [name, t] : {std::pair{"q", &call_.q}, std::pair{"k", &call_.k}}) {
    if (!j.contains(name) || !j[name].is_object()) throw bad(name, "is not an object", j.value(name, json()));
    const json& o = j[name];
    t->heads = integer(o, "heads", std::string(name) + ".heads");
    t->input_token_stride = integer(o, "input_token_stride", std::string(name) + ".input_token_stride");
    t->input_head_stride = integer(o, "input_head_stride", std::string(name) + ".input_head_stride");
    t->output_token_stride = integer(o, "output_token_stride", std::string(name) + ".output_token_stride");
    t->output_head_stride = integer(o, "output_head_stride", std::string(name) + ".output_head_stride");
  }
  call_.position_dtype = static_cast<std::int32_t>(integer(j, "position_dtype", "position_dtype"));
  call_.attention_factor = hex_double("attention_factor");
  call_.position_streams = static_cast<std::int32_t>(integer(j, "position_streams", "position_streams"));
  call_.position_stream_stride = integer(j, "position_stream_stride", "position_stream_stride");
  call_.output_scale = static_cast<float>(hex_double("output_scale"));
  const bool wants_message = integer(j, "message_capacity", "message_capacity") > 0;
  call_.message = wants_message ? message_ : nullptr;
  call_.message_capacity = wants_message ? sizeof message_ : 0;

  // The regions, laid out as the worker lays them (layout_offsets), from an address ≡ 0 mod 64.
  if (!j.contains("regions") || !j["regions"].is_array()) throw bad("regions", "is not an array", j.value("regions", json()));
  std::vector<std::string> bytes;
  std::vector<std::uint64_t> align;
  for (std::size_t r = 0; r < j["regions"].size(); ++r) {
    const json& o = j["regions"][r];
    const std::string at = fmt::format("regions[{}]", r);
    if (!o.is_object() || !o.contains("hex") || !o["hex"].is_string()) throw bad(at + ".hex", "is not a string", o);
    const std::string& hex = o["hex"].get_ref<const std::string&>();
    const std::int64_t a = integer(o, "align64", at + ".align64");
    if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdef") != std::string::npos || a < 0 || a >= 64)
      throw bad(at, "is not hex bytes with an align64 in 0 ... 63", o.value("align64", json()));
    std::string b(hex.size() / 2, '\0');
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    bytes.push_back(std::move(b));
    align.push_back(static_cast<std::uint64_t>(a));
  }
  std::vector<std::uint64_t> offsets;
  std::uint64_t cursor = zeroed_bytes;
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    offsets.push_back((cursor + 63) / 64 * 64 + align[r]);
    cursor = offsets.back() + bytes[r].size();
  }
  memory_.assign(cursor + 64, '\0');
  auto* base = reinterpret_cast<unsigned char*>(memory_.data());
  base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64;
  for (std::size_t r = 0; r < bytes.size(); ++r) std::memcpy(base + offsets[r], bytes[r].data(), bytes[r].size());

  if (!j.contains("pointers") || !j["pointers"].is_object()) throw bad("pointers", "is not an object", j.value("pointers", json()));
  unsigned char* at[7] = {};
  for (int i = 0; i < 7; ++i) {
    const json& p = j["pointers"].value(pointer_names[i], json());
    const std::string field = std::string("pointers.") + pointer_names[i];
    if (p.is_null()) continue;
    if (p == "zeroed") {
      at[i] = base;
      continue;
    }
    if (!p.is_object()) throw bad(field, "is not null, \"zeroed\" or {region, offset}", p);
    const std::int64_t region = integer(p, "region", field + ".region");
    const std::int64_t offset = integer(p, "offset", field + ".offset");
    if (region < 0 || static_cast<std::size_t>(region) >= bytes.size() || offset < 0 ||
        static_cast<std::uint64_t>(offset) > bytes[static_cast<std::size_t>(region)].size())
      throw bad(field, "is not a place in a region", p);
    at[i] = base + offsets[static_cast<std::size_t>(region)] + static_cast<std::uint64_t>(offset);
  }
  call_.q.input = at[0];
  call_.q.output = at[1];
  call_.k.input = at[2];
  call_.k.output = at[3];
  call_.positions = at[4];
  call_.inverse_frequencies = reinterpret_cast<const double*>(at[5]);
  call_.pair_streams = reinterpret_cast<const std::int32_t*>(at[6]);
  const std::int64_t pairs = integer(j, "pairs", "pairs");
  if (pairs < 0) throw bad("pairs", "is negative", j["pairs"]);
  pairs_ = static_cast<std::size_t>(pairs);
  // Everything the call reaches must lie in the saved regions: a case edited to reach further
  // (more tokens, wider strides) would make the replay read past them.
  const unsigned char* end = base + cursor;
  for (const auto& r : image_of(call_, pairs_).regions)
    if (r.start < base || r.start + r.bytes > end)
      throw io_error(file, "regions", "do not hold all the memory the call reaches (its tokens, heads, strides or "
                     "pairs were changed)", "");
}

}  // namespace ropecheck::abi
