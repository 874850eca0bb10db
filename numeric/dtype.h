// dtype: the element types ropecheck reads, writes and computes in — one spelling for the
// whole codebase ("float32", "bfloat16", ...), matching numpy's names where numpy has one and
// PyTorch's for the 8-bit floats (torch.float8_e4m3fn, torch.float8_e5m2; numpy has none).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ropecheck {

enum class dtype { float64, float32, float16, bfloat16, int32, int64, float8_e4m3fn, float8_e5m2 };

// The dtype catalog: the one list of dtypes that the kernel registry, the properties, the
// benchmarks, the ABI, the CLI's and Python's options and the tests iterate. Adding a dtype
// is a row here (and its format_of case below); numeric/dtype_lists_test.cpp fails on any
// source file that retypes the storage list instead of iterating it.
struct dtype_row {
  dtype type;
  std::string_view name;
  std::size_t bytes;
  // What RoPE kernels read and write (q, k and their outputs): the dtypes the kernels, the
  // gate's properties, the audit's --dtype and the benchmarks cover. Math is float32 or wider.
  bool storage;
  // Has no numpy dtype, so a .npy or array holds its raw bits (uint16 for bfloat16, uint8 for
  // the 8-bit floats) and is read as it only when named (--dtype, Python's dtype=).
  bool raw_bits;
  // The .npy header's 'descr' written for it (numpy's array-interface typestr, little-endian;
  // raw-bit dtypes as the unsigned integer of their width).
  std::string_view npy_descr;
  // Its safetensors dtype code (huggingface/safetensors, safetensors/src/tensor.rs Dtype).
  std::string_view safetensors_code;
};

inline constexpr dtype_row dtype_catalog[] = {
    {dtype::float64, "float64", 8, false, false, "<f8", "F64"},
    {dtype::float32, "float32", 4, true, false, "<f4", "F32"},
    {dtype::float16, "float16", 2, true, false, "<f2", "F16"},
    {dtype::bfloat16, "bfloat16", 2, true, true, "<u2", "BF16"},
    {dtype::int32, "int32", 4, false, false, "<i4", "I32"},
    {dtype::int64, "int64", 8, false, false, "<i8", "I64"},
    {dtype::float8_e4m3fn, "float8_e4m3fn", 1, true, true, "|u1", "F8_E4M3"},
    {dtype::float8_e5m2, "float8_e5m2", 1, true, true, "|u1", "F8_E5M2"},
};

// The rows are in the enum's order, so that a dtype's row is an index (kernels' scalar loops
// ask size_of and is_float8 per element).
constexpr bool catalog_in_enum_order() {
  for (std::size_t i = 0; i < std::size(dtype_catalog); ++i)
    if (static_cast<std::size_t>(dtype_catalog[i].type) != i) return false;
  return true;
}
static_assert(catalog_in_enum_order(), "dtype_catalog: one row per dtype, in the enum's order");

// nullptr for a value outside the enum (a cast from a bad integer).
constexpr const dtype_row* find_row(dtype t) {
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(dtype_catalog) ? &dtype_catalog[i] : nullptr;
}

constexpr std::string_view to_string(dtype t) {
  const dtype_row* r = find_row(t);
  return r != nullptr ? r->name : "?";
}

constexpr std::optional<dtype> parse_dtype(std::string_view name) {
  for (const dtype_row& r : dtype_catalog)
    if (name == r.name) return r.type;
  return std::nullopt;
}

constexpr std::size_t size_of(dtype t) {
  const dtype_row* r = find_row(t);
  return r != nullptr ? r->bytes : 0;
}

// The catalog's dtypes whose row satisfies `keep`, in catalog order, as a constexpr std::array.
template <auto keep>
constexpr auto dtypes_where() {
  constexpr std::size_t n = [] {
    std::size_t k = 0;
    for (const dtype_row& r : dtype_catalog) k += keep(r) ? 1 : 0;
    return k;
  }();
  std::array<dtype, n> out{};
  std::size_t i = 0;
  for (const dtype_row& r : dtype_catalog)
    if (keep(r)) out[i++] = r.type;
  return out;
}

// The storage dtypes in catalog order (float32, float16, bfloat16, float8_e4m3fn, float8_e5m2).
inline constexpr auto storage_dtypes = dtypes_where<[](const dtype_row& r) { return r.storage; }>();
// The dtypes read from raw bits only when named (bfloat16, float8_e4m3fn, float8_e5m2).
inline constexpr auto raw_bits_dtypes = dtypes_where<[](const dtype_row& r) { return r.raw_bits; }>();
// The storage dtypes `bytes` wide: 2, the 16-bit floats; 1, the 8-bit floats.
template <std::size_t bytes>
inline constexpr auto storage_dtypes_of_width =
    dtypes_where<[](const dtype_row& r) { return r.storage && r.bytes == bytes; }>();

