// storage_element: one element of a kernel storage dtype (float32, float16, bfloat16 bits) read
// as float or written from float with one round-to-nearest-even (numeric/half.h). For scalar
// reference kernels and tests that address raw buffers; memcpy keeps unaligned access defined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numeric/dtype.h"
#include "numeric/half.h"

namespace ropecheck {

inline float load_storage_element(dtype t, const std::byte* p) {
  if (t == dtype::float32) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
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
inline double round_to_storage(dtype t, double v) {
  if (t == dtype::float16) return float16_bits_to_float(double_to_float16_bits(v));
  if (t == dtype::bfloat16) return bfloat16_bits_to_float(double_to_bfloat16_bits(v));
  return static_cast<float>(v);
}

inline void store_storage_element(dtype t, std::byte* p, float v) {
  if (t == dtype::float32) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  const std::uint16_t bits = storage_bits16(t, v);
  std::memcpy(p, &bits, sizeof bits);
}

}  // namespace ropecheck
