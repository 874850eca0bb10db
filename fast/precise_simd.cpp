// The Highway precise kernel (`precise_simd`) and its double cos/sin rows: the operation list of
// precise_rotation.h in float64 vectors, compiled per x86 target with FMA (AVX2, AVX-512) and
// picked at run time by HWY_DYNAMIC_DISPATCH like rotation_simd.cpp; other targets run the
// portable code, since an unfused multiply-add would change the bits.
//
// Per step, 2·lanes(double) elements of a half (half-split) or of the row (adjacent): loaded as
// storage elements, widened exactly to double, rotated in double, and rounded once: float32 by
// the double→float conversion (nearest even), float16/bfloat16/fp8 by round-to-odd to float32
// and then the format's nearest-even conversion, fp8 saturating (precise_rotation.h says why
// that is one rounding).
// The per-token rows are arranged once per token for all heads, as in rotation_simd.cpp: s
// negated for the inverse, and for adjacent rows c duplicated per pair and s with the even
// lanes negated, so y = fma(x, c, fl(swapped·s)) is lane for lane the half-split formula.
// Out-of-place outputs larger than the last-level cache are written with non-temporal stores
// (no read-for-ownership; store_policy.h), every dtype, with a store fence per chunk.

// SSSE3/SSE4 lack FMA; leave them out so the baseline (EMU128) takes the portable code.
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/precise_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>

#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "fast/cos_sin_polynomial.h"
#include "fast/precise_rotation.h"
#include "fast/store_policy.h"
// Per target, after highway.h: detail::HWY_NAMESPACE::float8_io (rotation_simd.cpp's fp8 codec).
#include "fast/float8_simd-inl.h"

