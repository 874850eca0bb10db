// The memory one C-ABI call reaches, as regions (call_image.h).
#include "abi/call_image.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace ropecheck::abi {
namespace {

// Stride products of two int64 need 128 bits before they are checked (GCC and clang builtin).
__extension__ typedef __int128 wide;

struct span_bytes {
  const unsigned char* start;
  std::uint64_t bytes;
};

std::size_t storage_bytes(std::int32_t dtype) {
  switch (dtype) {
    case ROPECHECK_DTYPE_FLOAT32: return 4;
    case ROPECHECK_DTYPE_FLOAT16:
    case ROPECHECK_DTYPE_BFLOAT16: return 2;
    case ROPECHECK_DTYPE_FLOAT8_E4M3FN:
    case ROPECHECK_DTYPE_FLOAT8_E5M2: return 1;
    default: return 4;  // an invalid dtype: the widest storage, so nothing a kernel reads is missed
  }
}

// Elements [lo, hi) a [tokens, heads, head_dim] tensor reaches from its pointer, or nothing when
// it is empty or its strides reach past max_image_bytes.
std::optional<std::pair<wide, wide>> tensor_elements(std::int64_t tokens, std::int64_t heads,
                                                             std::int64_t token_stride, std::int64_t head_stride,
                                                             std::int64_t head_dim, std::size_t element) {
  if (tokens <= 0 || heads <= 0 || head_dim <= 0) return std::nullopt;
  const wide t = static_cast<wide>(tokens - 1) * token_stride;
  const wide h = static_cast<wide>(heads - 1) * head_stride;
  const wide lo = std::min<wide>(t, 0) + std::min<wide>(h, 0);
  const wide hi = std::max<wide>(t, 0) + std::max<wide>(h, 0) + head_dim;
  if ((hi - lo) * static_cast<wide>(element) > static_cast<wide>(max_image_bytes)) return std::nullopt;
  return std::pair{lo, hi};
}

std::optional<span_bytes> tensor_span(const void* pointer, const ropecheck_tensor& t, std::int64_t tokens,
                                      std::int64_t head_dim, bool output, std::size_t element) {
  if (pointer == nullptr) return std::nullopt;
  const auto e = tensor_elements(tokens, t.heads, output ? t.output_token_stride : t.input_token_stride,
                                 output ? t.output_head_stride : t.input_head_stride, head_dim, element);
  if (!e) return std::nullopt;
  // Address arithmetic on integers: the range may start before the pointer (negative strides).
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  const wide first = static_cast<wide>(address) + e->first * static_cast<wide>(element);
  if (first < 0) return std::nullopt;
  return span_bytes{reinterpret_cast<const unsigned char*>(static_cast<std::uintptr_t>(first)),
                    static_cast<std::uint64_t>((e->second - e->first) * static_cast<wide>(element))};
}

std::optional<span_bytes> array_span(const void* pointer, wide count, std::size_t element) {
  if (pointer == nullptr || count <= 0 || count * static_cast<wide>(element) > max_image_bytes)
    return std::nullopt;
  return span_bytes{static_cast<const unsigned char*>(pointer), static_cast<std::uint64_t>(count * element)};
}

}  // namespace

