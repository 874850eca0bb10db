// npy: .npy reader/writer (see npy.h). The header dict is parsed by a small recursive
// descent parser for the Python literal subset numpy writes (strings, ints, True/False/None,
// tuples, lists, dicts), depth-limited so hostile input cannot exhaust the stack.
#include "io/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "io/atomic_file.h"
#include "io/file_bytes.h"
#include "io/io_error.h"

namespace ropecheck {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader/writer copies little-endian data as is");

namespace {

constexpr std::string_view npy_magic = "\x93NUMPY";
constexpr std::size_t array_alignment = 64;  // numpy.lib.format.ARRAY_ALIGN
constexpr int max_nesting = 16;

struct py_value {
  enum class kind { string, integer, boolean, none, tuple, list, dict };
  kind type = kind::none;
  std::string_view source;  // the literal as written, for messages
  std::string text;         // string contents
  std::int64_t integer = 0;
  bool integer_fits = true;  // false if the literal overflows int64
  bool boolean = false;
  std::vector<py_value> items;    // tuple and list elements, dict values
  std::vector<std::string> keys;  // dict keys, parallel to items
};

class py_literal_parser {
 public:
  py_literal_parser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  py_value parse_document() {
    py_value value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    return value;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw io_error(file_, "header", "malformed header dict", text_,
                   fmt::format("{} at offset {}", what, pos_));
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) fail(fmt::format("expected '{}'", c));
  }

  py_value parse_value(int depth) {
    if (depth > max_nesting) fail("nesting too deep");
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const std::size_t start = pos_;
    py_value value;
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      value = parse_string();
    } else if (c == '(' || c == '[') {
      value = parse_sequence(depth);
    } else if (c == '{') {
      value = parse_dict(depth);
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      value = parse_integer();
    } else if (text_.substr(pos_, 4) == "True") {
      value.type = py_value::kind::boolean;
      value.boolean = true;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "False") {
      value.type = py_value::kind::boolean;
      pos_ += 5;
    } else if (text_.substr(pos_, 4) == "None") {
      value.type = py_value::kind::none;
      pos_ += 4;
    } else {
      fail("unexpected character");
    }
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  py_value parse_string() {
    const char quote = text_[pos_++];
    py_value value;
    value.type = py_value::kind::string;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') {
        // Escapes never occur in the dtype strings we accept; keep the escaped byte as is.
        ++pos_;
        if (pos_ >= text_.size()) break;
      }
      value.text.push_back(text_[pos_++]);
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;  // closing quote
    return value;
  }

  py_value parse_integer() {
    py_value value;
    value.type = py_value::kind::integer;
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') fail("expected a digit");
    // Accumulate the magnitude negatively so INT64_MIN parses too.
    std::int64_t accumulated = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_++] - '0';
      if (accumulated < (std::numeric_limits<std::int64_t>::min() + digit) / 10) {
        value.integer_fits = false;
      } else {
        accumulated = accumulated * 10 - digit;
      }
    }
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2
    if (!negative && accumulated == std::numeric_limits<std::int64_t>::min()) {
      value.integer_fits = false;
    }
    value.integer = negative ? accumulated : -accumulated;
    if (!value.integer_fits) value.integer = 0;
    return value;
  }

  py_value parse_sequence(int depth) {
    const char close = text_[pos_++] == '(' ? ')' : ']';
    py_value value;
    value.type = close == ')' ? py_value::kind::tuple : py_value::kind::list;
    bool saw_comma = false;
    while (!consume(close)) {
      if (!value.items.empty() && !saw_comma) fail(fmt::format("expected ',' or '{}'", close));
      value.items.push_back(parse_value(depth + 1));
      saw_comma = consume(',');
    }
    // (5) is just 5 in Python; only (5,) is a 1-tuple.
    if (close == ')' && value.items.size() == 1 && !saw_comma) return value.items.front();
    return value;
  }

  py_value parse_dict(int depth) {
    ++pos_;  // '{'
    py_value value;
    value.type = py_value::kind::dict;
    bool saw_comma = false;
    while (!consume('}')) {
      if (!value.items.empty() && !saw_comma) fail("expected ',' or '}'");
      skip_space();
      if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
        fail("expected a string key");
      }
      std::string key = parse_string().text;
      expect(':');
      value.keys.push_back(std::move(key));
      value.items.push_back(parse_value(depth + 1));
      saw_comma = consume(',');
    }
    return value;
  }

  std::string_view text_;
  std::string_view file_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(std::span<const std::byte> bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | std::to_integer<std::uint32_t>(bytes[i]);
  }
  return value;
}

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  for (const std::byte b : bytes) out += fmt::format("{:02x}", std::to_integer<unsigned>(b));
  return out;
}