// Its own namespace: rotation_simd.cpp's per-target names (rotate_chunk, float32_io, ...)
// live in detail::HWY_NAMESPACE.
HWY_BEFORE_NAMESPACE();
namespace ropecheck::fast::detail::precise {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR

void fill_rows(const std::int64_t* positions, std::int64_t count, const double* theta,
               std::int64_t pairs, double attention_factor, double* rows) {
  fill_precise_cos_sin_rows_portable(positions, count, theta, pairs, attention_factor, rows);
}

void rotate_chunk(const rotation_chunk& chunk) { rotate_chunk_precise_scalar(chunk); }

#else

using double_tag = hn::ScalableTag<double>;
using half_float_tag = hn::Rebind<float, double_tag>;     // lanes(double) floats
using float_tag = hn::Repartition<float, double_tag>;     // 2·lanes(double) floats

namespace k = cos_sin_constants;

constexpr double round_shift = 0x1.8p52;  // as precise_scalar.cpp

template <class D, std::size_t n>
HWY_INLINE hn::Vec<D> horner(D d, hn::Vec<D> z, const double (&c)[n]) {
  auto acc = hn::Set(d, c[0]);
  for (std::size_t i = 1; i < n; ++i) acc = hn::MulAdd(z, acc, hn::Set(d, c[i]));
  return acc;
}

// cos and sin (× A) of m·θ for lanes(double) values of θ: precise_scalar.cpp's operations.
HWY_INLINE void cos_sin_vector(double_tag d, hn::Vec<double_tag> m, hn::Vec<double_tag> theta,
                               hn::Vec<double_tag> factor, hn::Vec<double_tag>& cos_out,
                               hn::Vec<double_tag>& sin_out) {
  const hn::RebindToUnsigned<double_tag> du;
  const auto hi = hn::Mul(m, theta);
  const auto lo = hn::MulSub(m, theta, hi);
  const auto shifted = hn::Add(hn::Mul(hi, hn::Set(d, k::two_over_pi)), hn::Set(d, round_shift));
  const auto quarter_turns = hn::Sub(shifted, hn::Set(d, round_shift));
  const auto q = hn::And(hn::BitCast(du, shifted), hn::Set(du, 3u));
  auto r = hn::NegMulAdd(quarter_turns, hn::Set(d, k::half_pi_hi), hi);
  r = hn::NegMulAdd(quarter_turns, hn::Set(d, k::half_pi_lo), r);
  r = hn::Add(r, lo);
  const auto z = hn::Mul(r, r);
  const auto sin_r = hn::MulAdd(hn::Mul(r, z), horner(d, z, k::sin_horner), r);
  const auto cos_r = hn::MulAdd(z, horner(d, z, k::cos_horner), hn::Set(d, 1.0));
  const auto odd = hn::RebindMask(d, hn::TestBit(q, hn::Set(du, 1u)));
  const auto sin_q = hn::IfThenElse(odd, cos_r, sin_r);
  const auto cos_q = hn::IfThenElse(odd, sin_r, cos_r);
  // Quadrant signs: bit 1 of q (sin) and of q + 1 (cos), moved to the sign bit.
  const auto sin_sign = hn::BitCast(d, hn::ShiftLeft<62>(hn::And(q, hn::Set(du, 2u))));
  const auto cos_sign =
      hn::BitCast(d, hn::ShiftLeft<62>(hn::And(hn::Add(q, hn::Set(du, 1u)), hn::Set(du, 2u))));
  cos_out = hn::Mul(hn::Xor(cos_q, cos_sign), factor);
  sin_out = hn::Mul(hn::Xor(sin_q, sin_sign), factor);
}

void fill_rows(const std::int64_t* positions, std::int64_t count, const double* theta,
               std::int64_t pairs, double attention_factor, double* rows) {
  const double_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto factor = hn::Set(d, attention_factor);
  HWY_ALIGN double tail_theta[hn::MaxLanes(d)] = {};
  HWY_ALIGN double tail_cos[hn::MaxLanes(d)];
  HWY_ALIGN double tail_sin[hn::MaxLanes(d)];
  const std::int64_t vector_pairs = pairs - pairs % lanes;
  std::copy(theta + vector_pairs, theta + pairs, tail_theta);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto m = hn::Set(d, static_cast<double>(positions[i]));
    double* row = rows + i * 2 * pairs;
    hn::Vec<double_tag> c, s;
    for (std::int64_t j = 0; j < vector_pairs; j += lanes) {
      cos_sin_vector(d, m, hn::LoadU(d, theta + j), factor, c, s);
      hn::StoreU(c, d, row + j);
      hn::StoreU(s, d, row + pairs + j);
    }
    if (vector_pairs < pairs) {  // the same operations on a zero-padded vector
      cos_sin_vector(d, m, hn::Load(d, tail_theta), factor, c, s);
      hn::Store(c, d, tail_cos);
      hn::Store(s, d, tail_sin);
      std::copy(tail_cos, tail_cos + (pairs - vector_pairs), row + vector_pairs);
      std::copy(tail_sin, tail_sin + (pairs - vector_pairs), row + pairs + vector_pairs);
    }
  }
}

// Round to odd (precise_rotation.h's round_to_odd_float), lanes(double) values, by rounding
// to nearest and stepping back: correct for every double, including float32's subnormals.
// Inlined, though rarely taken: a call in the store loop would clobber every vector register
// (all caller-saved), and the loop would reload its constants from memory on each step.
HWY_INLINE hn::Vec<half_float_tag> round_to_odd_any(double_tag d, hn::Vec<double_tag> y) {
  const half_float_tag df;
  const hn::RebindToUnsigned<half_float_tag> du;
  const hn::Rebind<std::int32_t, double_tag> di;
  const auto nearest = hn::DemoteTo(df, y);
  const auto back = hn::PromoteTo(d, nearest);
  const auto one = hn::Set(d, 1.0);
  // 1 where the nearest float is farther from zero than y (step back toward zero), and 1
  // where anything was dropped (NaN included: it stays NaN).
  const auto toward_zero = hn::DemoteTo(di, hn::IfThenElseZero(hn::Gt(hn::Abs(back), hn::Abs(y)), one));
  const auto inexact = hn::DemoteTo(di, hn::IfThenElseZero(hn::Not(hn::Eq(back, y)), one));
  const auto bits = hn::Sub(hn::BitCast(du, nearest), hn::BitCast(du, toward_zero));
  return hn::BitCast(df, hn::Or(bits, hn::BitCast(du, inexact)));
}