call_image image_of(const ropecheck_rope_call& call, std::size_t pairs) {
  const std::size_t element = storage_bytes(call.dtype);
  const bool v2 = call.abi_version >= 2;
  const std::int32_t streams = v2 ? call.position_streams : 1;
  const wide stride = v2 ? call.position_stream_stride : 0;
  const wide position_count =
      streams > 1 && stride >= 0 ? (streams - 1) * stride + call.tokens : static_cast<wide>(call.tokens);
  const std::size_t position_element = call.position_dtype == ROPECHECK_DTYPE_INT32 ? 4 : 8;

  struct wanted {
    const void* pointer;
    std::optional<span_bytes> span;
    bool output;
    call_image::place* place;
  };
  call_image image;
  std::vector<wanted> pointers = {
      {call.q.input, tensor_span(call.q.input, call.q, call.tokens, call.head_dim, false, element), false,
       &image.q_input},
      {call.q.output, tensor_span(call.q.output, call.q, call.tokens, call.head_dim, true, element), true,
       &image.q_output},
      {call.k.input, tensor_span(call.k.input, call.k, call.tokens, call.head_dim, false, element), false,
       &image.k_input},
      {call.k.output, tensor_span(call.k.output, call.k, call.tokens, call.head_dim, true, element), true,
       &image.k_output},
      {call.positions, array_span(call.positions, position_count, position_element), false, &image.positions},
      {call.inverse_frequencies, array_span(call.inverse_frequencies, static_cast<wide>(pairs), sizeof(double)),
       false, &image.inverse_frequencies},
      {v2 ? call.pair_streams : nullptr,
       array_span(v2 ? call.pair_streams : nullptr, static_cast<wide>(pairs), sizeof(std::int32_t)), false,
       &image.pair_streams},
  };
  // Regions: the spans sorted by start, overlapping or touching ones merged.
  std::vector<const wanted*> placed;
  for (const auto& w : pointers)
    if (w.span) placed.push_back(&w);
  std::sort(placed.begin(), placed.end(), [](const wanted* a, const wanted* b) { return a->span->start < b->span->start; });
  for (const wanted* w : placed) {
    const unsigned char* end = w->span->start + w->span->bytes;
    if (!image.regions.empty() && w->span->start <= image.regions.back().start + image.regions.back().bytes) {
      auto& r = image.regions.back();
      r.bytes = std::max<std::size_t>(r.bytes, static_cast<std::size_t>(end - r.start));
      r.holds_output = r.holds_output || w->output;
    } else {
      image.regions.push_back({w->span->start, static_cast<std::size_t>(w->span->bytes), w->output});
    }
  }
  // Every pointer: in a region when its address falls in one (an empty tensor's too), else the
  // zeroed area, or null.
  for (const auto& w : pointers) {
    if (w.pointer == nullptr) continue;
    const auto* p = static_cast<const unsigned char*>(w.pointer);
    w.place->kind = call_image::place::zeroed;
    for (std::size_t r = 0; r < image.regions.size(); ++r) {
      const auto& region = image.regions[r];
      if (p >= region.start && p <= region.start + region.bytes) {
        *w.place = {call_image::place::in_region, static_cast<std::int32_t>(r),
                    static_cast<std::uint64_t>(p - region.start)};
        break;
      }
    }
  }
  return image;
}

std::vector<std::uint64_t> layout_offsets(const call_image& image, std::uint64_t* total_bytes) {
  std::vector<std::uint64_t> offsets;
  std::uint64_t cursor = zeroed_bytes;
  for (const auto& r : image.regions) {
    const std::uint64_t align = reinterpret_cast<std::uintptr_t>(r.start) % 64;
    const std::uint64_t offset = (cursor + 63) / 64 * 64 + align;
    offsets.push_back(offset);
    cursor = offset + r.bytes;
  }
  *total_bytes = cursor;
  return offsets;
}

ropecheck_rope_call call_in_layout(const ropecheck_rope_call& call, const call_image& image,
                                   std::span<const std::uint64_t> offsets, unsigned char* base) {
  const auto at = [&](const call_image::place& p) -> unsigned char* {
    switch (p.kind) {
      case call_image::place::null: return nullptr;
      case call_image::place::zeroed: return base;
      case call_image::place::in_region: return base + offsets[static_cast<std::size_t>(p.region)] + p.offset;
    }
    return nullptr;
  };
  ropecheck_rope_call c = call;
  c.q.input = at(image.q_input);
  c.q.output = at(image.q_output);
  c.k.input = at(image.k_input);
  c.k.output = at(image.k_output);
  c.positions = at(image.positions);
  c.inverse_frequencies = reinterpret_cast<const double*>(at(image.inverse_frequencies));
  if (call.abi_version >= 2) c.pair_streams = reinterpret_cast<const std::int32_t*>(at(image.pair_streams));
  return c;
}

}  // namespace ropecheck::abi
