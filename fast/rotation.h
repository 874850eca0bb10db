// rotation: the inner loop shared by every fast kernel — rotate a run of tokens' rows of one
// tensor by already computed float32 cos/sin rows. Internal to fast/.
//
// Operations per pair (a, b) with float32 c, s (s negated for the inverse direction, exact):
//   a, b  <- load, widened exactly to float32 for float16/bfloat16 storage
//   y_a = fma(a, c, −fl(b·s))      one rounded product, then one fused multiply-add
//   y_b = fma(b, c,  fl(a·s))
//   fp8 with an output scale σ ≠ 1 (rope_call.h): y <- fl(y / σ), one more float32 rounding
//   (exact for a power-of-two σ unless y/σ is float32-subnormal), as vLLM's a / scale
//   store y rounded once to the storage dtype (RNE); float32 stores it as is; float8_e4m3fn
//   and float8_e5m2 saturate at ±max (448, 57344) as vLLM's and TransformerEngine's satfinite
//   casts do (numeric/fp8.h), so |y| > max stores ±max, never NaN or ±inf.
// The same sequence in every path (scalar, AVX2, AVX-512; half-split and adjacent), so all
// kernels agree bit for bit. Error of y_a, first order, with u = 2^-24 and φ the angle:
// cos/sin rounding |a|·δc + |b|·δs with δ ≤ u·min(|v|, 1/2) (half an ulp, and |c|, |s| < 1),
// the one rounded product ≤ u·|b·s|, the FMA's single rounding ≤ u·|y_a|. Maximised over
// (a, b) of norm r and over φ this is < 2.5·u·r, approached as a → 0, |sin φ| → 1⁻ (y_b
// likewise; docs/error-bounds.md §2); the angle's own error adds ≤ ~0.05·u·r at m = 2^24
// (cos_sin.h). Without FMA the a·c product adds u·|a·c| more (3·u·r), which is why every path
// fuses. With an attention factor A the bound is G·u·A·r with G in [2.5, 3) depending on where
// A·cos and A·sin fall between powers of two (docs/error-bounds.md §16), not 2.5·u·max(1, A)·r.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numeric/dtype.h"
#include "numeric/fp8.h"
#include "numeric/half.h"
#include "spec/rope_spec.h"
#include "spec/pair_index.h"