// The same, by the double's bits: keep the 23 fraction bits a float32 has and make the last
// one 1 if any of the 29 below it is set — ((bits & low) + low) carries into that bit exactly
// then — which is truncation toward zero plus the odd bit; the float conversion is then exact.
// Valid where float32 is normal, and beyond FLT_MAX (infinity either way after the narrower
// rounding); NaN stays NaN (a payload in the low bits sets the odd bit). Below 2^-126 the float
// conversion rounds again: harmless for float16 and fp8, whose smallest subnormals (2^-24,
// 2^-9, 2^-16) are far above (every such value stores as ±0 either way), but not for
// bfloat16's subnormals: bfloat16_io checks its float vector (round_to_odd_bfloat16).
HWY_INLINE hn::Vec<half_float_tag> round_to_odd(double_tag d, hn::Vec<double_tag> y) {
  const hn::RebindToUnsigned<double_tag> du;
  const auto low = hn::Set(du, (std::uint64_t{1} << 29) - 1);
  const auto bits = hn::BitCast(du, y);
  const auto sticky = hn::Add(hn::And(bits, low), low);
  return hn::DemoteTo(half_float_tag(), hn::BitCast(d, hn::AndNot(low, hn::Or(bits, sticky))));
}

// Round to odd for bfloat16, 2·lanes(double) values (y0 in the lower half): round_to_odd, and
// where a result is in (0, 2^-126] in magnitude, round_to_odd_any for the whole step. One check
// on the float vector, not one per double vector. It catches every y the bit trick gets wrong:
// |y| < 2^-126 converts to a float in [0, 2^-126]; and a ±0 result comes from |y| ≤ 2^-150,
// (just above, at most: the trick truncates), which bfloat16 (smallest subnormal 2^-133)
// stores as ±0 either way.
HWY_INLINE hn::Vec<float_tag> round_to_odd_bfloat16(double_tag d, hn::Vec<double_tag> y0,
                                                    hn::Vec<double_tag> y1) {
  const float_tag df;
  const auto v = hn::Combine(df, round_to_odd(d, y1), round_to_odd(d, y0));
  const auto magnitude = hn::Abs(v);
  const auto tiny = hn::And(hn::Le(magnitude, hn::Set(df, 0x1p-126f)), hn::Gt(magnitude, hn::Zero(df)));
  if (HWY_UNLIKELY(!hn::AllFalse(df, tiny))) {
    return hn::Combine(df, round_to_odd_any(d, y1), round_to_odd_any(d, y0));
  }
  return v;
}

template <bool kStream, class D, class V>
HWY_INLINE void put(D d, V v, typename hn::TFromD<D>* p) {
  if constexpr (kStream && hn::MaxLanes(D()) * sizeof(hn::TFromD<D>) == 8) {
    // fp8 on AVX2: 8 bytes, which Highway 1.0.3's Stream would write as 16. One movnti.
    const hn::Repartition<std::uint64_t, D> d64;
    _mm_stream_si64(reinterpret_cast<long long*>(p), static_cast<long long>(hn::GetLane(hn::BitCast(d64, v))));
  } else if constexpr (kStream) {
    hn::Stream(v, d, p);
  } else {
    hn::StoreU(v, d, p);
  }
}

// Loads of lanes(double) storage elements as doubles, and the one rounding of 2·lanes(double)
// results into storage, per dtype.
struct float32_io {
  using element = float;
  static hn::Vec<double_tag> load(double_tag d, const element* p) {
    return hn::PromoteTo(d, hn::LoadU(half_float_tag(), p));
  }
  template <bool kStream>
  static void store2(double_tag, hn::Vec<double_tag> y0, hn::Vec<double_tag> y1, element* p) {
    const half_float_tag dh;
    const float_tag df;
    put<kStream>(df, hn::Combine(df, hn::DemoteTo(dh, y1), hn::DemoteTo(dh, y0)), p);
  }
};

struct float16_io {
  using element = hwy::float16_t;
  static hn::Vec<double_tag> load(double_tag d, const element* p) {
    return hn::PromoteTo(d, hn::PromoteTo(half_float_tag(), hn::LoadU(hn::Rebind<element, double_tag>(), p)));
  }
  template <bool kStream>
  static void store2(double_tag d, hn::Vec<double_tag> y0, hn::Vec<double_tag> y1, element* p) {
    const float_tag df;
    const hn::Rebind<element, float_tag> dh;
    const auto odd = hn::Combine(df, round_to_odd(d, y1), round_to_odd(d, y0));
    put<kStream>(dh, hn::DemoteTo(dh, odd), p);  // F16C: nearest even
  }
};

