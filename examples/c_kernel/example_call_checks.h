/* example_call_checks.h — what every example kernel checks before it rotates anything: the
 * call's dtype, rotary_dim, pointers, position dtype, streams and range, and that no output partially
 * overlaps its input (ropecheck gates these: rejects_invalid_calls). Shared by example_rope.c
 * and float32_recipe_rope.c; plain C, static functions, included once per kernel library.
 */
#ifndef EXAMPLE_CALL_CHECKS_H
#define EXAMPLE_CALL_CHECKS_H

#include <stdint.h>
#include <stdio.h>

#include "ropecheck/kernel_abi.h"

static int fail(const ropecheck_rope_call* call, int status, const char* message) {
  if (call->message != NULL && call->message_capacity > 0)
    snprintf(call->message, call->message_capacity, "%s", message);
  return status;
}

/* Position streams (ABI v2: M-RoPE, 2-D vision): how many the call has, the stream pair j turns
 * by, and token t's position in a stream. A v1 call ends before the stream fields. */
static int32_t streams_of(const ropecheck_rope_call* call) {
  return call->abi_version >= 2 ? call->position_streams : 1;
}

static int32_t stream_of(const ropecheck_rope_call* call, int64_t j) {
  return streams_of(call) > 1 ? call->pair_streams[j] : 0;
}

static int64_t position_at(const ropecheck_rope_call* call, int64_t t, int32_t stream) {
  const int64_t k = (stream > 0 ? stream * call->position_stream_stride : 0) + t;
  return call->position_dtype == ROPECHECK_DTYPE_INT32 ? ((const int32_t*)call->positions)[k]
                                                       : ((const int64_t*)call->positions)[k];
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

/* ROPECHECK_STATUS_OK if the call is one these float32 kernels can run, else the status. */
static int validate_call(const ropecheck_rope_call* call) {
  if (call == NULL) return ROPECHECK_STATUS_INVALID_ARGUMENT;
  if (call->dtype != ROPECHECK_DTYPE_FLOAT32)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "only float32 storage");
  /* The fp8 output scale (v2): these kernels store float32, which is never scaled. */
  if (call->abi_version >= 2 && call->output_scale != 1.0f)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "output_scale applies to fp8 storage only");
  if (call->rotary_dim < 2 || call->rotary_dim % 2 != 0 || call->rotary_dim > call->head_dim)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "rotary_dim must be even, >= 2, <= head_dim");
  if (call->tokens < 0 || call->positions == NULL || call->inverse_frequencies == NULL)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "null positions/frequencies or negative tokens");
  if (call->position_dtype != ROPECHECK_DTYPE_INT32 && call->position_dtype != ROPECHECK_DTYPE_INT64)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "positions must be int32 or int64");
  const int32_t streams = streams_of(call);
  if (streams < 1 || streams > 4)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "position_streams must be in [1, 4]");
  if (streams > 1) {
    if (call->position_stream_stride < 0 || call->pair_streams == NULL)
      return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT,
                  "several position streams need a stride >= 0 and pair_streams");
    for (int64_t j = 0; j < call->rotary_dim / 2; ++j)
      if (call->pair_streams[j] < 0 || call->pair_streams[j] >= streams)
        return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "pair_streams names no stream");
  }
  for (int32_t s = 0; s < streams; ++s)
    for (int64_t t = 0; t < call->tokens; ++t) {
      const int64_t m = position_at(call, t, s);
      if (m > ((int64_t)1 << 31) || m < -((int64_t)1 << 31))
        return fail(call, ROPECHECK_STATUS_OUT_OF_RANGE, "|position| > 2^31");
    }
  const int status = check_tensor(call, &call->q);
  if (status != ROPECHECK_STATUS_OK) return status;
  return check_tensor(call, &call->k);
}

#endif
