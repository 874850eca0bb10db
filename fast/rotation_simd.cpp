// The SIMD rotation loop: Google Highway, compiled once per x86 target with FMA (AVX2,
// AVX-512) and picked at run time by HWY_DYNAMIC_DISPATCH; other targets run the scalar loop,
// because an unfused multiply-add would change the rounding (rotation.h).
//
// Once per token the cos/sin row is prepared for the loops (prepare_row): the inverse's sign
// folded into s, and for adjacent rows c and s duplicated per pair with the even lanes of s
// negated. Half-split rows are two contiguous halves: vectors of a from x[j..], of b from
// x[j+d/2..]. Adjacent rows interleave (a0 b0 a1 b1 ...): x's pairs are swapped (b0 a0 ...)
// so y = fma(x, c, fl(swapped·s)) is lane for lane the half-split formula (bfloat16 instead
// splits each step into its a and b lanes: bfloat16_even_odd). Conversions: float16 by F16C
// (vcvtps2ph, immediate rounding = nearest even); bfloat16 by our own round-to-nearest-even,
// as Highway 1.0.3's DemoteTo truncates; fp8 through binary16 and F16C, see float8_io.
// Out-of-place outputs larger than the last-level cache use non-temporal stores, every dtype
// (store_policy.h): the output is not re-read here, and skipping the read-for-ownership of
// each destination line saves a third of the traffic. A store fence ends every such chunk.

// SSSE3/SSE4 lack FMA; leave them out so the baseline (EMU128) takes the scalar loop.
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/rotation_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <array>
#include <type_traits>

#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "fast/rotation.h"
#include "fast/store_policy.h"
// Per target, after highway.h: float8_io in detail::HWY_NAMESPACE.
#include "fast/float8_simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ropecheck::fast::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR

void rotate_chunk(const rotation_chunk& chunk) { rotate_chunk_scalar(chunk); }

