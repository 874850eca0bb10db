/* cache_rope.c — a RoPE kernel in plain C behind ropecheck/kernel_abi.h built like the cos/sin
 * cache kernels of ONNX Runtime (the MLAS rotary kernel, with the cache onnxruntime-genai's model
 * builder makes):
 *   - a cos/sin cache of rows m = 0 … 65535: angle float(m)·float(θ_j) in float32, cosf/sinf,
 *     times the attention factor (folded into the cache), stored in float16 (EXAMPLE_CACHE_FLOAT32:
 *     in float32);
 *   - the rotation in float32, products and sums each rounded (no FMA).
 * Its domain is the cache's: positions 0 … 65535, the forward direction, the whole head rotated.
 * It declares that (ABI v3 limits) and refuses anything else. Its recipe, in the stage names the
 * audit prints and `ropecheck gate --contract` reads (docs/error-bounds.md §17):
 *     angle=float32,trig=float32,trig_cache=float16,arithmetic=float32
 * Gated in ctest under that contract (passes), under `exact` (fails), under the contract its own
 * audit finds (--contract-from, passes); and the float32-cache build, with the float32 contract
 * (passes), against which this float16 build is the regression (fails).
 * The cache is evaluated row by row as a call needs it, which gives the bits a stored cache would.
 */
#include <math.h>
#include <stdint.h>

#include "example_call_checks.h"
#include "ropecheck/kernel_abi.h"

#define CACHE_ROWS 65536

#ifndef EXAMPLE_CACHE_FLOAT32
/* v rounded to nearest even to float16 and read back (10 stored bits; subnormals below 2^-14). */
static float round_to_float16(float v) {
  if (fabsf(v) < 0x1p-14f) return ldexpf(nearbyintf(ldexpf(v, 24)), -24);
  int e = 0;
  const float m = frexpf(v, &e); /* v = m·2^e, |m| in [0.5, 1) */
  return ldexpf(nearbyintf(ldexpf(m, 11)), e - 11);
}
#endif

static float cached(float v) {
#ifdef EXAMPLE_CACHE_FLOAT32
  return v;
#else
  return round_to_float16(v);
#endif
}

static void rotate_tensor(const ropecheck_rope_call* call, const ropecheck_tensor* t) {
  const int64_t half = call->rotary_dim / 2;
  const float attention = (float)call->attention_factor;
  for (int64_t token = 0; token < call->tokens; ++token) {
    for (int64_t h = 0; h < t->heads; ++h) {
      const float* x = (const float*)t->input + token * t->input_token_stride + h * t->input_head_stride;
      float* y = (float*)t->output + token * t->output_token_stride + h * t->output_head_stride;
      for (int64_t j = 0; j < half; ++j) {
        const int64_t a = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j : j;
        const int64_t b = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j + 1 : j + half;
        const float angle = (float)position_at(call, token, stream_of(call, j)) * (float)call->inverse_frequencies[j];
        const float c = cached(cosf(angle) * attention);
        const float s = cached(sinf(angle) * attention);
        const float xa = x[a], xb = x[b]; /* read both before writing: in place works */
        const float pa = xa * c, pb = xb * s, qa = xb * c, qb = xa * s;
        y[a] = pa - pb;
        y[b] = qa + qb;
      }
    }
  }
}

static int in_cache(const ropecheck_rope_call* call) {
  for (int32_t stream = 0; stream < streams_of(call); ++stream)
    for (int64_t token = 0; token < call->tokens; ++token) {
      const int64_t m = position_at(call, token, stream);
      if (m < 0 || m >= CACHE_ROWS) return 0;
    }
  return 1;
}

static int cache_apply(const ropecheck_rope_call* call) {
  const int status = validate_call(call);
  if (status != ROPECHECK_STATUS_OK) return status;
  if (call->direction != ROPECHECK_DIRECTION_FORWARD)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "forward direction only");
  if (call->rotary_dim != call->head_dim) return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "rotary_dim < head_dim");
  if (!in_cache(call)) return fail(call, ROPECHECK_STATUS_OUT_OF_RANGE, "position outside the cache [0, 65536)");
  rotate_tensor(call, &call->q);
  rotate_tensor(call, &call->k);
  return ROPECHECK_STATUS_OK;
}

static const ropecheck_kernel kernels[] = {{
#ifdef EXAMPLE_CACHE_FLOAT32
    "cache_rope", "plain C, ORT-style cos/sin cache in float32 (A folded in), positions [0, 65536)",
#else
    "cache_rope", "plain C, ORT-style cos/sin cache in float16 (A folded in), positions [0, 65536)",
#endif
    1u << ROPECHECK_DTYPE_FLOAT32, (1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT), cache_apply,
    ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS | ROPECHECK_LIMIT_NO_INVERSE | ROPECHECK_LIMIT_NO_PARTIAL_ROTARY,
    CACHE_ROWS - 1}};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