dtype dtype_from_descr(std::string_view descr, std::optional<dtype> raw16, std::string_view file) {
  constexpr std::string_view field = "header field 'descr'";
  for (const dtype_row& r : dtype_catalog)
    if (!r.raw_bits && r.npy_descr == descr) return r.type;
  if (descr == "<u2" || descr == "|V2") {
    if (raw16 == dtype::bfloat16) return dtype::bfloat16;
    throw io_error(file, field, "raw 16-bit dtype", descr,
                   "pass --dtype bfloat16 to read it as bfloat16 bits");
  }
  // numpy has no fp8 dtype: fp8 travels as uint8 bits ('|u1'; '|V1' from ml_dtypes) and is read
  // as fp8 only when the caller names the format — a uint8 array could be either, or neither.
  if (descr == "|u1" || descr == "<u1" || descr == "|V1") {
    if (raw16 && is_float8(*raw16)) return *raw16;
    throw io_error(file, field, "raw 8-bit dtype", descr,
                   "pass --dtype " + dtype_list_text(storage_dtypes_of_width<1>, " or --dtype ", " or --dtype ") +
                       " to read it as fp8 bits");
  }
  if (!descr.empty() && descr.front() == '>') {
    throw io_error(file, field, "unsupported dtype", descr, "big-endian");
  }
  throw io_error(file, field, "unsupported dtype", descr,
                 "supported: <f8 <f4 <f2 <i4 <i8, <u2 or |V2 as bfloat16, |u1 or |V1 as fp8");
}

std::vector<std::int64_t> shape_from(const py_value& value, std::string_view file) {
  constexpr std::string_view field = "header field 'shape'";
  if (value.type != py_value::kind::tuple) {
    throw io_error(file, field, "expected a tuple of non-negative integers, got", value.source);
  }
  std::vector<std::int64_t> shape;
  for (const py_value& item : value.items) {
    if (item.type != py_value::kind::integer || !item.integer_fits || item.integer < 0) {
      throw io_error(file, field, "bad dimension", item.source,
                     fmt::format("in shape {}", printable(value.source)));
    }
    shape.push_back(item.integer);
  }
  return shape;
}

}  // namespace

npy_layout parse_npy_layout(std::span<const std::byte> file, std::string_view name,
                            std::optional<dtype> raw16) {
  constexpr std::size_t version_end = 8;
  if (file.size() < npy_magic.size() ||
      std::memcmp(file.data(), npy_magic.data(), npy_magic.size()) != 0) {
    throw io_error(name, "magic", "not a .npy file: bad magic bytes",
                   hex_bytes(file.first(std::min(file.size(), npy_magic.size()))),
                   "expected 934e554d5059 (\"\\x93NUMPY\")");
  }
  if (file.size() < version_end) {
    throw io_error(name, "version", "truncated file", fmt::format("{} bytes", file.size()));
  }
  npy_layout layout;
  const auto major = std::to_integer<int>(file[6]);
  const auto minor = std::to_integer<int>(file[7]);
  if (major < 1 || major > 3 || minor != 0) {
    throw io_error(name, "version", "unsupported .npy format version",
                   fmt::format("{}.{}", major, minor), "supported: 1.0, 2.0, 3.0");
  }
  layout.major_version = major;

  const std::size_t length_size = major == 1 ? 2 : 4;
  const std::size_t header_start = version_end + length_size;
  if (file.size() < header_start) {
    throw io_error(name, "header length", "truncated file", fmt::format("{} bytes", file.size()));
  }
  const std::size_t header_length = read_le(file.subspan(version_end, length_size));
  if (header_length > file.size() - header_start) {
    throw io_error(name, "header length", "truncated header", std::to_string(header_length),
                   fmt::format("only {} bytes follow", file.size() - header_start));
  }
  const std::span<const std::byte> header_bytes = file.subspan(header_start, header_length);
  const std::string_view header(reinterpret_cast<const char*>(header_bytes.data()),
                                header_bytes.size());

  const py_value dict = py_literal_parser(header, name).parse_document();
  if (dict.type != py_value::kind::dict) {
    throw io_error(name, "header", "expected a dict, got", dict.source);
  }
  const py_value* descr = nullptr;
  const py_value* fortran_order = nullptr;
  const py_value* shape = nullptr;
  for (std::size_t i = 0; i < dict.keys.size(); ++i) {
    const std::string& key = dict.keys[i];
    const py_value** slot = key == "descr"           ? &descr
                            : key == "fortran_order" ? &fortran_order
                            : key == "shape"         ? &shape
                                                     : nullptr;
    if (slot == nullptr) throw io_error(name, "header", "unexpected key", key);
    if (*slot != nullptr) throw io_error(name, "header", "duplicate key", key);
    *slot = &dict.items[i];
  }
  for (const auto& [key, slot] :
       {std::pair{"descr", descr}, std::pair{"fortran_order", fortran_order},
        std::pair{"shape", shape}}) {
    if (slot == nullptr) throw io_error(name, "header", "missing key", key);
  }

  if (descr->type != py_value::kind::string) {
    throw io_error(name, "header field 'descr'", "unsupported dtype", descr->source,
                   "structured dtypes are not supported");
  }
  layout.type = dtype_from_descr(descr->text, raw16, name);
  if (fortran_order->type != py_value::kind::boolean) {
    throw io_error(name, "header field 'fortran_order'", "expected True or False, got",
                   fortran_order->source);
  }
  if (fortran_order->boolean) {
    throw io_error(name, "header field 'fortran_order'", "unsupported value", "True",
                   "only C-order arrays are supported; save np.ascontiguousarray(a)");
  }
  layout.shape = shape_from(*shape, name);

  const std::optional<std::int64_t> count =
      checked_element_count(layout.shape, size_of(layout.type));
  if (!count) {
    throw io_error(name, "header field 'shape'", "element count overflows", shape->source);
  }
  layout.data_offset = header_start + header_length;
  layout.data_size = static_cast<std::size_t>(*count) * size_of(layout.type);
  const std::size_t available = file.size() - layout.data_offset;
  if (available != layout.data_size) {
    throw io_error(name, "data",
                   available < layout.data_size ? "truncated data" : "trailing bytes after data",
                   fmt::format("{} bytes", available),
                   fmt::format("shape {} of {} needs {} bytes", format_shape(layout.shape),
                               to_string(layout.type), layout.data_size));
  }
  return layout;
}

