/* float32_recipe_rope.c — a RoPE kernel in plain C behind ropecheck/kernel_abi.h that imitates
 * the recipe most CPU inference engines use (ggml's rope, which llama.cpp runs, is one):
 *   - frequencies by repeated float32 multiplication: θ_0 in float, then θ_j = θ_{j−1}·s_j with
 *     s_j = float(θ_j/θ_{j−1}) (for plain RoPE every s_j is float(base^(−2/d)), ggml's
 *     theta_scale);
 *   - the angle in float32: float(m)·θ_j;
 *   - cos/sin in float32 (cosf/sinf), times the attention factor in float32;
 *   - the rotation in float32.
 * It is not exact and does not claim to be: its accuracy contract is ropecheck's
 * `float32_repeated_product_frequencies` (docs/error-bounds.md §17), under which it passes the
 * gate; under `exact` it fails at large positions. Gated both ways in ctest:
 *     ropecheck gate --kernel-lib ./libfloat32_recipe_rope.so --contract float32_repeated_product_frequencies
 * Built with -DEXAMPLE_REGRESSED it scales the attention factor by (1 + 2^-21), the deliberate
 * regression ctest's ratchet test must catch against a baseline of the build above.
 */
#include <math.h>
#include <stdint.h>

#include "example_call_checks.h"
#include "ropecheck/kernel_abi.h"

#define MAX_PAIRS 4096

static void rotate_tensor(const ropecheck_rope_call* call, const ropecheck_tensor* t,
                          const float* theta) {
  const int64_t half = call->rotary_dim / 2;
  const float sign = call->direction == ROPECHECK_DIRECTION_INVERSE ? -1.0f : 1.0f;
#ifdef EXAMPLE_REGRESSED
  const float attention = (float)(call->attention_factor * (1.0 + 0x1p-21));
#else
  const float attention = (float)call->attention_factor;
#endif
  for (int64_t token = 0; token < call->tokens; ++token) {
    for (int64_t h = 0; h < t->heads; ++h) {
      const float* x = (const float*)t->input + token * t->input_token_stride + h * t->input_head_stride;
      float* y = (float*)t->output + token * t->output_token_stride + h * t->output_head_stride;
      for (int64_t j = 0; j < half; ++j) {
        const int64_t a = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j : j;
        const int64_t b = call->pairing == ROPECHECK_PAIRING_ADJACENT ? 2 * j + 1 : j + half;
        const float m = (float)position_at(call, token, stream_of(call, j)); /* its stream's */
        const float angle = m * theta[j];
        const float c = cosf(angle) * attention;
        const float s = sign * sinf(angle) * attention;
        const float xa = x[a], xb = x[b]; /* read both before writing: in place works */
        y[a] = xa * c - xb * s;
        y[b] = xb * c + xa * s;
      }
      if (y != x)
        for (int64_t d = call->rotary_dim; d < call->head_dim; ++d) y[d] = x[d];
    }
  }
}

static int recipe_apply(const ropecheck_rope_call* call) {
  const int status = validate_call(call);
  if (status != ROPECHECK_STATUS_OK) return status;
  const int64_t half = call->rotary_dim / 2;
  if (half > MAX_PAIRS) return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "rotary_dim > 8192");
  /* θ_j by repeated float32 products, each step's ratio rounded to float once. */
  float theta[MAX_PAIRS];
  theta[0] = (float)call->inverse_frequencies[0];
  for (int64_t j = 1; j < half; ++j) {
    /* A θ of 0 (Gemma 4's proportional RoPE leaves its last pairs unrotated) has no ratio: the
       product starts again from the given θ_j. */
    if (call->inverse_frequencies[j - 1] == 0) {
      theta[j] = (float)call->inverse_frequencies[j];
      continue;
    }
    const float step = (float)(call->inverse_frequencies[j] / call->inverse_frequencies[j - 1]);
    theta[j] = theta[j - 1] * step;
  }
  rotate_tensor(call, &call->q, theta);
  rotate_tensor(call, &call->k, theta);
  return ROPECHECK_STATUS_OK;
}

static const ropecheck_kernel kernels[] = {{
#ifdef EXAMPLE_REGRESSED
    "float32_recipe", "plain C, float32 recipe, REGRESSED: attention factor off by 2^-21",
#else
    "float32_recipe", "plain C, float32 recipe: repeated-product frequencies, float32 angles and cos/sin",
#endif
    1u << ROPECHECK_DTYPE_FLOAT32,
    (1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT), recipe_apply,
    0 /* limits: serves every call */, 0 /* no maximum position */}};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