struct bfloat16_io {
  using element = hwy::bfloat16_t;
  static hn::Vec<double_tag> load(double_tag d, const element* p) {
    return hn::PromoteTo(d, hn::PromoteTo(half_float_tag(), hn::LoadU(hn::Rebind<element, double_tag>(), p)));
  }
  // Nearest even from float32 as rotation_simd.cpp's bfloat16_io: add 0x7FFF plus the lowest
  // kept bit, keep the top 16 bits; NaN keeps its leading payload and is made quiet.
  template <bool kStream>
  static void store2(double_tag d, hn::Vec<double_tag> y0, hn::Vec<double_tag> y1, element* p) {
    const float_tag df;
    const hn::RebindToUnsigned<float_tag> du;
    const hn::RebindToSigned<float_tag> di;
    const hn::Rebind<std::uint16_t, float_tag> du16;
    const auto v = round_to_odd_bfloat16(d, y0, y1);
    const auto bits = hn::BitCast(du, v);
    const auto lowest_kept = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
    const auto rounded = hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lowest_kept));
    const auto quiet_nan = hn::Or(bits, hn::Set(du, 0x00400000u));
    const auto kept = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet_nan, rounded);
    // Values are < 2^16 after the shift, so the saturating demotion is exact.
    const auto packed = hn::DemoteTo(du16, hn::BitCast(di, hn::ShiftRight<16>(kept)));
    put<kStream>(du16, packed, reinterpret_cast<std::uint16_t*>(p));
  }
};

// float8_e4m3fn / float8_e5m2: loads by rotation_simd.cpp's decoder (exact in float, then in
// double); stores round to odd in float32 (p = 4 or 3 ≤ 22, and fp8's smallest subnormal,
// 2^-9 or 2^-16, is far above float32's, so values below 2^-126 store as ±0 either way: no
// subnormal check) and then take float8_io's saturating nearest-even encoder — the same bits
// as numeric/fp8.h's encoder applied to the double (precise_rotation.h).
template <dtype T>
struct precise_float8_io {
  using element = std::uint8_t;
  using codec = ::ropecheck::fast::detail::HWY_NAMESPACE::float8_io<T>;
  static hn::Vec<double_tag> load(double_tag d, const element* p) {
    return hn::PromoteTo(d, codec::load(half_float_tag(), p));
  }
  template <bool kStream>
  static void store2(double_tag d, hn::Vec<double_tag> y0, hn::Vec<double_tag> y1, element* p) {
    const float_tag df;
    const auto odd = hn::Combine(df, round_to_odd(d, y1), round_to_odd(d, y0));
    put<kStream>(hn::Rebind<element, float_tag>(), codec::encode(df, odd), p);
  }
};

// An fp8 output scale σ ≠ 1 (rope_call::output_scale): y / σ in double, then the IO's one
// rounding. A division, not a product with 1/σ, which would round twice.
template <class IO>
struct divided_by_scale : IO {
  double scale;
  template <bool kStream>
  void store2(double_tag d, hn::Vec<double_tag> y0, hn::Vec<double_tag> y1,
              typename IO::element* p) const {
    const auto divisor = hn::Set(d, scale);
    IO::template store2<kStream>(d, hn::Div(y0, divisor), hn::Div(y1, divisor), p);
  }
};