void float8_decode(dtype storage, const std::uint8_t* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = float8_bits_to_float(storage, in[i]);
}
void float8_encode(dtype storage, const float* in, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_float8_bits(storage, in[i]);
}

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
  static hn::Vec<hn::RebindToUnsigned<D>> rounded_bits(D, hn::Vec<D> v) {
    const hn::RebindToUnsigned<D> du;
    const auto bits = hn::BitCast(du, v);
    const auto lowest_kept = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
    const auto rounded = hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lowest_kept));
    const auto quiet_nan = hn::Or(bits, hn::Set(du, 0x00400000u));
    return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet_nan, rounded);
  }
  template <class D>
  static hn::Vec<hn::Rebind<std::uint16_t, D>> round(D d, hn::Vec<D> v) {
    const hn::RebindToSigned<D> di;
    // Values are < 2^16 after the shift, so the saturating demotion is exact.
    return hn::DemoteTo(hn::Rebind<std::uint16_t, D>(),
                        hn::BitCast(di, hn::ShiftRight<16>(rounded_bits(d, v))));
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

// float8_e4m3fn / float8_e5m2: float8_io, shared with precise_simd.cpp (fast/float8_simd-inl.h),
// through float8_pairs below.

template <class IO, bool kStream, class D>
HWY_INLINE void put(D d, hn::Vec<D> v, typename IO::element* p) {
  if constexpr (kStream) {
    IO::stream(d, v, p);
  } else {
    IO::store(d, v, p);
  }
}

// Two vectors of consecutive elements (2·lanes) in element order: for float32 and float16, and
// for bfloat16 where the block order below is not available.
template <class IO>
struct in_element_order {
  using element = typename IO::element;
  static constexpr bool splits_pairs = false;  // adjacent rows: v0, v1 hold whole pairs
  template <class D>
  static std::int64_t store_bytes(D d) {  // one store: a vector of elements
    return static_cast<std::int64_t>(hn::Lanes(d) * sizeof(element));
  }
  template <class D>
  static void load2(D d, const element* p, hn::Vec<D>& v0, hn::Vec<D>& v1) {
    v0 = IO::load(d, p);
    v1 = IO::load(d, p + hn::Lanes(d));
  }
  template <bool kStream, class D>
  static void put2(D d, hn::Vec<D> v0, hn::Vec<D> v1, element* p) {
    put<IO, kStream>(d, v0, p);
    put<IO, kStream>(d, v1, p + hn::Lanes(d));
  }
  // cos/sin vectors (n0, n1) in element order, rearranged to match load2's lanes.
  template <class D>
  static void arrange(D, hn::Vec<D> n0, hn::Vec<D> n1, hn::Vec<D>& p0, hn::Vec<D>& p1) {
    p0 = n0;
    p1 = n1;
  }
};

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// bfloat16 on AVX2/AVX-512, 2·lanes elements per step in "even/odd order", without a single
// shuffle: one full-width load read as uint32 lanes holds element 2i in the low and element
// 2i+1 in the high half of lane i, and bfloat16 is the top half of a float32, so v0 = lane << 16
// is the even elements and v1 = lane & 0xFFFF0000 the odd ones. The store rounds both and merges
// them back into one vector with one 16-bit blend (v0's rounded top half >> 16, v1's in place). Adjacent rows then
// need neither the pair swap nor duplicated cos/sin: the even elements are the pairs' a and the
// odd ones their b (splits_pairs). Half-split rows get their cos/sin split into even and odd
// entries once per token (arrange). The block-order IO this replaces spent three shuffles and
// a NaN test per step, which kept 16-bit rows on AVX2 compute-bound below memory speed.
struct bfloat16_even_odd {
  using element = hwy::bfloat16_t;
  static constexpr bool splits_pairs = true;
  template <class D>
  static std::int64_t store_bytes(D d) {  // one store: two vectors' worth of elements
    return static_cast<std::int64_t>(2 * hn::Lanes(d) * sizeof(element));
  }
  template <class D>
  static void load2(D d, const element* p, hn::Vec<D>& v0, hn::Vec<D>& v1) {
    const hn::RebindToUnsigned<D> du;
    const auto raw = hn::LoadU(du, reinterpret_cast<const std::uint32_t*>(p));
    v0 = hn::BitCast(d, hn::ShiftLeft<16>(raw));
    v1 = hn::BitCast(d, hn::And(raw, hn::Set(du, 0xFFFF0000u)));
  }
  template <bool kStream, class D>
  static void put2(D d, hn::Vec<D> v0, hn::Vec<D> v1, element* p) {
    const hn::Repartition<std::uint16_t, D> du16;
    // Even 16-bit lanes from v0's rounded top half (shifted down), odd ones from v1's: one blend.
    const auto merged = hn::OddEven(hn::BitCast(du16, rounded_bits(d, v1)),
                                    hn::BitCast(du16, hn::ShiftRight<16>(rounded_bits(d, v0))));
    auto* out = reinterpret_cast<std::uint16_t*>(p);
    if constexpr (kStream) {
      hn::Stream(merged, du16, out);
    } else {
      hn::StoreU(merged, du16, out);
    }
  }
  // load2's v0 holds the even elements of the 2·lanes, v1 the odd ones.
  template <class D>
  static void arrange(D d, hn::Vec<D> n0, hn::Vec<D> n1, hn::Vec<D>& p0, hn::Vec<D>& p1) {
    p0 = hn::ConcatEven(d, n1, n0);
    p1 = hn::ConcatOdd(d, n1, n0);
  }

 private:
  // Round to nearest even as bfloat16_io::rounded_bits (top 16 bits of the result), without
  // its NaN case: every NaN the rotation produces is quiet with its low 16 bits zero (x86
  // arithmetic returns the default NaN 0xFFC00000 or an operand's NaN made quiet, and the
  // operands are bfloat16 inputs widened with zero low bits or finite cos/sin), for which
  // bits + 0x7FFF + lowest kept bit carries nothing into the top half: the same bits as the
  // NaN case. fast_kernels_test checks NaN payloads bit for bit against the scalar kernel.
  template <class D>
  static hn::Vec<hn::RebindToUnsigned<D>> rounded_bits(D, hn::Vec<D> v) {
    const hn::RebindToUnsigned<D> du;
    const auto bits = hn::BitCast(du, v);
    const auto lowest_kept = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
    return hn::Add(hn::Add(bits, hn::Set(du, 0x7FFFu)), lowest_kept);
  }
};
template <class IO>
struct pair_io_of { using type = in_element_order<IO>; };
template <>
struct pair_io_of<bfloat16_io> { using type = bfloat16_even_odd; };
#else
template <class IO>
struct pair_io_of { using type = in_element_order<IO>; };
#endif

// fp8, 2·lanes elements per step decoded and encoded together (float8_io's load2, encode2), so
// one store writes all their bytes: 16 on AVX2, 32 on AVX-512, whole vectors, which streaming
// stores need (Highway 1.0.3's Stream writes 16 bytes even from a half vector).
template <dtype T>
struct float8_pairs {
  using codec = float8_io<T>;
  using element = std::uint8_t;
  static constexpr bool splits_pairs = false;
  template <class D>
  static std::int64_t store_bytes(D d) {
    return static_cast<std::int64_t>(2 * hn::Lanes(d));
  }
  template <class D>
  static void load2(D d, const element* p, hn::Vec<D>& v0, hn::Vec<D>& v1) {
    codec::load2(d, p, v0, v1);
  }
  template <bool kStream, class D>
  static void put2(D d, hn::Vec<D> v0, hn::Vec<D> v1, element* p) {
    const hn::Rebind<element, hn::Repartition<std::uint16_t, D>> d8;
    if constexpr (kStream) {
      hn::Stream(codec::encode2(d, v0, v1), d8, p);
    } else {
      hn::StoreU(codec::encode2(d, v0, v1), d8, p);
    }
  }
  template <class D>
  static void arrange(D, hn::Vec<D> n0, hn::Vec<D> n1, hn::Vec<D>& p0, hn::Vec<D>& p1) {
    p0 = n0;
    p1 = n1;
  }
};
template <dtype T>
struct pair_io_of<float8_io<T>> { using type = float8_pairs<T>; };

// fp8 with an output scale σ ≠ 1 (rope_call::output_scale): each rotated output is divided by σ
// in float32 before its store, the operation of the scalar loop (rotation.h) and of vLLM's
// `a / scale`, so the same bits. A division, not a product with 1/σ, which would round twice.
template <class PairIO>
struct divided_by_scale : PairIO {
  float scale;
  template <bool kStream, class D>
  void put2(D d, hn::Vec<D> v0, hn::Vec<D> v1, typename PairIO::element* p) const {
    const auto divisor = hn::Set(d, scale);
    PairIO::template put2<kStream>(d, hn::Div(v0, divisor), hn::Div(v1, divisor), p);
  }
};

// The token's cos/sin as the rotation loops read them, built once per token and shared by all
// its heads. Half-split: c and s (s negated for the inverse: exact), in the lane order of the
// pair IO. Adjacent: c duplicated per pair (c0 c0 c1 c1 ...) and s with the even lanes negated
// (−s0 s0 −s1 s1 ..., all negated again for the inverse), likewise arranged; or, for a pair
// IO that splits pairs, c and s as for half-split. Only whole steps
// of 2·lanes elements are prepared; the rest of the row is rotated by the scalar tail.
struct prepared_row {
  const float* c;
  const float* s;
  std::int64_t vector_pairs;  // pairs covered by the vector loops
};

template <class PairIO, class Indices>
HWY_INLINE prepared_row prepare_row(const float* cos_sin, std::int64_t pairs, bool adjacent,
                                    bool inverse, hn::Vec<float_tag> sign_flip,
                                    const Indices& duplicate_pairs, hn::Vec<float_tag> negate_even,
                                    float* buffer) {
  const float_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  if (!adjacent && !inverse && !PairIO::splits_pairs) {
    // Forward half-split in element order: the token's row is already what the loop reads, so
    // it is read as it is rather than copied once per token (precise_simd.cpp's arrange_row
    // does the same).
    return {cos_sin, cos_sin + pairs, pairs - pairs % (2 * lanes)};
  }
  float* c = buffer;
  float* s = buffer + 2 * pairs;
  hn::Vec<float_tag> p0, p1;
  if (!adjacent) {
    std::int64_t j = 0;
    for (; j + 2 * lanes <= pairs; j += 2 * lanes) {
      PairIO::arrange(d, hn::LoadU(d, cos_sin + j), hn::LoadU(d, cos_sin + j + lanes), p0, p1);
      hn::StoreU(p0, d, c + j);
      hn::StoreU(p1, d, c + j + lanes);
      PairIO::arrange(d, hn::Xor(hn::LoadU(d, cos_sin + pairs + j), sign_flip),
                      hn::Xor(hn::LoadU(d, cos_sin + pairs + j + lanes), sign_flip), p0, p1);
      hn::StoreU(p0, d, s + j);
      hn::StoreU(p1, d, s + j + lanes);
    }
    return {c, s, j};
  }
  if constexpr (PairIO::splits_pairs) {  // adjacent, a and b in separate vectors: c, s as is
    std::int64_t j = 0;
    for (; j + lanes <= pairs; j += lanes) {
      hn::StoreU(hn::LoadU(d, cos_sin + j), d, c + j);
      hn::StoreU(hn::Xor(hn::LoadU(d, cos_sin + pairs + j), sign_flip), d, s + j);
    }
    return {c, s, j};
  }
  const hn::Half<float_tag> dh;
  const auto s_signs = hn::Xor(negate_even, sign_flip);
  auto duplicate = [&](const float* from) {
    return hn::TableLookupLanes(hn::ZeroExtendVector(d, hn::LoadU(dh, from)), duplicate_pairs);
  };
  std::int64_t j = 0;  // pairs; elements 2j .. 2j + 2·lanes
  for (; j + lanes <= pairs; j += lanes) {
    const std::int64_t half_lanes = lanes / 2;
    PairIO::arrange(d, duplicate(cos_sin + j), duplicate(cos_sin + j + half_lanes), p0, p1);
    hn::StoreU(p0, d, c + 2 * j);
    hn::StoreU(p1, d, c + 2 * j + lanes);
    PairIO::arrange(d, hn::Xor(duplicate(cos_sin + pairs + j), s_signs),
                    hn::Xor(duplicate(cos_sin + pairs + j + half_lanes), s_signs), p0, p1);
    hn::StoreU(p0, d, s + 2 * j);
    hn::StoreU(p1, d, s + 2 * j + lanes);
  }
  return {c, s, j};
}

// y_a = fma(a, c, −fl(b·s)), y_b = fma(b, c, fl(a·s)) over the prepared pairs.
template <bool kStream, class PairIO>
HWY_INLINE void rotate_half_split(const PairIO& io, const prepared_row& row, std::int64_t pairs,
                                  const typename PairIO::element* in,
                                  typename PairIO::element* out) {
  const float_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  // Two vectors per half per step: with 128-dim float32 rows each output cache line is then
  // completed by back-to-back stores, which keeps non-temporal write combining effective.
  for (std::int64_t j = 0; j < row.vector_pairs; j += 2 * lanes) {
    hn::Vec<float_tag> a0, a1, b0, b1;
    PairIO::load2(d, in + j, a0, a1);
    PairIO::load2(d, in + pairs + j, b0, b1);
    const auto c0 = hn::LoadU(d, row.c + j);
    const auto c1 = hn::LoadU(d, row.c + j + lanes);
    const auto s0 = hn::LoadU(d, row.s + j);
    const auto s1 = hn::LoadU(d, row.s + j + lanes);
    io.template put2<kStream>(d, hn::MulSub(a0, c0, hn::Mul(b0, s0)),
                              hn::MulSub(a1, c1, hn::Mul(b1, s1)), out + j);
    io.template put2<kStream>(d, hn::MulAdd(b0, c0, hn::Mul(a0, s0)),
                              hn::MulAdd(b1, c1, hn::Mul(a1, s1)), out + pairs + j);
  }
}

// y = fma(x, c, fl(swapped·s)) with swapped = (b0 a0 b1 a1 ...): lane for lane the
// half-split formula (the prepared s carries the signs). A pair IO that splits pairs loads
// the a and b of lanes pairs into two vectors and runs the half-split formula as written.
template <bool kStream, class PairIO>
HWY_INLINE void rotate_adjacent(const PairIO& io, const prepared_row& row,
                                const typename PairIO::element* in, typename PairIO::element* out) {
  const float_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  if constexpr (PairIO::splits_pairs) {
    for (std::int64_t j = 0; j < row.vector_pairs; j += lanes) {
      hn::Vec<float_tag> a, b;
      PairIO::load2(d, in + 2 * j, a, b);
      const auto c = hn::LoadU(d, row.c + j);
      const auto s = hn::LoadU(d, row.s + j);
      io.template put2<kStream>(d, hn::MulSub(a, c, hn::Mul(b, s)),
                                hn::MulAdd(b, c, hn::Mul(a, s)), out + 2 * j);
    }
    return;
  }
  for (std::int64_t e = 0; e < 2 * row.vector_pairs; e += 2 * lanes) {
    hn::Vec<float_tag> x0, x1;
    PairIO::load2(d, in + e, x0, x1);
    const auto y0 = hn::MulAdd(x0, hn::LoadU(d, row.c + e), hn::Mul(hn::Reverse2(d, x0), hn::LoadU(d, row.s + e)));
    const auto y1 = hn::MulAdd(x1, hn::LoadU(d, row.c + e + lanes),
                               hn::Mul(hn::Reverse2(d, x1), hn::LoadU(d, row.s + e + lanes)));
    io.template put2<kStream>(d, y0, y1, out + e);
  }
}

// Streaming needs every store vector-aligned: aligned rows and no scalar tail (the vector
// loops cover 2·lanes elements per step).
template <class IO>
bool can_stream(const rotation_chunk& chunk) {
  if (!chunk.allow_streaming) return false;
  const float_tag d;
  const std::int64_t step_elements = 2 * static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t element = static_cast<std::int64_t>(sizeof(typename IO::element));
  const std::int64_t store_bytes = pair_io_of<IO>::type::store_bytes(d);
  const std::int64_t rotated = chunk.pair == pairing::adjacent ? 2 * chunk.pairs : chunk.pairs;
  return reinterpret_cast<std::uintptr_t>(chunk.output) % static_cast<std::uintptr_t>(store_bytes) == 0 &&
         (chunk.output_token_stride * element) % store_bytes == 0 &&
         (chunk.output_head_stride * element) % store_bytes == 0 && rotated % step_elements == 0;
}

template <class IO, bool kStream, class PairIO>
void rotate_chunk_typed(const rotation_chunk& chunk, const PairIO& io) {
  using element = typename IO::element;
  const float_tag d;
  const hn::RebindToUnsigned<float_tag> du;
  const auto sign_flip = hn::BitCast(d, hn::Set(du, chunk.inverse ? 0x80000000u : 0u));
  // Lane tables, built at compile time rather than per call: 0 0 1 1 2 2 ..., and the sign
  // bit in the even lanes.
  static constexpr auto duplicate = [] {
    std::array<std::int32_t, hn::MaxLanes(float_tag())> lanes{};
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i] = static_cast<std::int32_t>(i / 2);
    return lanes;
  }();
  static constexpr auto even_sign = [] {
    std::array<std::uint32_t, hn::MaxLanes(float_tag())> lanes{};
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i] = i % 2 == 0 ? 0x80000000u : 0u;
    return lanes;
  }();
  const auto duplicate_pairs = hn::SetTableIndices(d, duplicate.data());
  const auto negate_even = hn::BitCast(d, hn::LoadU(du, even_sign.data()));
  const bool adjacent = chunk.pair == pairing::adjacent;

  input_prefetcher prefetcher(chunk, static_cast<std::int64_t>(sizeof(element)));

  using pair_io = PairIO;
  // The prepared row: on the stack up to 256 pairs (rotary_dim 512), which a call on a few
  // cached tokens would otherwise pay a malloc for.
  constexpr std::int64_t stack_pairs = 256;
  HWY_ALIGN float stack_buffer[4 * stack_pairs];
  hwy::AlignedFreeUniquePtr<float[]> heap_buffer;
  if (chunk.pairs > stack_pairs) {
    heap_buffer = hwy::AllocateAligned<float>(static_cast<std::size_t>(4 * chunk.pairs));
  }
  float* buffer = heap_buffer ? heap_buffer.get() : stack_buffer;
  // Rows the vector loops cover whole, with nothing to prefetch or copy around them, take a
  // tight head loop: at cache-resident sizes (a decode step's few tokens) the per-row
  // bookkeeping otherwise costs about as much as the rotation itself.
  // (In place, pass-through dims are left alone unless an output scale rescales them.)
  const bool pass_through =
      chunk.head_dim != 2 * chunk.pairs && (!chunk.in_place || chunk.output_scale != 1.0f);
  for (std::int64_t t = 0; t < chunk.tokens; ++t) {
    const float* cos_sin = chunk.cos_sin_rows[t];
    const prepared_row row = prepare_row<pair_io>(cos_sin, chunk.pairs, adjacent, chunk.inverse,
                                                  sign_flip, duplicate_pairs, negate_even, buffer);
    const auto* in = reinterpret_cast<const element*>(chunk.input) + t * chunk.input_token_stride;
    auto* out = reinterpret_cast<element*>(chunk.output) + t * chunk.output_token_stride;
    if (!chunk.prefetch && !pass_through && row.vector_pairs == chunk.pairs) {
      for (std::int64_t h = 0; h < chunk.heads; ++h) {
        if (adjacent) {
          rotate_adjacent<kStream>(io, row, in, out);
        } else {
          rotate_half_split<kStream>(io, row, chunk.pairs, in, out);
        }
        in += chunk.input_head_stride;
        out += chunk.output_head_stride;
      }
      continue;
    }
    for (std::int64_t h = 0; h < chunk.heads; ++h) {
      prefetcher.next_row();
      if (adjacent) {
        rotate_adjacent<kStream>(io, row, in, out);
      } else {
        rotate_half_split<kStream>(io, row, chunk.pairs, in, out);
      }
      const std::int64_t done = row.vector_pairs;
      const auto* in_bytes = reinterpret_cast<const std::byte*>(in);
      auto* out_bytes = reinterpret_cast<std::byte*>(out);
      if (done < chunk.pairs) rotate_row_scalar(chunk, cos_sin, in_bytes, out_bytes, done);
      copy_pass_through(chunk, in_bytes, out_bytes);
      in += chunk.input_head_stride;
      out += chunk.output_head_stride;
    }
  }
  if constexpr (kStream) {
    hwy::FlushStream();  // sfence: the stores are globally visible before the call returns
    count_streamed_chunk();
  }
}