constexpr bool is_storage(dtype t) {
  const dtype_row* r = find_row(t);
  return r != nullptr && r->storage;
}

// The names of a list of dtypes, in its order, at compile time.
template <std::size_t n>
constexpr std::array<std::string_view, n> names_of(const std::array<dtype, n>& types) {
  std::array<std::string_view, n> out{};
  for (std::size_t i = 0; i < n; ++i) out[i] = to_string(types[i]);
  return out;
}

// The names of a list of dtypes: the choices of a command-line or Python option.
template <class Dtypes>
std::vector<std::string> dtype_names(const Dtypes& types) {
  std::vector<std::string> out;
  for (dtype t : types) out.emplace_back(to_string(t));
  return out;
}

// "a, b or c" (or "a|b|c"): a list of dtypes as a help text or a message names it.
template <class Dtypes>
std::string dtype_list_text(const Dtypes& types, std::string_view separator = ", ",
                            std::string_view last_separator = " or ") {
  std::string out;
  std::size_t i = 0;
  for (dtype t : types) {
    if (i > 0) out += i + 1 == std::size(types) ? last_separator : separator;
    out += to_string(t);
    ++i;
  }
  return out;
}

constexpr bool is_floating(dtype t) { return t != dtype::int32 && t != dtype::int64; }

// The 8-bit floats (OCP "OFP8 Formats for Deep Learning" v1.0, 2023; Micikevicius et al.,
// "FP8 Formats for Deep Learning", arXiv:2209.05433).
constexpr bool is_float8(dtype t) { return is_floating(t) && size_of(t) == 1; }

// An IEEE-style binary format: the one place each floating dtype's precision and exponent
// range are written (the ULP metric, the 16- and 8-bit codecs and the bounds all read them
// here). emax = 1 − emin and the largest finite value (2 − 2^(1−p))·2^emax for all of ours
// except float8_e4m3fn ("fn": finite, no infinities), which spends the all-ones exponent on
// normals too: emax = 8 (not 7) and only S.1111.111 is NaN, so its largest finite value is
// 1.75·2^8 = 448 where the IEEE rule would give 1.875·2^8.
struct float_format {
  int precision_bits;       // p, implicit bit included: the unit roundoff is 2^-p
  int min_normal_exponent;  // emin: the smallest normal is 2^emin
  bool has_infinity = true;       // false: no ±inf encodings (float8_e4m3fn)
  double finite_max_override = 0; // 0: the IEEE largest finite value (see max_finite())
  constexpr int max_exponent() const {
    return finite_max_override != 0 ? 1 - min_normal_exponent + 1 : 1 - min_normal_exponent;
  }
  // The largest finite value: what a saturating store writes for anything above it.
  constexpr double max_finite() const {
    if (finite_max_override != 0) return finite_max_override;
    // At run time one ldexp: the loops below are a store-to-load chain per doubling (~600
    // cycles for float32), which made max_finite half the cost of drawing a value.
    if (!std::is_constant_evaluated())
      return std::ldexp(2.0 - std::ldexp(1.0, 1 - precision_bits), max_exponent());
    double v = 1.0;
    for (int i = 1; i < precision_bits; ++i) v /= 2;  // 2^(1−p)
    v = 2.0 - v;
    for (int i = 0; i < max_exponent(); ++i) v *= 2;
    return v;
  }
};

inline constexpr float_format float64_format{53, -1022};
inline constexpr float_format float32_format{24, -126};
inline constexpr float_format float16_format{11, -14};
inline constexpr float_format bfloat16_format{8, -126};
// e4m3fn: bias 7, emin = −6, max 448, no infinities, NaN = S.1111.111.
inline constexpr float_format float8_e4m3fn_format{4, -6, false, 448.0};
// e5m2: bias 15, emin = −14, emax = 15, max 57344 = 1.75·2^15, ±inf and NaNs as IEEE.
inline constexpr float_format float8_e5m2_format{3, -14};

// Throws std::invalid_argument for the integer dtypes, which have no floating format.
constexpr float_format format_of(dtype t) {
  switch (t) {
    case dtype::float64: return float64_format;
    case dtype::float32: return float32_format;
    case dtype::float16: return float16_format;
    case dtype::bfloat16: return bfloat16_format;
    case dtype::float8_e4m3fn: return float8_e4m3fn_format;
    case dtype::float8_e5m2: return float8_e5m2_format;
    case dtype::int32:
    case dtype::int64: break;
  }
  throw std::invalid_argument("format_of: integer dtypes have no floating format");
}

// Significand precision p of a floating dtype (0 for the integer ones).
constexpr int precision_bits(dtype t) { return is_floating(t) ? format_of(t).precision_bits : 0; }

}  // namespace ropecheck
