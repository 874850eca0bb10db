// The SIMD rotation loop: Google Highway, compiled once per x86 target with FMA (AVX2,
// AVX-512) and picked at run time by HWY_DYNAMIC_DISPATCH; other targets run the scalar loop,
// because an unfused multiply-add would change the rounding (rotation.h).
//
// Half-split rows are two contiguous halves: vectors of a from x[j..], of b from x[j+d/2..],
// c and s straight from the cos/sin row. Adjacent rows interleave (a0 b0 a1 b1 ...): c and s
// are duplicated per pair with one lane permute, x's pairs are swapped (b0 a0 ...) and the
// even lanes negated, so y = fma(x, c, fl(swapped·s)) is lane for lane the half-split
// formula. Conversions: float16 by F16C (vcvtps2ph, immediate rounding = nearest even);
// bfloat16 by our own round-to-nearest-even, as Highway 1.0.3's DemoteTo truncates.
// Large out-of-place outputs use non-temporal stores: the output is not re-read here, and
// skipping the read-for-ownership of each destination line saves a third of the traffic.

// SSSE3/SSE4 lack FMA; leave them out so the baseline (EMU128) takes the scalar loop.
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/rotation_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "fast/rotation.h"

HWY_BEFORE_NAMESPACE();
namespace ropecheck::fast::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR

void rotate_chunk(const rotation_chunk& chunk) { rotate_chunk_scalar(chunk); }

#else

using float_tag = hn::ScalableTag<float>;

// Loads and stores of one storage dtype, in float32 vectors.
struct float32_io {
  using element = float;
  template <class D>
  static hn::Vec<D> load(D d, const element* p) {
    return hn::LoadU(d, p);
  }
  template <class D>
  static void store(D d, hn::Vec<D> v, element* p) {
    hn::StoreU(v, d, p);
  }
  template <class D>
  static void stream(D d, hn::Vec<D> v, element* p) {
    hn::Stream(v, d, p);
  }
};

struct float16_io {
  using element = hwy::float16_t;
  template <class D>
  static hn::Vec<D> load(D d, const element* p) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<element, D>(), p));
  }
  template <class D>
  static void store(D d, hn::Vec<D> v, element* p) {
    const hn::Rebind<element, D> dh;
    hn::StoreU(hn::DemoteTo(dh, v), dh, p);
  }
  template <class D>
  static void stream(D d, hn::Vec<D> v, element* p) {
    const hn::Rebind<element, D> dh;
    hn::Stream(hn::DemoteTo(dh, v), dh, p);
  }
};

struct bfloat16_io {
  using element = hwy::bfloat16_t;
  template <class D>
  static hn::Vec<D> load(D d, const element* p) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<element, D>(), p));
  }
  // Round to nearest even: add 0x7FFF plus the lowest kept bit, keep the top 16 bits; a
  // carry into the exponent rounds up to the next binade or to infinity, as it should. NaN
  // keeps its leading payload and is made quiet (numeric/half.h does the same).
  template <class D>
  static hn::Vec<hn::Rebind<std::uint16_t, D>> round(D d, hn::Vec<D> v) {
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    const auto bits = hn::BitCast(du, v);
    const auto lowest_kept = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
    const auto rounded = hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lowest_kept));
    const auto quiet_nan = hn::Or(bits, hn::Set(du, 0x00400000u));
    const auto chosen = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet_nan, rounded);
    // Values are < 2^16 after the shift, so the saturating demotion is exact.
    return hn::DemoteTo(hn::Rebind<std::uint16_t, D>(),
                        hn::BitCast(di, hn::ShiftRight<16>(chosen)));
  }
  template <class D>
  static void store(D d, hn::Vec<D> v, element* p) {
    const hn::Rebind<std::uint16_t, D> du16;
    hn::StoreU(round(d, v), du16, reinterpret_cast<std::uint16_t*>(p));
  }
  template <class D>
  static void stream(D d, hn::Vec<D> v, element* p) {
    const hn::Rebind<std::uint16_t, D> du16;
    hn::Stream(round(d, v), du16, reinterpret_cast<std::uint16_t*>(p));
  }
};

template <class IO, bool kStream, class D>
HWY_INLINE void put(D d, hn::Vec<D> v, typename IO::element* p) {
  if constexpr (kStream) {
    IO::stream(d, v, p);
  } else {
    IO::store(d, v, p);
  }
}