namespace ropecheck::fast::detail {

// A run of tokens of one tensor. Strides in elements; row pointers per token are computed by
// the driver, cos_sin_rows[i] is token i's row (pairs cos values, then pairs sin values).
struct rotation_chunk {
  dtype storage = dtype::float32;
  pairing pair = pairing::half_split;
  bool inverse = false;
  bool in_place = false;
  bool allow_streaming = false;  // non-temporal stores, if rows are vector aligned
  // Software prefetch of the input rows about 4 KiB ahead, for tensors past the caches; it
  // may run past this chunk into the tensor's next prefetch_tokens − tokens tokens, so the
  // hardware keeps streaming across the driver's token blocks.
  bool prefetch = false;
  std::int64_t tokens = 0;
  std::int64_t prefetch_tokens = 0;  // >= tokens: rows of tokens [0, prefetch_tokens) exist
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t pairs = 0;  // rotary_dim / 2
  float output_scale = 1.0f;  // σ: outputs stored as round(y / σ) (fp8 only, rope_call.h)
  const float* const* cos_sin_rows = nullptr;
  const double* const* precise_rows = nullptr;  // the precise kernels' rows (precise_rotation.h)
  const std::byte* input = nullptr;  // token 0, head 0
  std::byte* output = nullptr;
  std::int64_t input_token_stride = 0;
  std::int64_t input_head_stride = 0;
  std::int64_t output_token_stride = 0;
  std::int64_t output_head_stride = 0;
};

void rotate_chunk_scalar(const rotation_chunk& chunk);
void rotate_chunk_simd(const rotation_chunk& chunk);  // AVX2/AVX-512 with runtime dispatch

// The SIMD loops' fp8 codec on its own (float8_simd-inl.h's float8_io, at the dispatched
// target; numeric/fp8.h's functions on the portable targets), for its exhaustive test. `n`
// must be a multiple of 64.
void float8_decode_simd(dtype storage, const std::uint8_t* in, float* out, std::size_t n);
void float8_encode_simd(dtype storage, const float* in, std::uint8_t* out, std::size_t n);

inline float load_element(dtype storage, const std::byte* row, std::int64_t i) {
  // Every 8-bit float (numeric/dtype.h's catalog), so that a new one is never read as float32.
  if (is_float8(storage)) return float8_bits_to_float(storage, reinterpret_cast<const std::uint8_t*>(row)[i]);
  switch (storage) {
    case dtype::float16:
      return float16_bits_to_float(reinterpret_cast<const std::uint16_t*>(row)[i]);
    case dtype::bfloat16:
      return bfloat16_bits_to_float(reinterpret_cast<const std::uint16_t*>(row)[i]);
    default:
      return reinterpret_cast<const float*>(row)[i];
  }
}

inline void store_element(dtype storage, std::byte* row, std::int64_t i, float v) {
  if (is_float8(storage)) {
    reinterpret_cast<std::uint8_t*>(row)[i] = float_to_float8_bits(storage, v);
    return;
  }
  switch (storage) {
    case dtype::float16:
      reinterpret_cast<std::uint16_t*>(row)[i] = float_to_float16_bits(v);
      break;
    case dtype::bfloat16:
      reinterpret_cast<std::uint16_t*>(row)[i] = float_to_bfloat16_bits(v);
      break;
    default:
      reinterpret_cast<float*>(row)[i] = v;
  }
}

// Pairs [first_pair, pairs) of one row: the scalar loop, and the SIMD loops' tail.
inline void rotate_row_scalar(const rotation_chunk& chunk, const float* cos_sin,
                              const std::byte* in, std::byte* out, std::int64_t first_pair) {
  const std::int64_t pairs = chunk.pairs;
  for (std::int64_t j = first_pair; j < pairs; ++j) {
    const auto [ia, ib] = pair_of(chunk.pair, 2 * pairs, j);
    const float a = load_element(chunk.storage, in, ia);
    const float b = load_element(chunk.storage, in, ib);
    const float c = cos_sin[j];
    const float s = chunk.inverse ? -cos_sin[pairs + j] : cos_sin[pairs + j];
    const float bs = b * s;
    const float as = a * s;
    // y / 1 is y bit for bit (NaN and ±inf included), so σ = 1 needs no branch.
    store_element(chunk.storage, out, ia, std::fma(a, c, -bs) / chunk.output_scale);
    store_element(chunk.storage, out, ib, std::fma(b, c, as) / chunk.output_scale);
  }
}

// Out of place, dims [rotary_dim, head_dim) are copied bit for bit; in place they are left
// untouched. With an output scale σ ≠ 1 the whole output row is stored scaled: pass-through
// dims become round(fl(x / σ)), in place too (y = x there; an unscaled x beside scaled rotated
// dims would be a row no dequantisation reads back).
inline void copy_pass_through(const rotation_chunk& chunk, const std::byte* in, std::byte* out) {
  if (chunk.head_dim == 2 * chunk.pairs) return;
  if (chunk.output_scale != 1.0f) {
    for (std::int64_t i = 2 * chunk.pairs; i < chunk.head_dim; ++i)
      store_element(chunk.storage, out, i, load_element(chunk.storage, in, i) / chunk.output_scale);
    return;
  }
  if (chunk.in_place) return;
  const std::size_t element = size_of(chunk.storage);
  const std::size_t offset = static_cast<std::size_t>(2 * chunk.pairs) * element;
  std::memcpy(out + offset, in + offset,
              static_cast<std::size_t>(chunk.head_dim - 2 * chunk.pairs) * element);
}

// Software prefetch of the input about 4 KiB of rows ahead of the SIMD loops, for tensors past
// the caches (chunk.prefetch; on cache-resident rows a prefetch only takes a load slot: 16 KiB
// float32 on AVX-512, 0.39 -> 0.33 cycles per pair without them). The hardware prefetchers
// lose track of half-split's access order (lines 0, 4, 1, 5, ... of a row), which ran 30% below
// adjacent at 64 MiB without this. Into L2 (prefetcht1, __builtin_prefetch's locality 2) rather
// than L1: at 64 MiB, 1 thread, float32 rose from 0.94 to 0.99 of the copy baseline
// (cache_simd, AVX-512, median of 6 interleaved rounds), 16-bit rows unchanged; the demand
// load then finds the line in L2, a latency the loop hides. Runs past the chunk into the
// tensor's next prefetch_tokens − tokens tokens, so the stream does not drain at the driver's
// token blocks.
class input_prefetcher {
 public:
  input_prefetcher(const rotation_chunk& chunk, std::int64_t element_bytes)
      : chunk_(chunk), element_bytes_(element_bytes), row_bytes_(chunk.head_dim * element_bytes) {
    const std::int64_t rows_ahead = std::max<std::int64_t>(1, 4096 / row_bytes_);
    token_ = rows_ahead / chunk.heads;
    head_ = rows_ahead % chunk.heads;
  }
  // Once per row rotated, in the loops' order (token by token, head by head).
  void next_row() {
    if (chunk_.prefetch && token_ < chunk_.prefetch_tokens) {
      const std::byte* row = chunk_.input + (token_ * chunk_.input_token_stride +
                                             head_ * chunk_.input_head_stride) * element_bytes_;
      for (std::int64_t b = 0; b < row_bytes_; b += 64) __builtin_prefetch(row + b, 0, 2);
    }
    if (++head_ == chunk_.heads) {
      head_ = 0;
      ++token_;
    }
  }

 private:
  const rotation_chunk& chunk_;
  std::int64_t element_bytes_;
  std::int64_t row_bytes_;
  std::int64_t token_ = 0;
  std::int64_t head_ = 0;
};

}  // namespace ropecheck::fast::detail
