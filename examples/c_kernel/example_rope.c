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

#include "example_call_checks.h"
#include "ropecheck/kernel_abi.h"

static void rotate_tensor(const ropecheck_rope_call* call, const ropecheck_tensor* t) {
  const int64_t half = call->rotary_dim / 2;
  const double sign = call->direction == ROPECHECK_DIRECTION_INVERSE ? -1.0 : 1.0;
  for (int64_t token = 0; token < call->tokens; ++token) {
    for (int64_t h = 0; h < t->heads; ++h) {
      const float* x = (const float*)t->input + token * t->input_token_stride + h * t->input_head_stride;
      float* y = (float*)t->output + token * t->output_token_stride + h * t->output_head_stride;
      for (int64_t j = 0; j < half; ++j) {
        const int64_t a = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j : j;
        const int64_t b = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j + 1 : j + half;
        const int64_t m = position_at(call, token, stream_of(call, j)); /* its stream's position */
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
  const int status = validate_call(call);
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
    (1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT), example_apply,
    0 /* limits: serves every call */, 0 /* no maximum position */}};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
