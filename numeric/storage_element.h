// storage_element: one element of a kernel storage dtype (float32, float16, bfloat16 bits,
// float8_e4m3fn/float8_e5m2 bits) read as float or written from float with one
// round-to-nearest-even (numeric/half.h, numeric/fp8.h; fp8 saturates at ±max as the kernels
// do). For scalar reference kernels and tests that address raw buffers; memcpy keeps unaligned
// access defined.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numeric/dtype.h"
#include "numeric/fp8.h"
#include "numeric/half.h"

namespace ropecheck {

inline float load_storage_element(dtype t, const std::byte* p) {
  if (t == dtype::float32) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  if (is_float8(t)) return float8_bits_to_float(t, static_cast<std::uint8_t>(*p));
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return t == dtype::float16 ? float16_bits_to_float(bits) : bfloat16_bits_to_float(bits);
}

// Bits of `v` rounded once to a 16-bit storage dtype (float16 or bfloat16).
inline std::uint16_t storage_bits16(dtype t, float v) {
  return t == dtype::float16 ? float_to_float16_bits(v) : float_to_bfloat16_bits(v);
}

// `v` rounded once (RNE) to a storage dtype and read back exactly: the value a kernel that
// stores `v` as `t` leaves in memory. The one rounding to storage every model of a recipe uses.
// fp8 saturates: |v| above the format's max reads back ±max (numeric/fp8.h says why).
inline double round_to_storage(dtype t, double v) {
  if (is_float8(t)) return float8_bits_to_float(t, double_to_float8_bits(t, v));
  if (t == dtype::float16) return float16_bits_to_float(double_to_float16_bits(v));
  if (t == dtype::bfloat16) return bfloat16_bits_to_float(double_to_bfloat16_bits(v));
  return static_cast<float>(v);
}

// `v` rounded toward zero to a storage dtype (a store that drops the low bits): the nearest
// value, stepped one spacing toward zero when it lies farther from zero than `v`. Decrementing
// the magnitude bits of a nonzero finite value gives the next value toward zero in every
// IEEE-style encoding.
inline double truncate_to_storage(dtype t, double v) {
  const double nearest = round_to_storage(t, v);
  if (!(std::fabs(nearest) > std::fabs(v)) || !std::isfinite(v)) return nearest;
  if (t == dtype::float32) return std::nextafter(static_cast<float>(nearest), 0.0f);
  if (is_float8(t)) {
    const std::uint8_t bits = double_to_float8_bits(t, nearest);
    return float8_bits_to_float(t, static_cast<std::uint8_t>(bits - 1));
  }
  const std::uint16_t bits = storage_bits16(t, static_cast<float>(nearest));
  const std::uint16_t down = static_cast<std::uint16_t>(bits - 1);
  return t == dtype::float16 ? float16_bits_to_float(down) : bfloat16_bits_to_float(down);
}

// `v` (already in dtype t) as a store that flushes subnormal results writes it: ±0 below the
// smallest normal 2^emin.
inline double flush_subnormal(dtype t, double v) {
  return std::fabs(v) < std::ldexp(1.0, format_of(t).min_normal_exponent) ? std::copysign(0.0, v) : v;
}

inline void store_storage_element(dtype t, std::byte* p, float v) {
  if (t == dtype::float32) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  if (is_float8(t)) {
    *p = static_cast<std::byte>(float_to_float8_bits(t, v));
    return;
  }
  const std::uint16_t bits = storage_bits16(t, v);
  std::memcpy(p, &bits, sizeof bits);
}

}  // namespace ropecheck
