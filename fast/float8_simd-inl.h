// float8_simd-inl.h: the Highway load and store of float8_e4m3fn / float8_e5m2 in float32
// vectors, per SIMD target, for the two SIMD rotation files (rotation_simd.cpp, and
// precise_simd.cpp after its round to odd). Bit for bit numeric/fp8.h's decoder and saturating
// RNE encoder (OCP OFP8 v1.0); the arithmetic is described at float8_io. Included once per
// target after <hwy/highway.h> (Highway's "-inl.h" convention: the include guard toggles with
// HWY_TARGET_TOGGLE), it defines ropecheck::fast::detail::HWY_NAMESPACE::float8_io.
// Internal to fast/.

#if defined(ROPECHECK_FAST_FLOAT8_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROPECHECK_FAST_FLOAT8_SIMD_INL_H_
#undef ROPECHECK_FAST_FLOAT8_SIMD_INL_H_
#else
#define ROPECHECK_FAST_FLOAT8_SIMD_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>

#include "numeric/dtype.h"
#include "numeric/fp8.h"

HWY_BEFORE_NAMESPACE();
namespace ropecheck::fast::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;  // the same alias as the including files

// The portable targets (EMU128, SCALAR) run the scalar loops and need no vector codec.
#if HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR

// float8_e4m3fn / float8_e5m2 through binary16, which F16C converts to and from float32 in one
// instruction: every fp8 value is a binary16 value (e5m2 exactly the top byte of one; e4m3fn
// times 2^-8 has the bits of its magnitude shifted left by 7), so both directions are a few
// 16-bit integer operations beside an exact vcvtph2ps / vcvtps2ph — no gather, no table, no
// per-element branch (all selects are lane masks).
//
// Decode, byte b (16-bit lanes, twice the lanes of a float32 vector per operation):
//   e5m2    h = b << 8: the binary16 of the same value (subnormals, ±inf and NaN payloads too;
//           vcvtph2ps makes a signalling NaN quiet, as numeric/fp8.h's decoder does)
//   e4m3fn  h = sign << 8 | magnitude << 7: exponent field E and mantissa M land in binary16's
//           fields, so h is the value × 2^-8 (normals 2^(E−15)·(1+M/8), subnormals M·2^-17);
//           float32 then × 2^8, exact. NaN S.1111.111 gets h's top exponent bit (0x4000): the
//           quiet NaN 0x7FF00000 with its sign, which the × 2^8 passes through unchanged.
// Encode, float32 v (saturating, round to nearest even):
//   a = min(|v|, max)                       saturation (±inf too); NaN passes (x86 minps
//                                           returns its second operand when one is NaN)
//   q = 2^(max(e(a), emin) − p + 1)         the fp8 spacing at a (e = a's binade)
//   r = (a + q·2^23) − q·2^23               float32's own RNE rounds a to a multiple of q,
//                                           exactly, because a < q·2^23 (p ≤ 4)
//   h = binary16(±r) (e4m3fn: ±r·2^-8), exact: r is an fp8 value, h holds its bits
//   e5m2    byte = h >> 8; NaN keeps its sign and leading payload bits as numeric/fp8.h does
//   e4m3fn  byte = sign | min(magnitude bits of h >> 7, 0x7F): finite magnitudes are ≤ 0x7E
//           (448), a NaN's binary16 exponent 11111 clamps to the one NaN 0x7F
template <dtype T>
struct float8_io {
  using element = std::uint8_t;
  static constexpr fp8_detail::format8 f = fp8_detail::format8_of(T);
  static constexpr bool e4m3fn = T == dtype::float8_e4m3fn;

