/* domain_kernels.c — kernels that serve less than every call, around the correct example kernel
 * (examples/c_kernel/example_rope.c, linked in with its entry renamed inner_ropecheck_kernels),
 * for the declared domains of kernel ABI v3 (include/ropecheck/kernel_abi.h: ropecheck_limit).
 *
 * Two kernels, each refusing what it cannot serve — as a cos/sin-cache kernel of rows [0, N)
 * that has no backward pass, no attention factor and no pass-through dims would — and exact
 * otherwise:
 *   domain_limited      refuses a negative position or |m| > DOMAIN_MAX_POSITION
 *                       (OUT_OF_RANGE), the inverse direction, an attention factor != 1,
 *                       rotary_dim < head_dim and a call with Q or K absent (UNSUPPORTED);
 *   refuses_negatives   refuses a negative position only (OUT_OF_RANGE).
 * What they declare is the variant's (abi/CMakeLists.txt):
 *   DOMAIN_DECLARED     each declares what it refuses: the gate passes both;
 *   DOMAIN_UNDECLARED   both declare nothing (serve everything): the gate finds the refusals;
 *   DOMAIN_UNKNOWN_BIT  domain_limited declares a limit bit no version defines: refused at load;
 *   DOMAIN_V2           a library built before v3: two correct kernels in the v2 descriptor
 *                       layout, answering ropecheck_kernels(2) only.
 * Malformed calls are refused first, as the example refuses them (rejects_invalid_calls).
 */
#include <stddef.h>
#include <stdint.h>

#include "ropecheck/kernel_abi.h"
#ifndef DOMAIN_V2
#include "example_call_checks.h"
#endif

const ropecheck_kernel* inner_ropecheck_kernels(uint32_t abi_version, size_t* count);

#define DOMAIN_MAX_POSITION 1000000

static int inner_apply(const ropecheck_rope_call* call) {
  size_t n = 0;
  return inner_ropecheck_kernels(ROPECHECK_KERNEL_ABI_VERSION, &n)[0].apply(call);
}

#ifndef DOMAIN_V2
/* The first position a pair turns by outside [low, high], through `out`; 0 if none. */
static int position_outside(const ropecheck_rope_call* call, int64_t low, int64_t high, int64_t* out) {
  for (int64_t j = 0; j < call->rotary_dim / 2; ++j)
    for (int64_t t = 0; t < call->tokens; ++t) {
      const int64_t m = position_at(call, t, stream_of(call, j));
      if (m < low || m > high) {
        *out = m;
        return 1;
      }
    }
  return 0;
}

static int out_of_range(const ropecheck_rope_call* call, int64_t m) {
  char text[96];
  snprintf(text, sizeof text, "position %lld is outside what this kernel serves", (long long)m);
  return fail(call, ROPECHECK_STATUS_OUT_OF_RANGE, text);
}

static int limited_apply(const ropecheck_rope_call* call) {
  const int status = validate_call(call);
  if (status != ROPECHECK_STATUS_OK) return status;
  int64_t m = 0;
  if (position_outside(call, 0, DOMAIN_MAX_POSITION, &m)) return out_of_range(call, m);
  if (call->direction == ROPECHECK_DIRECTION_INVERSE)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "no inverse direction");
  if (call->attention_factor != 1.0) return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "attention_factor must be 1");
  if (call->rotary_dim != call->head_dim)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "rotary_dim must equal head_dim");
  if (call->q.heads == 0 || call->k.heads == 0)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "Q and K must both be given");
  return inner_apply(call);
}

static int nonnegative_apply(const ropecheck_rope_call* call) {
  const int status = validate_call(call);
  if (status != ROPECHECK_STATUS_OK) return status;
  int64_t m = 0;
  if (position_outside(call, 0, INT64_MAX, &m)) return out_of_range(call, m);
  return inner_apply(call);
}
#endif

#define FLOAT32_ONLY (1u << ROPECHECK_DTYPE_FLOAT32)
#define BOTH_PAIRINGS ((1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT))
#define LIMITED_LIMITS                                                                               \
  (ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS | ROPECHECK_LIMIT_NO_INVERSE |                             \
   ROPECHECK_LIMIT_NO_ATTENTION_FACTOR | ROPECHECK_LIMIT_NO_PARTIAL_ROTARY | ROPECHECK_LIMIT_NO_ABSENT_TENSOR)

#ifdef DOMAIN_V2
/* The descriptor as the v2 header defined it: no limits, no max_position. */
typedef struct v2_kernel {
  const char* name;
  const char* description;
  uint32_t dtypes;
  uint32_t pairings;
  int (*apply)(const ropecheck_rope_call* call);
} v2_kernel;

static const v2_kernel kernels[] = {
    {"v2_first", "a correct kernel in a library built against kernel ABI v2", FLOAT32_ONLY, BOTH_PAIRINGS, inner_apply},
    {"v2_second", "the same, the second descriptor of the v2 array", FLOAT32_ONLY, BOTH_PAIRINGS, inner_apply},
};

__attribute__((visibility("default"))) const v2_kernel* ropecheck_kernels(uint32_t abi_version, size_t* count) {
  if (abi_version != 2u || count == NULL) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
#else
#if defined(DOMAIN_DECLARED)
#define LIMITED_DECLARES LIMITED_LIMITS
#define LIMITED_MAX DOMAIN_MAX_POSITION
#define NONNEGATIVE_DECLARES ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS
#elif defined(DOMAIN_UNKNOWN_BIT)
#define LIMITED_DECLARES (LIMITED_LIMITS | (1u << 7))
#define LIMITED_MAX DOMAIN_MAX_POSITION
#define NONNEGATIVE_DECLARES ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS
#else /* DOMAIN_UNDECLARED */
#define LIMITED_DECLARES 0u
#define LIMITED_MAX 0
#define NONNEGATIVE_DECLARES 0u
#endif

static const ropecheck_kernel kernels[] = {
    {"domain_limited", "refuses negative or large positions, inverse, A != 1, partial rotary, absent Q/K",
     FLOAT32_ONLY, BOTH_PAIRINGS, limited_apply, LIMITED_DECLARES, LIMITED_MAX},
    {"refuses_negatives", "refuses negative positions", FLOAT32_ONLY, BOTH_PAIRINGS, nonnegative_apply,
     NONNEGATIVE_DECLARES, 0},
};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
#endif