// Returns the first pair left for the scalar tail.
template <class IO, bool kStream>
HWY_INLINE std::int64_t rotate_half_split(const float* cos_sin, std::int64_t pairs,
                                          hn::Vec<float_tag> sign_flip,
                                          const typename IO::element* in,
                                          typename IO::element* out) {
  const float_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t j = 0;
  // Two vectors per half per step: with 128-dim float32 rows each output cache line is then
  // completed by back-to-back stores, which keeps non-temporal write combining effective.
  for (; j + 2 * lanes <= pairs; j += 2 * lanes) {
    const auto c0 = hn::LoadU(d, cos_sin + j);
    const auto c1 = hn::LoadU(d, cos_sin + j + lanes);
    const auto s0 = hn::Xor(hn::LoadU(d, cos_sin + pairs + j), sign_flip);
    const auto s1 = hn::Xor(hn::LoadU(d, cos_sin + pairs + j + lanes), sign_flip);
    const auto a0 = IO::load(d, in + j);
    const auto a1 = IO::load(d, in + j + lanes);
    const auto b0 = IO::load(d, in + pairs + j);
    const auto b1 = IO::load(d, in + pairs + j + lanes);
    const auto ya0 = hn::MulSub(a0, c0, hn::Mul(b0, s0));
    const auto ya1 = hn::MulSub(a1, c1, hn::Mul(b1, s1));
    const auto yb0 = hn::MulAdd(b0, c0, hn::Mul(a0, s0));
    const auto yb1 = hn::MulAdd(b1, c1, hn::Mul(a1, s1));
    put<IO, kStream>(d, ya0, out + j);
    put<IO, kStream>(d, ya1, out + j + lanes);
    put<IO, kStream>(d, yb0, out + pairs + j);
    put<IO, kStream>(d, yb1, out + pairs + j + lanes);
  }
  for (; j + lanes <= pairs; j += lanes) {
    const auto c = hn::LoadU(d, cos_sin + j);
    const auto s = hn::Xor(hn::LoadU(d, cos_sin + pairs + j), sign_flip);
    const auto a = IO::load(d, in + j);
    const auto b = IO::load(d, in + pairs + j);
    put<IO, kStream>(d, hn::MulSub(a, c, hn::Mul(b, s)), out + j);
    put<IO, kStream>(d, hn::MulAdd(b, c, hn::Mul(a, s)), out + pairs + j);
  }
  return j;
}

template <class IO, bool kStream, class Indices>
HWY_INLINE std::int64_t rotate_adjacent(const float* cos_sin, std::int64_t pairs,
                                        hn::Vec<float_tag> sign_flip,
                                        const Indices& duplicate_pairs,
                                        hn::Vec<float_tag> negate_even,
                                        const typename IO::element* in,
                                        typename IO::element* out) {
  const float_tag d;
  const hn::Half<float_tag> dh;
  const std::int64_t half_lanes = static_cast<std::int64_t>(hn::Lanes(dh));
  std::int64_t j = 0;  // pair index; elements 2j .. 2j + lanes
  for (; j + half_lanes <= pairs; j += half_lanes) {
    const auto c = hn::TableLookupLanes(hn::ZeroExtendVector(d, hn::LoadU(dh, cos_sin + j)),
                                        duplicate_pairs);
    const auto s = hn::Xor(
        hn::TableLookupLanes(hn::ZeroExtendVector(d, hn::LoadU(dh, cos_sin + pairs + j)),
                             duplicate_pairs),
        sign_flip);
    const auto x = IO::load(d, in + 2 * j);
    const auto swapped = hn::Xor(hn::Reverse2(d, x), negate_even);  // (−b0, a0, −b1, a1, ...)
    put<IO, kStream>(d, hn::MulAdd(x, c, hn::Mul(swapped, s)), out + 2 * j);
  }
  return j;
}

// Streaming needs every store vector-aligned: aligned rows and no scalar tail.
template <class IO>
bool can_stream(const rotation_chunk& chunk) {
  if (!chunk.allow_streaming) return false;
  const float_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t vector_bytes = lanes * static_cast<std::int64_t>(sizeof(typename IO::element));
  const std::int64_t element = static_cast<std::int64_t>(sizeof(typename IO::element));
  const std::int64_t step = chunk.pair == pairing::adjacent ? 2 * chunk.pairs : chunk.pairs;
  return reinterpret_cast<std::uintptr_t>(chunk.output) % static_cast<std::uintptr_t>(vector_bytes) == 0 &&
         (chunk.output_token_stride * element) % vector_bytes == 0 &&
         (chunk.output_head_stride * element) % vector_bytes == 0 && step % lanes == 0;
}

