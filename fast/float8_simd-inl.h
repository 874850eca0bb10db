// float8_simd-inl.h: the Highway load and store of float8_e4m3fn / float8_e5m2 in float32
// vectors, per SIMD target, for the two SIMD rotation files (rotation_simd.cpp, and
// precise_simd.cpp after its round to odd). Bit for bit numeric/fp8.h's saturating RNE encoder
// (OCP OFP8 v1.0); the arithmetic is described at float8_io. Included once per target after
// <hwy/highway.h> (Highway's "-inl.h" convention: the include guard toggles with
// HWY_TARGET_TOGGLE), it defines ropecheck::fast::detail::HWY_NAMESPACE::float8_io.
// Internal to fast/.

#if defined(ROPECHECK_FAST_FLOAT8_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROPECHECK_FAST_FLOAT8_SIMD_INL_H_
#undef ROPECHECK_FAST_FLOAT8_SIMD_INL_H_
#else
#define ROPECHECK_FAST_FLOAT8_SIMD_INL_H_
#endif

#include <array>
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

// float8_e4m3fn / float8_e5m2 (numeric/fp8.h): loads look each byte up in a 256-entry float
// table (a gather), stores round in float32 arithmetic — bit for bit numeric/fp8.h's saturating
// RNE encoder:
//   a = min(|v|, max)                       saturation (±inf too); NaN handled last
//   q = 2^(max(e(a), emin) − p + 1)         the fp8 spacing at a (e = a's binade)
//   r = (a + q·2^23) − q·2^23               float32's own RNE rounds a to a multiple of q,
//                                           exactly, because a < q·2^23 (p ≤ 4)
//   bits: normals by re-biasing r's exponent and keeping p − 1 fraction bits; subnormals are
//   r / 2^(emin − p + 1), an integer 0 … 2^(p−1) − 1; then the sign. NaN: the format's NaN
//   with the leading payload bits (e5m2; e4m3fn has one NaN).
// No streaming: one 8-bit store per lane is too small to stream; store() serves both.
template <dtype T>
struct float8_io {
  using element = std::uint8_t;
  static constexpr fp8_detail::format8 f = fp8_detail::format8_of(T);
  static constexpr int stored_bits = f.precision_bits - 1;

  static const float* table() {
    alignas(64) static constexpr auto values = [] {
      std::array<float, 256> t{};
      for (unsigned b = 0; b < 256; ++b) t[b] = float8_bits_to_float(T, static_cast<std::uint8_t>(b));
      return t;
    }();
    return values.data();
  }
  template <class D>
  static hn::Vec<D> load(D d, const element* p) {
    const hn::RebindToSigned<D> di;
    const auto index = hn::PromoteTo(di, hn::LoadU(hn::Rebind<element, D>(), p));
    return hn::GatherIndex(d, table(), index);
  }
  template <class D>
  static hn::Vec<hn::RebindToUnsigned<D>> bits(D d, hn::Vec<D> v) {
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    const auto raw = hn::BitCast(du, v);
    const auto sign = hn::ShiftRight<24>(hn::And(raw, hn::Set(du, 0x80000000u)));
    const auto a = hn::Min(hn::Abs(v), hn::Set(d, static_cast<float>(f.max_finite())));
    const auto binade = hn::And(hn::BitCast(du, a), hn::Set(du, 0x7F800000u));
    const auto floor = hn::Set(du, static_cast<std::uint32_t>(f.min_normal_exponent + 127) << 23);
    const auto big = hn::BitCast(
        d, hn::Add(hn::Max(binade, floor), hn::Set(du, static_cast<std::uint32_t>(24 - f.precision_bits) << 23)));
    const auto r = hn::Sub(hn::Add(a, big), big);
    const auto normal = hn::Sub(
        hn::ShiftRight<23 - stored_bits>(hn::BitCast(du, r)),
        hn::Set(du, static_cast<std::uint32_t>(127 - (1 - f.min_normal_exponent)) << stored_bits));
    const float subnormal_scale = static_cast<float>(1u << (stored_bits - f.min_normal_exponent));
    const auto subnormal = hn::BitCast(du, hn::ConvertTo(di, hn::Mul(r, hn::Set(d, subnormal_scale))));
    const float smallest_normal = 1.0f / static_cast<float>(1u << -f.min_normal_exponent);
    const auto magnitude =
        hn::IfThenElse(hn::RebindMask(du, hn::Lt(r, hn::Set(d, smallest_normal))), subnormal, normal);
    const auto payload = hn::And(hn::ShiftRight<23 - stored_bits>(raw), hn::Set(du, (1u << stored_bits) - 1));
    const auto nan = hn::Or(hn::Set(du, f.nan_bits), payload);
    return hn::Or(sign, hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, magnitude));
  }
  template <class D>
  static void store(D d, hn::Vec<D> v, element* p) {
    const hn::Rebind<element, D> d8;
    const hn::RebindToSigned<D> di;
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, bits(d, v))), d8, p);
  }
  template <class D>
  static void stream(D d, hn::Vec<D> v, element* p) {
    store(d, v, p);
  }
};

#endif  // vector targets

}  // namespace HWY_NAMESPACE
}  // namespace ropecheck::fast::detail
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
