// rope_call helpers and the structural checks of call_checks.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "fast/call_checks.h"
#include "fast/rope_call.h"

namespace ropecheck::fast {

rope_tensor packed_tensor(const void* input, void* output, std::int64_t heads,
                          std::int64_t head_dim) {
  return {input, output, heads, heads * head_dim, head_dim, heads * head_dim, head_dim};
}

rope_call make_call(const call_shape& shape, std::span<const std::int64_t> positions,
                    const rope_tensor& q, const rope_tensor& k, direction dir) {
  rope_call call;
  call.storage = shape.storage;
  call.pair = shape.pair;
  call.dir = dir;
  call.head_dim = shape.head_dim;
  call.rotary_dim = shape.rotary_dim;
  call.tokens = static_cast<std::int64_t>(positions.size());
  call.q = q;
  call.k = k;
  call.positions = positions.data();
  call.position_type = dtype::int64;
  return call;
}

rope_call with_streams(rope_call call, std::span<const std::int64_t> positions, std::int32_t streams,
                       std::span<const std::int32_t> pair_streams) {
  call.position_streams = streams;
  call.tokens = streams > 0 ? static_cast<std::int64_t>(positions.size()) / streams : 0;
  call.position_stream_stride = call.tokens;
  call.positions = positions.data();
  call.position_type = dtype::int64;
  call.pair_streams = streams > 1 ? pair_streams.data() : nullptr;
  return call;
}

namespace {

template <class P>
P* advance(P* base, std::int64_t elements, std::size_t element_size) {
  if (base == nullptr) return nullptr;
  using byte_type = std::conditional_t<std::is_const_v<P>, const std::byte, std::byte>;
  return reinterpret_cast<byte_type*>(base) + elements * static_cast<std::int64_t>(element_size);
}

rope_tensor slice(const rope_tensor& t, std::int64_t begin, std::size_t element_size) {
  rope_tensor s = t;
  if (t.heads == 0) return s;
  s.input = advance(t.input, begin * t.input_token_stride, element_size);
  s.output = advance(t.output, begin * t.output_token_stride, element_size);
  return s;
}

}  // namespace

rope_call slice_tokens(const rope_call& call, std::int64_t begin, std::int64_t end) {
  rope_call s = call;
  s.tokens = end - begin;
  s.q = slice(call.q, begin, size_of(call.storage));
  s.k = slice(call.k, begin, size_of(call.storage));
  s.positions = advance(call.positions, begin, size_of(call.position_type));
  return s;
}

namespace detail {

bool is_in_place(const rope_tensor& t) {
  return t.output == t.input && t.output_token_stride == t.input_token_stride &&
         t.output_head_stride == t.input_head_stride;
}

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// min over dh in [lo, hi] (skipping dh == 0 when skip_zero) of |base + dh·stride| < length.
bool any_row_within(std::int64_t base, std::int64_t lo, std::int64_t hi, std::int64_t stride,
                    std::int64_t length, bool skip_zero) {
  if (lo > hi) return false;
  auto hits = [&](std::int64_t dh) {
    if (dh < lo || dh > hi || (skip_zero && dh == 0)) return false;
    const std::int64_t v = base + dh * stride;
    return v > -length && v < length;
  };
  if (stride == 0) {
    if (base <= -length || base >= length) return false;
    return hits(lo) || hits(lo + 1) || hits(hi);  // any allowed dh
  }
  // |base + dh·stride| is V-shaped in dh with its minimum at −base/stride.
  const std::int64_t f = std::clamp(floor_div(-base, stride), lo, hi);
  for (std::int64_t dh : {f - 1, f, f + 1, f + 2}) {
    if (hits(dh)) return true;
  }
  return false;
}

}  // namespace

bool lattice_rows_overlap(std::int64_t offset, std::int64_t dt_lo, std::int64_t dt_hi,
                          std::int64_t token_stride, std::int64_t dh_lo, std::int64_t dh_hi,
                          std::int64_t head_stride, std::int64_t row_length,
                          bool exclude_origin) {
  // Walk the shorter of the two ranges.
  if (dt_hi - dt_lo > dh_hi - dh_lo) {
    std::swap(dt_lo, dh_lo);
    std::swap(dt_hi, dh_hi);
    std::swap(token_stride, head_stride);
  }
  for (std::int64_t dt = dt_lo; dt <= dt_hi; ++dt) {
    if (any_row_within(offset + dt * token_stride, dh_lo, dh_hi, head_stride, row_length,
                       exclude_origin && dt == 0)) {
      return true;
    }
  }
  return false;
}

namespace {

// A scale as it was given: shortest round-trip decimal (9 significant digits suffice for float).
std::string show_scale(float scale) {
  std::ostringstream os;
  os.precision(9);
  os << scale;
  return os.str();
}

status invalid(std::string message) {
  return status::error(status_code::invalid_argument, std::move(message));
}

struct byte_range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // exclusive
  bool intersects(const byte_range& o) const { return begin < o.end && o.begin < end; }
};

// Largest element offset the tensor touches, checked for overflow; rows are
// token·token_stride + head·head_stride + [0, head_dim).
bool extent_elements(std::int64_t tokens, std::int64_t heads, std::int64_t token_stride,
                     std::int64_t head_stride, std::int64_t head_dim, std::int64_t& extent) {
  constexpr std::int64_t limit = std::int64_t{1} << 60;
  std::int64_t along_tokens = 0;
  std::int64_t along_heads = 0;
  if (__builtin_mul_overflow(tokens - 1, token_stride, &along_tokens) ||
      __builtin_mul_overflow(heads - 1, head_stride, &along_heads) ||
      __builtin_add_overflow(along_tokens, along_heads, &extent) ||
      __builtin_add_overflow(extent, head_dim, &extent)) {
    return false;
  }
  return extent <= limit;
}

status check_tensor(const rope_call& call, const rope_tensor& t, const char* name,
                    byte_range& input_range, byte_range& output_range) {
  // Built only for a message: a valid call (the hot path of small calls) makes no string.
  const auto n = [name] { return std::string(name); };
  if (t.heads < 0) return invalid(n() + ".heads is negative (" + std::to_string(t.heads) + ")");
  if (t.heads == 0 || call.tokens == 0) return status::success();
  if (t.input == nullptr) return invalid(n() + ".input is null");
  if (t.output == nullptr) return invalid(n() + ".output is null");
  if (t.input_token_stride < 0 || t.input_head_stride < 0 || t.output_token_stride < 0 ||
      t.output_head_stride < 0) {
    return invalid(n() + " has a negative stride");
  }
  const std::size_t element = size_of(call.storage);
  if (reinterpret_cast<std::uintptr_t>(t.input) % element != 0 ||
      reinterpret_cast<std::uintptr_t>(t.output) % element != 0) {
    return invalid(n() + " input/output pointer is not aligned to its " +
                   std::to_string(element) + "-byte elements");
  }
  std::int64_t in_extent = 0;
  std::int64_t out_extent = 0;
  if (!extent_elements(call.tokens, t.heads, t.input_token_stride, t.input_head_stride,
                       call.head_dim, in_extent) ||
      !extent_elements(call.tokens, t.heads, t.output_token_stride, t.output_head_stride,
                       call.head_dim, out_extent)) {
    return invalid(n() + " strides/sizes overflow the address range");
  }
  input_range = {reinterpret_cast<std::uintptr_t>(t.input),
                 reinterpret_cast<std::uintptr_t>(t.input) +
                     static_cast<std::uintptr_t>(in_extent) * element};
  output_range = {reinterpret_cast<std::uintptr_t>(t.output),
                  reinterpret_cast<std::uintptr_t>(t.output) +
                      static_cast<std::uintptr_t>(out_extent) * element};
  if (input_range.end < input_range.begin || output_range.end < output_range.begin) {
    return invalid(n() + " extends past the end of the address space");
  }
  if (lattice_rows_overlap(0, 0, call.tokens - 1, t.output_token_stride, -(t.heads - 1),
                           t.heads - 1, t.output_head_stride, call.head_dim, true)) {
    return invalid(n() + " output strides alias: two (token, head) rows overlap (token_stride " +
                   std::to_string(t.output_token_stride) + ", head_stride " +
                   std::to_string(t.output_head_stride) + ", head_dim " +
                   std::to_string(call.head_dim) + ")");
  }
  if (!is_in_place(t) && input_range.intersects(output_range)) {
    return invalid(n() + " output overlaps its input without being exactly in place "
                       "(in place needs output == input and equal strides)");
  }
  return status::success();
}

}  // namespace