// The token's double c and s arranged for the loops (see the banner); returns the pairs the
// vector loops cover. c and s point at the arranged rows: the token's own row as it is for a
// forward half-split call (nothing to arrange: the copy would be a serial pass the memory-bound
// loop does not hide), else at `buffer`.
std::int64_t arrange_row(const double* cos_sin, std::int64_t pairs, bool adjacent, bool inverse,
                         double* buffer, const double*& c_out, const double*& s_out) {
  const std::int64_t step = 2 * static_cast<std::int64_t>(hn::Lanes(double_tag()));
  double* c = buffer;
  double* s = buffer + 2 * pairs;
  c_out = c;
  s_out = s;
  if (!adjacent && !inverse) {
    c_out = cos_sin;
    s_out = cos_sin + pairs;
    return pairs - pairs % step;
  }
  if (!adjacent) {
    for (std::int64_t j = 0; j < pairs; ++j) {
      c[j] = cos_sin[j];
      s[j] = inverse ? -cos_sin[pairs + j] : cos_sin[pairs + j];
    }
    return pairs - pairs % step;
  }
  for (std::int64_t j = 0; j < pairs; ++j) {
    const double sj = inverse ? -cos_sin[pairs + j] : cos_sin[pairs + j];
    c[2 * j] = c[2 * j + 1] = cos_sin[j];
    s[2 * j] = -sj;
    s[2 * j + 1] = sj;
  }
  return (2 * pairs - (2 * pairs) % step) / 2;
}

// y_a = fma(a, c, −fl(b·s)), y_b = fma(b, c, fl(a·s)) over the first vector_pairs pairs.
template <bool kStream, class IO>
HWY_INLINE void rotate_half_split(const IO& io, const double* c, const double* s, std::int64_t vector_pairs,
                                  std::int64_t pairs, const typename IO::element* in,
                                  typename IO::element* out) {
  const double_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::int64_t j = 0; j < vector_pairs; j += 2 * lanes) {
    const auto a0 = IO::load(d, in + j);
    const auto a1 = IO::load(d, in + j + lanes);
    const auto b0 = IO::load(d, in + pairs + j);
    const auto b1 = IO::load(d, in + pairs + j + lanes);
    const auto c0 = hn::LoadU(d, c + j);
    const auto c1 = hn::LoadU(d, c + j + lanes);
    const auto s0 = hn::LoadU(d, s + j);
    const auto s1 = hn::LoadU(d, s + j + lanes);
    io.template store2<kStream>(d, hn::MulSub(a0, c0, hn::Mul(b0, s0)),
                                hn::MulSub(a1, c1, hn::Mul(b1, s1)), out + j);
    io.template store2<kStream>(d, hn::MulAdd(b0, c0, hn::Mul(a0, s0)),
                                hn::MulAdd(b1, c1, hn::Mul(a1, s1)), out + pairs + j);
  }
}

// y = fma(x, c, fl(swapped·s)) with swapped = (b0 a0 b1 a1 ...), over 2·vector_pairs elements.
template <bool kStream, class IO>
HWY_INLINE void rotate_adjacent(const IO& io, const double* c, const double* s, std::int64_t vector_pairs,
                                const typename IO::element* in, typename IO::element* out) {
  const double_tag d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::int64_t e = 0; e < 2 * vector_pairs; e += 2 * lanes) {
    const auto x0 = IO::load(d, in + e);
    const auto x1 = IO::load(d, in + e + lanes);
    const auto y0 = hn::MulAdd(x0, hn::LoadU(d, c + e), hn::Mul(hn::Reverse2(d, x0), hn::LoadU(d, s + e)));
    const auto y1 = hn::MulAdd(x1, hn::LoadU(d, c + e + lanes),
                               hn::Mul(hn::Reverse2(d, x1), hn::LoadU(d, s + e + lanes)));
    io.template store2<kStream>(d, y0, y1, out + e);
  }
}

// Streaming needs every store vector-aligned and no scalar tail.
template <class IO>
bool can_stream(const rotation_chunk& chunk) {
  if (!chunk.allow_streaming) return false;
  const std::int64_t step = 2 * static_cast<std::int64_t>(hn::Lanes(double_tag()));
  const std::int64_t element = static_cast<std::int64_t>(sizeof(typename IO::element));
  const std::int64_t store_bytes = step * element;
  const std::int64_t rotated = chunk.pair == pairing::adjacent ? 2 * chunk.pairs : chunk.pairs;
  return reinterpret_cast<std::uintptr_t>(chunk.output) % static_cast<std::uintptr_t>(store_bytes) == 0 &&
         (chunk.output_token_stride * element) % store_bytes == 0 &&
         (chunk.output_head_stride * element) % store_bytes == 0 && rotated % step == 0;
}