tensor parse_npy(std::span<const std::byte> file, std::string_view name,
                 std::optional<dtype> raw16) {
  npy_layout layout = parse_npy_layout(file, name, raw16);
  return tensor::copy_of(layout.type, std::move(layout.shape),
                         file.subspan(layout.data_offset, layout.data_size));
}

tensor read_npy(const std::filesystem::path& path, std::optional<dtype> raw16) {
  const file_bytes file = load_file(path);
  npy_layout layout = parse_npy_layout(file.bytes(), path.string(), raw16);
  // Point into the loaded (or mapped) file rather than copying it again.
  return tensor::share(layout.type, std::move(layout.shape), file.at(layout.data_offset),
                       layout.data_size, file.mapped);
}

namespace {

// numeric/dtype.h's catalog column (raw-bit dtypes as the unsigned integer of their width).
std::string_view descr_of(dtype type) {
  const dtype_row* r = find_row(type);
  return r != nullptr ? r->npy_descr : "?";
}

// Magic, version, length and the space-padded, '\n'-terminated header dict.
std::string npy_preamble(const tensor& t) {
  const std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                       descr_of(t.type), format_shape(t.shape));
  for (const int major : {1, 2}) {
    const std::size_t length_size = major == 1 ? 2 : 4;
    const std::size_t unpadded = npy_magic.size() + 2 + length_size + dict.size() + 1;
    const std::size_t padding = (array_alignment - unpadded % array_alignment) % array_alignment;
    const std::size_t header_length = dict.size() + padding + 1;
    if (major == 1 && header_length > 0xffff) continue;
    std::string out(npy_magic);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (std::size_t i = 0; i < length_size; ++i) {
      out.push_back(static_cast<char>((header_length >> (8 * i)) & 0xff));
    }
    out += dict;
    out.append(padding, ' ');
    out.push_back('\n');
    return out;
  }
  throw std::length_error("npy header longer than 4 GiB");  // unreachable for real shapes
}

}  // namespace

void write_npy(std::ostream& out, const tensor& t) {
  const std::span<const std::byte> data = t.bytes();
  const std::string preamble = npy_preamble(t);
  out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

std::vector<std::byte> encode_npy(const tensor& t) {
  std::ostringstream out;
  write_npy(out, t);
  const std::string s = std::move(out).str();
  std::vector<std::byte> bytes(s.size());
  if (!s.empty()) std::memcpy(bytes.data(), s.data(), s.size());
  return bytes;
}

void write_npy(const std::filesystem::path& path, const tensor& t) {
  (void)t.bytes();  // a tensor with inconsistent shape fails before any file is touched
  write_file_atomically(path, [&t](std::ostream& out) { write_npy(out, t); });
}

}  // namespace ropecheck
