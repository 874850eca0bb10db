/* example_rope.c — a RoPE kernel in plain C behind ropecheck/kernel_abi.h, built as a shared
 * library and gated in ctest:
 *     ropecheck gate --kernel-lib ./libexample_rope.so
 * float32 storage, both pairings, forward and inverse. The angle is computed the accurate way:
 * m·θ_j in double from the integer position, cos/sin in double, the rotation in double, and
 * each output rounded once to float. Compiled with -DEXAMPLE_FLOAT32_ANGLES it uses the common
 * recipe instead — float(m)·float(θ_j), cosf/sinf — and the gate fails it at long context.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "ropecheck/kernel_abi.h"

static int fail(const ropecheck_rope_call* call, int status, const char* message) {
  if (call->message != NULL && call->message_capacity > 0)
    snprintf(call->message, call->message_capacity, "%s", message);
  return status;
}

static int64_t position_at(const ropecheck_rope_call* call, int64_t t) {
  return call->position_dtype == ROPECHECK_DTYPE_INT32 ? ((const int32_t*)call->positions)[t]
                                                       : ((const int64_t*)call->positions)[t];
}

/* Bytes [first, last) a tensor's rows span, to detect a partial overlap of input and output. */
static void span_of(const void* base, int64_t tokens, int64_t heads, int64_t token_stride,
                    int64_t head_stride, int64_t head_dim, uintptr_t* first, uintptr_t* last) {
  const int64_t far = (tokens - 1) * token_stride + (heads - 1) * head_stride + head_dim;
  *first = (uintptr_t)base;
  *last = (uintptr_t)base + (uintptr_t)far * sizeof(float);
}

static int check_tensor(const ropecheck_rope_call* call, const ropecheck_tensor* t) {
  if (t->heads == 0) return ROPECHECK_STATUS_OK;
  if (t->heads < 0) return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "negative heads");
  if (t->input == NULL || t->output == NULL)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "null input or output");
  if (call->tokens == 0) return ROPECHECK_STATUS_OK;
  const int in_place = t->input == t->output && t->input_token_stride == t->output_token_stride &&
                       t->input_head_stride == t->output_head_stride;
  uintptr_t in_first, in_last, out_first, out_last;
  span_of(t->input, call->tokens, t->heads, t->input_token_stride, t->input_head_stride,
          call->head_dim, &in_first, &in_last);
  span_of(t->output, call->tokens, t->heads, t->output_token_stride, t->output_head_stride,
          call->head_dim, &out_first, &out_last);
  if (!in_place && in_first < out_last && out_first < in_last)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "output overlaps input");
  return ROPECHECK_STATUS_OK;
}

static void rotate_tensor(const ropecheck_rope_call* call, const ropecheck_tensor* t) {
  const int64_t half = call->rotary_dim / 2;
  const double sign = call->direction == ROPECHECK_DIRECTION_INVERSE ? -1.0 : 1.0;
  for (int64_t token = 0; token < call->tokens; ++token) {
    const int64_t m = position_at(call, token);
    for (int64_t h = 0; h < t->heads; ++h) {
      const float* x = (const float*)t->input + token * t->input_token_stride + h * t->input_head_stride;
      float* y = (float*)t->output + token * t->output_token_stride + h * t->output_head_stride;
      for (int64_t j = 0; j < half; ++j) {
        const int64_t a = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j : j;
        const int64_t b = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j + 1 : j + half;
#ifdef EXAMPLE_FLOAT32_ANGLES
        const float angle = (float)m * (float)call->inverse_frequencies[j];
        const double c = cosf(angle) * call->attention_factor;
        const double s = sign * sinf(angle) * call->attention_factor;
#else
        const double angle = (double)m * call->inverse_frequencies[j];
        const double c = cos(angle) * call->attention_factor;
        const double s = sign * sin(angle) * call->attention_factor;
#endif
        const double xa = x[a], xb = x[b]; /* read both before writing: in place works */
        y[a] = (float)(xa * c - xb * s);
        y[b] = (float)(xb * c + xa * s);
      }
      if (y != x)
        for (int64_t d = call->rotary_dim; d < call->head_dim; ++d) y[d] = x[d];
    }
  }
}

static int example_apply(const ropecheck_rope_call* call) {
  if (call == NULL) return ROPECHECK_STATUS_INVALID_ARGUMENT;
  if (call->dtype != ROPECHECK_DTYPE_FLOAT32)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "only float32 storage");
  if (call->rotary_dim < 2 || call->rotary_dim % 2 != 0 || call->rotary_dim > call->head_dim)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "rotary_dim must be even, >= 2, <= head_dim");
  if (call->tokens < 0 || call->positions == NULL || call->inverse_frequencies == NULL)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "null positions/frequencies or negative tokens");
  if (call->position_dtype != ROPECHECK_DTYPE_INT32 && call->position_dtype != ROPECHECK_DTYPE_INT64)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "positions must be int32 or int64");
  for (int64_t t = 0; t < call->tokens; ++t) {
    const int64_t m = position_at(call, t);
    if (m > ((int64_t)1 << 31) || m < -((int64_t)1 << 31))
      return fail(call, ROPECHECK_STATUS_OUT_OF_RANGE, "|position| > 2^31");
  }
  int status = check_tensor(call, &call->q);
  if (status == ROPECHECK_STATUS_OK) status = check_tensor(call, &call->k);
  if (status != ROPECHECK_STATUS_OK) return status;
  rotate_tensor(call, &call->q);
  rotate_tensor(call, &call->k);
  return ROPECHECK_STATUS_OK;
}

static const ropecheck_kernel kernels[] = {{
#ifdef EXAMPLE_FLOAT32_ANGLES
    "example_c_float32_angles", "plain C, float32 angle recipe (expected to fail the gate)",
#else
    "example_c", "plain C, double-precision angles and rotation, one rounding per output",
#endif
    1u << ROPECHECK_DTYPE_FLOAT32,
    (1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT), example_apply}};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