status check_call(const rope_call& call) {
  if (!(std::isfinite(call.output_scale) && call.output_scale > 0)) {
    return invalid("output_scale must be finite and > 0, got " + show_scale(call.output_scale));
  }
  if (call.output_scale != 1.0f && !is_float8(call.storage)) {
    return status::error(status_code::unsupported,
                         "output_scale " + show_scale(call.output_scale) +
                             " applies to fp8 storage only (" + dtype_list_text(storage_dtypes_of_width<1>, ", ", ", ") +
                             "), not " +
                             std::string(to_string(call.storage)));
  }
  if (call.head_dim <= 0) return invalid("head_dim must be positive, got " + std::to_string(call.head_dim));
  if (call.rotary_dim < 2 || call.rotary_dim % 2 != 0) {
    return invalid("rotary_dim must be even and >= 2, got " + std::to_string(call.rotary_dim));
  }
  if (call.rotary_dim > call.head_dim) {
    return invalid("rotary_dim " + std::to_string(call.rotary_dim) + " exceeds head_dim " +
                   std::to_string(call.head_dim));
  }
  if (call.tokens < 0) return invalid("tokens is negative (" + std::to_string(call.tokens) + ")");
  if (call.position_type != dtype::int32 && call.position_type != dtype::int64) {
    return invalid("positions must be int32 or int64, got " +
                   std::string(to_string(call.position_type)));
  }
  if (call.tokens > 0 && call.positions == nullptr) return invalid("positions is null");
  if (reinterpret_cast<std::uintptr_t>(call.positions) % size_of(call.position_type) != 0) {
    return invalid("positions pointer is not aligned to its elements");
  }
  if (call.position_streams < 1 || call.position_streams > max_position_streams) {
    return invalid("position_streams must be in [1, " + std::to_string(max_position_streams) +
                   "], got " + std::to_string(call.position_streams));
  }
  if (call.position_streams > 1) {
    if (call.position_stream_stride < 0) {
      return invalid("position_stream_stride is negative (" +
                     std::to_string(call.position_stream_stride) + ")");
    }
    if (call.pair_streams == nullptr) return invalid("pair_streams is null with several position streams");
    for (std::int64_t j = 0; j < call.rotary_dim / 2; ++j) {
      if (call.pair_streams[j] < 0 || call.pair_streams[j] >= call.position_streams) {
        return invalid("pair_streams[" + std::to_string(j) + "] = " +
                       std::to_string(call.pair_streams[j]) + " is not a stream in [0, " +
                       std::to_string(call.position_streams) + ")");
      }
    }
  }

  byte_range q_in, q_out, k_in, k_out;
  if (status s = check_tensor(call, call.q, "q", q_in, q_out); !s.ok()) return s;
  if (status s = check_tensor(call, call.k, "k", k_in, k_out); !s.ok()) return s;
  const bool both = call.tokens > 0 && call.q.heads > 0 && call.k.heads > 0;
  if (!both) return status::success();

  if (!is_in_place(call.k) && q_out.intersects(k_in)) {
    return invalid("q output overlaps k input (k is not in place)");
  }
  if (!is_in_place(call.q) && k_out.intersects(q_in)) {
    return invalid("k output overlaps q input (q is not in place)");
  }
  if (q_out.intersects(k_out)) {
    // Fused QKV buffers share strides and differ by a whole number of elements: check the
    // two row lattices exactly. Other overlapping layouts cannot be proven disjoint cheaply.
    const std::int64_t element = static_cast<std::int64_t>(size_of(call.storage));
    const std::int64_t delta_bytes = static_cast<std::int64_t>(k_out.begin - q_out.begin);
    const bool same_lattice = call.q.output_token_stride == call.k.output_token_stride &&
                              call.q.output_head_stride == call.k.output_head_stride &&
                              delta_bytes % element == 0;
    if (!same_lattice ||
        lattice_rows_overlap(delta_bytes / element, -(call.tokens - 1), call.tokens - 1,
                             call.q.output_token_stride, -(call.q.heads - 1),
                             call.k.heads - 1, call.q.output_head_stride, call.head_dim,
                             false)) {
      return invalid("q and k outputs overlap (rows of one would overwrite the other)");
    }
  }
  return status::success();
}

}  // namespace detail
}  // namespace ropecheck::fast