template <bool kStream, class IO>
void rotate_chunk_typed(const rotation_chunk& chunk, const IO& io) {
  using element = typename IO::element;
  const bool adjacent = chunk.pair == pairing::adjacent;
  input_prefetcher prefetcher(chunk, static_cast<std::int64_t>(sizeof(element)));
  auto buffer = hwy::AllocateAligned<double>(static_cast<std::size_t>(4 * chunk.pairs));
  const double* c = nullptr;
  const double* s = nullptr;
  for (std::int64_t t = 0; t < chunk.tokens; ++t) {
    const double* cos_sin = chunk.precise_rows[t];
    const std::int64_t vector_pairs =
        arrange_row(cos_sin, chunk.pairs, adjacent, chunk.inverse, buffer.get(), c, s);
    for (std::int64_t h = 0; h < chunk.heads; ++h) {
      const auto* in = reinterpret_cast<const element*>(chunk.input) +
                       t * chunk.input_token_stride + h * chunk.input_head_stride;
      auto* out = reinterpret_cast<element*>(chunk.output) + t * chunk.output_token_stride +
                  h * chunk.output_head_stride;
      prefetcher.next_row();
      if (adjacent) {
        rotate_adjacent<kStream>(io, c, s, vector_pairs, in, out);
      } else {
        rotate_half_split<kStream>(io, c, s, vector_pairs, chunk.pairs, in, out);
      }
      const auto* in_bytes = reinterpret_cast<const std::byte*>(in);
      auto* out_bytes = reinterpret_cast<std::byte*>(out);
      if (vector_pairs < chunk.pairs) rotate_row_precise(chunk, cos_sin, in_bytes, out_bytes, vector_pairs);
      copy_pass_through(chunk, in_bytes, out_bytes);
    }
  }
  if constexpr (kStream) {
    hwy::FlushStream();  // sfence: the stores are globally visible before the call returns
    count_streamed_chunk();
  }
}

template <class IO>
void rotate_chunk_io(const rotation_chunk& chunk) {
  if (can_stream<IO>(chunk)) {
    rotate_chunk_typed<true>(chunk, IO{});
  } else {
    rotate_chunk_typed<false>(chunk, IO{});
  }
}

// fp8, divided by an output scale σ ≠ 1 in double before the one rounding, as
// precise_rotation.h's loop: the same bits.
template <class IO>
void rotate_chunk_float8(const rotation_chunk& chunk) {
  if (chunk.output_scale == 1.0f) return rotate_chunk_io<IO>(chunk);
  const divided_by_scale<IO> scaled{{}, chunk.output_scale};
  if (can_stream<IO>(chunk)) return rotate_chunk_typed<true>(chunk, scaled);
  rotate_chunk_typed<false>(chunk, scaled);
}

void rotate_chunk(const rotation_chunk& chunk) {
  switch (chunk.storage) {
    case dtype::float16: return rotate_chunk_io<float16_io>(chunk);
    case dtype::bfloat16: return rotate_chunk_io<bfloat16_io>(chunk);
    case dtype::float8_e4m3fn: return rotate_chunk_float8<precise_float8_io<dtype::float8_e4m3fn>>(chunk);
    case dtype::float8_e5m2: return rotate_chunk_float8<precise_float8_io<dtype::float8_e5m2>>(chunk);
    default: return rotate_chunk_io<float32_io>(chunk);
  }
}

#endif  // vector targets

}  // namespace HWY_NAMESPACE
}  // namespace ropecheck::fast::detail::precise
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ropecheck::fast::detail {

namespace precise {
HWY_EXPORT(fill_rows);
HWY_EXPORT(rotate_chunk);
}  // namespace precise

void fill_precise_cos_sin_rows(const std::int64_t* positions, std::int64_t count,
                               const double* theta, std::int64_t pairs, double attention_factor,
                               double* rows) {
  HWY_DYNAMIC_DISPATCH(precise::fill_rows)(positions, count, theta, pairs, attention_factor, rows);
}

void rotate_chunk_precise_simd(const rotation_chunk& chunk) {
  HWY_DYNAMIC_DISPATCH(precise::rotate_chunk)(chunk);
}

}  // namespace ropecheck::fast::detail
#endif
