// safetensors: reader/writer (see safetensors.h), header parsed with nlohmann::json.
#include "io/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_bytes.h"
#include "io/io_error.h"
#include "io/json_file.h"

namespace ropecheck {

static_assert(std::endian::native == std::endian::little,
              "the safetensors reader/writer copies little-endian data as is");

namespace {

using json = nlohmann::json;

constexpr std::size_t length_prefix_size = 8;
constexpr std::string_view metadata_key = "__metadata__";

// The codes are numeric/dtype.h's catalog column.
std::optional<dtype> dtype_from_code(std::string_view code) {
  for (const dtype_row& r : dtype_catalog)
    if (r.safetensors_code == code) return r.type;
  return std::nullopt;
}

std::string_view code_of(dtype type) {
  const dtype_row* r = find_row(type);
  return r != nullptr ? r->safetensors_code : "?";
}

// JSON numbers that are whole and non-negative, which is what shapes and offsets must be.
std::optional<std::uint64_t> as_count(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  return std::nullopt;
}

// For messages: never throws, whatever the strings hold.
std::string to_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

struct entry {
  std::string name;
  dtype type = dtype::float64;
  std::vector<std::int64_t> shape;
  std::size_t begin = 0;  // within the data buffer
  std::size_t end = 0;
};

struct parsed_file {
  std::vector<entry> entries;  // sorted by name (nlohmann::json keeps object keys sorted)
  std::size_t data_start = 0;  // from the start of the file
};

entry parse_entry(const std::string& key, const json& value, std::size_t data_size,
                  std::string_view file) {
  const auto field = [&key](std::string_view name) {
    return fmt::format("tensor '{}' field '{}'", printable(key), name);
  };
  if (!value.is_object()) {
    throw io_error(file, fmt::format("tensor '{}'", printable(key)), "expected a JSON object, got",
                   to_text(value));
  }
  for (const auto& [member, ignored] : value.items()) {
    if (member != "dtype" && member != "shape" && member != "data_offsets") {
      throw io_error(file, fmt::format("tensor '{}'", printable(key)), "unexpected key", member);
    }
  }
  entry e;
  e.name = key;

  const auto dtype_it = value.find("dtype");
  if (dtype_it == value.end()) throw io_error(file, field("dtype"), "missing", "");
  if (!dtype_it->is_string()) {
    throw io_error(file, field("dtype"), "expected a string, got", to_text(*dtype_it));
  }
  const std::optional<dtype> type = dtype_from_code(dtype_it->get_ref<const std::string&>());
  if (!type) {
    throw io_error(file, field("dtype"), "unsupported dtype",
                   dtype_it->get_ref<const std::string&>(), "supported: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I32 I64");
  }
  e.type = *type;

  const auto shape_it = value.find("shape");
  if (shape_it == value.end()) throw io_error(file, field("shape"), "missing", "");
  if (!shape_it->is_array()) {
    throw io_error(file, field("shape"), "expected an array, got", to_text(*shape_it));
  }
  for (const json& dim : *shape_it) {
    const std::optional<std::uint64_t> n = as_count(dim);
    if (!n || *n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw io_error(file, field("shape"), "bad dimension", to_text(dim),
                     fmt::format("in shape {}", to_text(*shape_it)));
    }
    e.shape.push_back(static_cast<std::int64_t>(*n));
  }
  const std::optional<std::int64_t> count = checked_element_count(e.shape, size_of(e.type));
  if (!count) throw io_error(file, field("shape"), "element count overflows", to_text(*shape_it));

  const auto offsets_it = value.find("data_offsets");
  if (offsets_it == value.end()) throw io_error(file, field("data_offsets"), "missing", "");
  const json& offsets = *offsets_it;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool well_formed = offsets.is_array() && offsets.size() == 2;
  if (well_formed) {
    const std::optional<std::uint64_t> first = as_count(offsets[0]);
    const std::optional<std::uint64_t> second = as_count(offsets[1]);
    well_formed = first.has_value() && second.has_value();
    begin = first.value_or(0);
    end = second.value_or(0);
  }
  if (!well_formed || begin > end) {
    throw io_error(file, field("data_offsets"), "expected [begin, end] with begin <= end, got",
                   to_text(offsets));
  }
  if (end > data_size) {
    throw io_error(file, field("data_offsets"), "out of range", to_text(offsets),
                   fmt::format("data buffer has {} bytes", data_size));
  }
  e.begin = static_cast<std::size_t>(begin);
  e.end = static_cast<std::size_t>(end);
  const std::size_t needed = static_cast<std::size_t>(*count) * size_of(e.type);
  if (e.end - e.begin != needed) {
    throw io_error(file, field("data_offsets"), "size does not match shape", to_text(offsets),
                   fmt::format("{} bytes, but shape {} of {} needs {}", e.end - e.begin,
                               to_text(*shape_it), code_of(e.type), needed));
  }
  return e;
}

parsed_file parse_layout(std::span<const std::byte> file, std::string_view name) {
  if (file.size() < length_prefix_size) {
    throw io_error(name, "header length", "truncated file", fmt::format("{} bytes", file.size()));
  }
  std::uint64_t header_length = 0;
  for (std::size_t i = length_prefix_size; i-- > 0;) {
    header_length = (header_length << 8) | std::to_integer<std::uint64_t>(file[i]);
  }
  const std::size_t available = file.size() - length_prefix_size;
  if (header_length > safetensors_max_header_bytes) {
    throw io_error(name, "header length", "implausibly large", std::to_string(header_length),
                   fmt::format("limit {} bytes", safetensors_max_header_bytes));
  }
  if (header_length > available) {
    throw io_error(name, "header length", "truncated header", std::to_string(header_length),
                   fmt::format("only {} bytes follow", available));
  }
  const auto* header_begin = reinterpret_cast<const char*>(file.data() + length_prefix_size);
  // Strict (io/json_file.h): a tensor name given twice is an error naming it, not a silent
  // last-one-wins that surfaces later as "trailing bytes".
  const json header = parse_json_strict(
      std::string_view(header_begin, static_cast<std::size_t>(header_length)), name, "header");
  if (!header.is_object()) {
    throw io_error(name, "header", "expected a JSON object, got", to_text(header));
  }

  parsed_file parsed;
  parsed.data_start = length_prefix_size + static_cast<std::size_t>(header_length);
  const std::size_t data_size = file.size() - parsed.data_start;
  for (const auto& [key, value] : header.items()) {
    if (key == metadata_key) {
      if (!value.is_object()) {
        throw io_error(name, "header field '__metadata__'", "expected a JSON object, got",
                       to_text(value));
      }
      continue;
    }
    parsed.entries.push_back(parse_entry(key, value, data_size, name));
  }

  // The entries must tile the data buffer: sorted by offset, each starts where the last ended.
  std::vector<const entry*> by_offset;
  for (const entry& e : parsed.entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const entry* a, const entry* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  std::size_t covered = 0;
  for (const entry* e : by_offset) {
    if (e->begin != covered) {
      throw io_error(name, fmt::format("tensor '{}' field 'data_offsets'", printable(e->name)),
                     e->begin < covered ? "overlaps another tensor" : "leaves a gap before it",
                     fmt::format("[{}, {}]", e->begin, e->end),
                     fmt::format("previous tensors end at {}", covered));
    }
    covered = e->end;
  }
  if (covered != data_size) {
    throw io_error(name, "data", "trailing bytes after the last tensor",
                   fmt::format("{} bytes", data_size - covered),
                   fmt::format("tensors cover {} of {} bytes", covered, data_size));
  }
  return parsed;
}

const entry& choose(const parsed_file& parsed, const std::optional<std::string>& name,
                    std::string_view file) {
  std::vector<std::string> names;
  for (const entry& e : parsed.entries) names.push_back(e.name);
  const std::string listing = fmt::format("available: {}", fmt::join(names, ", "));
  if (name) {
    for (const entry& e : parsed.entries) {
      if (e.name == *name) return e;
    }
    throw io_error(file, "tensor name", "no such tensor", *name, listing);
  }
  if (parsed.entries.empty()) throw io_error(file, "tensor name", "file holds no tensors", "");
  if (parsed.entries.size() > 1) {
    throw io_error(file, "tensor name", "file holds several tensors; choose one, not", "", listing);
  }
  return parsed.entries.front();
}

}  // namespace

tensor parse_safetensors(std::span<const std::byte> file, std::string_view name_for_messages,
                         std::optional<std::string> name) {
  const parsed_file parsed = parse_layout(file, name_for_messages);
  const entry& e = choose(parsed, name, name_for_messages);
  return tensor::copy_of(e.type, e.shape,
                         file.subspan(parsed.data_start + e.begin, e.end - e.begin));
}

tensor read_safetensors(const std::filesystem::path& path, std::optional<std::string> name) {
  const file_bytes file = load_file(path);
  const parsed_file parsed = parse_layout(file.bytes(), path.string());
  const entry& e = choose(parsed, name, path.string());
  return tensor::share(e.type, e.shape, file.at(parsed.data_start + e.begin), e.end - e.begin,
                       file.mapped);
}

std::vector<std::string> safetensors_tensor_names(const std::filesystem::path& path) {
  const file_bytes file = load_file(path);
  std::vector<std::string> names;
  for (const entry& e : parse_layout(file.bytes(), path.string()).entries) names.push_back(e.name);
  return names;
}

std::vector<std::byte> encode_safetensors(const named_tensors& tensors) {
  json header = json::object();
  std::size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == metadata_key || header.contains(name)) {
      throw std::invalid_argument(
          fmt::format("encode_safetensors: bad or duplicate tensor name '{}'", name));
    }
    const std::size_t size = t.bytes().size();
    header[name] = {{"dtype", std::string(code_of(t.type))},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text = to_text(header);
  text.append((8 - (length_prefix_size + text.size()) % 8) % 8, ' ');

  std::vector<std::byte> out(length_prefix_size + text.size() + offset);
  for (std::size_t i = 0; i < length_prefix_size; ++i) {
    out[i] = static_cast<std::byte>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);
  }
  std::memcpy(out.data() + length_prefix_size, text.data(), text.size());
  std::size_t position = length_prefix_size + text.size();
  for (const auto& [name, t] : tensors) {
    const std::span<const std::byte> bytes = t.bytes();
    if (!bytes.empty()) std::memcpy(out.data() + position, bytes.data(), bytes.size());
    position += bytes.size();
  }
  return out;
}

void write_safetensors(const std::filesystem::path& path, const named_tensors& tensors) {
  const std::vector<std::byte> bytes = encode_safetensors(tensors);
  write_file_atomically(path, bytes);
}

}  // namespace ropecheck