// Prefetches row (token, head) of the input if it is inside the chunk.
template <class element>
HWY_INLINE void prefetch_row(const rotation_chunk& chunk, std::int64_t token, std::int64_t head) {
  if (token >= chunk.tokens) return;
  const auto* row = reinterpret_cast<const char*>(reinterpret_cast<const element*>(chunk.input) +
                                                  token * chunk.input_token_stride +
                                                  head * chunk.input_head_stride);
  const std::int64_t row_bytes = chunk.head_dim * static_cast<std::int64_t>(sizeof(element));
  for (std::int64_t b = 0; b < row_bytes; b += 64) hwy::Prefetch(row + b);
}

template <class IO, bool kStream>
void rotate_chunk_typed(const rotation_chunk& chunk) {
  using element = typename IO::element;
  const float_tag d;
  const hn::RebindToUnsigned<float_tag> du;
  const auto sign_flip = hn::BitCast(d, hn::Set(du, chunk.inverse ? 0x80000000u : 0u));
  HWY_ALIGN std::int32_t duplicate[hn::MaxLanes(d)];
  HWY_ALIGN std::uint32_t even_sign[hn::MaxLanes(d)];
  for (std::size_t i = 0; i < hn::MaxLanes(d); ++i) {
    duplicate[i] = static_cast<std::int32_t>(i / 2);
    even_sign[i] = i % 2 == 0 ? 0x80000000u : 0u;
  }
  const auto duplicate_pairs = hn::SetTableIndices(d, duplicate);
  const auto negate_even = hn::BitCast(d, hn::Load(du, even_sign));
  const bool adjacent = chunk.pair == pairing::adjacent;

  // Software prefetch about 4 KiB of rows ahead. The hardware prefetchers lose track of
  // half-split's access order (lines 0, 4, 1, 5, ... of a row) and it ran 30% below adjacent
  // on a 64 MiB tensor without this; with it both pairings stream at the same rate.
  const std::int64_t row_bytes = chunk.head_dim * static_cast<std::int64_t>(sizeof(element));
  const std::int64_t rows_ahead = std::max<std::int64_t>(1, 4096 / row_bytes);
  std::int64_t ahead_token = rows_ahead / chunk.heads;
  std::int64_t ahead_head = rows_ahead % chunk.heads;

  for (std::int64_t t = 0; t < chunk.tokens; ++t) {
    const float* cos_sin = chunk.cos_sin_rows[t];
    for (std::int64_t h = 0; h < chunk.heads; ++h) {
      const auto* in = reinterpret_cast<const element*>(chunk.input) +
                       t * chunk.input_token_stride + h * chunk.input_head_stride;
      auto* out = reinterpret_cast<element*>(chunk.output) + t * chunk.output_token_stride +
                  h * chunk.output_head_stride;
      prefetch_row<element>(chunk, ahead_token, ahead_head);
      if (++ahead_head == chunk.heads) {
        ahead_head = 0;
        ++ahead_token;
      }
      const std::int64_t done =
          adjacent ? rotate_adjacent<IO, kStream>(cos_sin, chunk.pairs, sign_flip,
                                                  duplicate_pairs, negate_even, in, out)
                   : rotate_half_split<IO, kStream>(cos_sin, chunk.pairs, sign_flip, in, out);
      const auto* in_bytes = reinterpret_cast<const std::byte*>(in);
      auto* out_bytes = reinterpret_cast<std::byte*>(out);
      rotate_row_scalar(chunk, cos_sin, in_bytes, out_bytes, done);
      copy_pass_through(chunk, in_bytes, out_bytes);
    }
  }
  if constexpr (kStream) hwy::FlushStream();
}

template <class IO>
void rotate_chunk_io(const rotation_chunk& chunk) {
  if (can_stream<IO>(chunk)) {
    rotate_chunk_typed<IO, true>(chunk);
  } else {
    rotate_chunk_typed<IO, false>(chunk);
  }
}

void rotate_chunk(const rotation_chunk& chunk) {
  switch (chunk.storage) {
    case dtype::float16: return rotate_chunk_io<float16_io>(chunk);
    case dtype::bfloat16: return rotate_chunk_io<bfloat16_io>(chunk);
    default: return rotate_chunk_io<float32_io>(chunk);
  }
}

#endif  // vector targets

}  // namespace HWY_NAMESPACE
}  // namespace ropecheck::fast::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ropecheck::fast::detail {

HWY_EXPORT(rotate_chunk);

void rotate_chunk_simd(const rotation_chunk& chunk) { HWY_DYNAMIC_DISPATCH(rotate_chunk)(chunk); }

}  // namespace ropecheck::fast::detail
#endif