  // Binary16 bits of fp8 bytes widened to 16-bit lanes (decode, above).
  template <class D16>
  static hn::Vec<D16> half_bits(D16 d16, hn::Vec<D16> b) {
    if constexpr (!e4m3fn) {
      return hn::ShiftLeft<8>(b);
    } else {
      const auto sign = hn::And(hn::ShiftLeft<8>(b), hn::Set(d16, 0x8000));
      const auto magnitude = hn::And(hn::ShiftLeft<7>(b), hn::Set(d16, 0x3F80));
      const auto nan = hn::Eq(magnitude, hn::Set(d16, 0x3F80));
      return hn::Or(hn::Or(sign, magnitude), hn::IfThenElseZero(nan, hn::Set(d16, 0x4000)));
    }
  }
  // lanes(d) floats from lanes(d) bytes.
  template <class D>
  static hn::Vec<D> load(D d, const element* p) {
    const hn::Rebind<std::uint16_t, D> d16;
    const auto h = half_bits(d16, hn::PromoteTo(d16, hn::LoadU(hn::Rebind<element, D>(), p)));
    return widen(d, hn::BitCast(hn::Rebind<hwy::float16_t, D>(), h));
  }
  // 2·lanes(d) floats from 2·lanes(d) bytes (element order: v0 the first lanes(d)); the 16-bit
  // work on full vectors.
  template <class D>
  static void load2(D d, const element* p, hn::Vec<D>& v0, hn::Vec<D>& v1) {
    const hn::Repartition<std::uint16_t, D> d16;
    const hn::Half<decltype(d16)> d16h;
    const hn::Rebind<hwy::float16_t, D> dh;
    const auto h = half_bits(d16, hn::PromoteTo(d16, hn::LoadU(hn::Rebind<element, decltype(d16)>(), p)));
    v0 = widen(d, hn::BitCast(dh, hn::LowerHalf(d16h, h)));
    v1 = widen(d, hn::BitCast(dh, hn::UpperHalf(d16h, h)));
  }

  // lanes(d) bytes of lanes(d) floats.
  template <class D>
  static hn::Vec<hn::Rebind<element, D>> encode(D d, hn::Vec<D> v) {
    const hn::Rebind<std::uint16_t, D> d16;
    return to_bytes(d16, hn::BitCast(d16, rounded_half(d, v)));
  }
  // 2·lanes(d) bytes of v0 then v1, packed in one vector (a whole one for streaming stores).
  template <class D>
  static hn::Vec<hn::Rebind<element, hn::Repartition<std::uint16_t, D>>> encode2(D d, hn::Vec<D> v0,
                                                                              hn::Vec<D> v1) {
    const hn::Repartition<std::uint16_t, D> d16;
    const hn::Half<decltype(d16)> d16h;
    const auto h = hn::Combine(d16, hn::BitCast(d16h, rounded_half(d, v1)), hn::BitCast(d16h, rounded_half(d, v0)));
    return to_bytes(d16, h);
  }

 private:
  template <class D>
  static hn::Vec<D> widen(D d, hn::Vec<hn::Rebind<hwy::float16_t, D>> h) {
    const auto v = hn::PromoteTo(d, h);
    if constexpr (e4m3fn) return hn::Mul(v, hn::Set(d, 256.0f));
    return v;
  }
  // The binary16 of v rounded to fp8 (×2^-8 for e4m3fn), sign and NaN kept (encode, above).
  template <class D>
  static hn::Vec<hn::Rebind<hwy::float16_t, D>> rounded_half(D d, hn::Vec<D> v) {
    const hn::RebindToUnsigned<D> du;
    const auto a = hn::Min(hn::Set(d, static_cast<float>(f.max_finite())), hn::Abs(v));
    const auto binade = hn::And(hn::BitCast(du, a), hn::Set(du, 0x7F800000u));
    const auto floor = hn::Set(du, static_cast<std::uint32_t>(f.min_normal_exponent + 127) << 23);
    const auto big = hn::BitCast(
        d, hn::Add(hn::Max(binade, floor), hn::Set(du, static_cast<std::uint32_t>(24 - f.precision_bits) << 23)));
    auto r = hn::Sub(hn::Add(a, big), big);
    if constexpr (e4m3fn) r = hn::Mul(r, hn::Set(d, 1.0f / 256.0f));
    const auto sign = hn::And(hn::BitCast(du, v), hn::Set(du, 0x80000000u));
    return hn::DemoteTo(hn::Rebind<hwy::float16_t, D>(), hn::BitCast(d, hn::Or(hn::BitCast(du, r), sign)));
  }
  template <class D16>
  static hn::Vec<hn::Rebind<element, D16>> to_bytes(D16 d16, hn::Vec<D16> h) {
    hn::Vec<D16> b;
    if constexpr (!e4m3fn) {
      b = hn::ShiftRight<8>(h);
    } else {
      const auto magnitude = hn::Min(hn::ShiftRight<7>(hn::And(h, hn::Set(d16, 0x7FFF))), hn::Set(d16, 0x7F));
      b = hn::Or(magnitude, hn::And(hn::ShiftRight<8>(h), hn::Set(d16, 0x80)));
    }
    // Every lane is < 256, so the saturating demotion is exact.
    return hn::DemoteTo(hn::Rebind<element, D16>(), hn::BitCast(hn::RebindToSigned<D16>(), b));
  }
};

#endif  // vector targets

}  // namespace HWY_NAMESPACE
}  // namespace ropecheck::fast::detail
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