template <class IO>
void rotate_chunk_io(const rotation_chunk& chunk) {
  using pair_io = typename pair_io_of<IO>::type;
  if constexpr (std::is_same_v<typename IO::element, std::uint8_t>) {  // fp8 with a scale σ
    if (chunk.output_scale != 1.0f) {
      const divided_by_scale<pair_io> scaled{{}, chunk.output_scale};
      if (can_stream<IO>(chunk)) return rotate_chunk_typed<IO, true>(chunk, scaled);
      return rotate_chunk_typed<IO, false>(chunk, scaled);
    }
  }
  if (can_stream<IO>(chunk)) {
    rotate_chunk_typed<IO, true>(chunk, pair_io{});
  } else {
    rotate_chunk_typed<IO, false>(chunk, pair_io{});
  }
}

template <dtype T>
void float8_codec(const std::uint8_t* in8, float* out32, const float* in32, std::uint8_t* out8, std::size_t n) {
  const float_tag d;
  const std::size_t step = 2 * hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += step) {
    hn::Vec<float_tag> v0, v1;
    if (in8 != nullptr) {
      float8_pairs<T>::load2(d, in8 + i, v0, v1);
      hn::StoreU(v0, d, out32 + i);
      hn::StoreU(v1, d, out32 + i + hn::Lanes(d));
    } else {
      float8_pairs<T>::template put2<false>(d, hn::LoadU(d, in32 + i), hn::LoadU(d, in32 + i + hn::Lanes(d)),
                                            out8 + i);
    }
  }
}
void float8_decode(dtype storage, const std::uint8_t* in, float* out, std::size_t n) {
  if (storage == dtype::float8_e4m3fn) return float8_codec<dtype::float8_e4m3fn>(in, out, nullptr, nullptr, n);
  float8_codec<dtype::float8_e5m2>(in, out, nullptr, nullptr, n);
}
void float8_encode(dtype storage, const float* in, std::uint8_t* out, std::size_t n) {
  if (storage == dtype::float8_e4m3fn) return float8_codec<dtype::float8_e4m3fn>(nullptr, nullptr, in, out, n);
  float8_codec<dtype::float8_e5m2>(nullptr, nullptr, in, out, n);
}

void rotate_chunk(const rotation_chunk& chunk) {
  switch (chunk.storage) {
    case dtype::float16: return rotate_chunk_io<float16_io>(chunk);
    case dtype::bfloat16: return rotate_chunk_io<bfloat16_io>(chunk);
    case dtype::float8_e4m3fn: return rotate_chunk_io<float8_io<dtype::float8_e4m3fn>>(chunk);
    case dtype::float8_e5m2: return rotate_chunk_io<float8_io<dtype::float8_e5m2>>(chunk);
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
HWY_EXPORT(float8_decode);
HWY_EXPORT(float8_encode);

void rotate_chunk_simd(const rotation_chunk& chunk) {
  HWY_DYNAMIC_DISPATCH(rotate_chunk)(chunk);
}

void float8_decode_simd(dtype storage, const std::uint8_t* in, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(float8_decode)(storage, in, out, n);
}
void float8_encode_simd(dtype storage, const float* in, std::uint8_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(float8_encode)(storage, in, out, n);
}

}  // namespace ropecheck::fast::detail
#endif
