// rope_call: one RoPE application described as plain data — pointers, element strides, int64
// sizes and enums — so the versioned C ABI (ropecheck/kernel_abi.h) maps onto it field for
// field. Q and K of shape [tokens, heads, head_dim] each, any token/head stride (bshd, sbhd,
// packed thd), the last dimension contiguous; different head counts allowed (GQA).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "numeric/dtype.h"
#include "spec/rope_spec.h"

namespace ropecheck::fast {

// forward rotates pair j by +m·θ_j; inverse by −m·θ_j (the backward pass of RoPE).
enum class direction { forward, inverse };

constexpr std::string_view to_string(direction d) {
  return d == direction::forward ? "forward" : "inverse";
}

// One of Q or K. heads == 0 means absent. Strides count elements of the storage dtype.
// In place is output == input with equal strides; any other overlap is an error.
struct rope_tensor {
  const void* input = nullptr;
  void* output = nullptr;
  std::int64_t heads = 0;
  std::int64_t input_token_stride = 0;
  std::int64_t input_head_stride = 0;
  std::int64_t output_token_stride = 0;
  std::int64_t output_head_stride = 0;
};

struct rope_call {
  dtype storage = dtype::float32;        // float32, float16, bfloat16 or fp8; math is float32
  pairing pair = pairing::half_split;
  direction dir = direction::forward;
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;           // even, 2 <= rotary_dim <= head_dim
  std::int64_t tokens = 0;
  rope_tensor q;
  rope_tensor k;
  const void* positions = nullptr;       // one per token (per stream)
  dtype position_type = dtype::int64;    // int32 or int64
  // Position streams (M-RoPE: 3, t/h/w; 2-D vision: 2, row/col; rope_spec.h stream_layout):
  // token i's position in stream s is positions[s·position_stream_stride + i], and pair j turns
  // by the position of stream pair_streams[j]. One stream is 1-D RoPE (stride and map unused).
  std::int32_t position_streams = 1;
  std::int64_t position_stream_stride = 0;
  const std::int32_t* pair_streams = nullptr;  // rotary_dim/2 entries in [0, position_streams)
  // Per-call output scale σ of a quantised store: outputs are stored as round(y / σ), the way
  // vLLM writes fp8 (csrc/quantization/fp8/nvidia/quant_utils.cuh, scaled_vec_conversion:
  // __nv_cvt_float_to_fp8(a / scale, __NV_SATFINITE, …), a float32 scale). Finite and > 0;
  // fp8 storage only (the pipelines scale nothing else): σ ≠ 1 with another dtype is refused
  // (status unsupported), not ignored. Division, not a reciprocal product: y/σ is then one
  // float32 rounding (none when σ is a power of two, barring underflow).
  float output_scale = 1.0f;
};

// Most streams a call may carry (M-RoPE has 3; room for a 4th, e.g. ggml's M-RoPE sections).
inline constexpr std::int32_t max_position_streams = 4;

// Position i of a call (of stream `stream`), whatever its position dtype (int32 or int64).
inline std::int64_t position_at(const rope_call& call, std::int64_t i, std::int32_t stream = 0) {
  const std::int64_t k = stream * call.position_stream_stride + i;
  return call.position_type == dtype::int32 ? static_cast<const std::int32_t*>(call.positions)[k]
                                            : static_cast<const std::int64_t*>(call.positions)[k];
}

// A dense [tokens, heads, head_dim] tensor (bshd with batch folded into tokens, or thd).
rope_tensor packed_tensor(const void* input, void* output, std::int64_t heads,
                          std::int64_t head_dim);

// What every call on a head layout shares: the storage dtype, the pairing and the head's widths.
struct call_shape {
  dtype storage = dtype::float32;
  pairing pair = pairing::half_split;
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;
};

// The one way a call is assembled: the shape, one int64 position per token, Q and (if its
// heads > 0) K, and the direction. Strided layouts pass rope_tensors of their own.
rope_call make_call(const call_shape& shape, std::span<const std::int64_t> positions,
                    const rope_tensor& q, const rope_tensor& k = {},
                    direction dir = direction::forward);

// The call with position streams: `positions` holds streams × tokens values, stream-major
// (stride tokens), and `pair_streams` the stream of each pair (spec/stream_layout.h). The
// spans must outlive the call.
rope_call with_streams(rope_call call, std::span<const std::int64_t> positions, std::int32_t streams,
                       std::span<const std::int32_t> pair_streams);

// The same call restricted to tokens [begin, end): how work is split across threads.
rope_call slice_tokens(const rope_call& call, std::int64_t begin, std::int64_t end);

}  // namespace ropecheck::fast
