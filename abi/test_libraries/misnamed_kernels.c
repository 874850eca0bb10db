/* misnamed_kernels.c — a kernel library that breaks kernel_abi.h's name rule, for the tests
 * of the loader's refusal: built as-is, one kernel's name is not [A-Za-z0-9_.-] (it would
 * break a shell replay line and a Markdown table); with -DMISNAMED_DUPLICATE, two kernels
 * share a name. The kernel itself refuses every call: it must never be run.
 */
#include <stddef.h>
#include <stdint.h>

#include "ropecheck/kernel_abi.h"

static int refuse(const ropecheck_rope_call* call) {
  (void)call;
  return ROPECHECK_STATUS_UNSUPPORTED;
}

#define SERVES_FLOAT32 (1u << ROPECHECK_DTYPE_FLOAT32)
#define SERVES_BOTH_PAIRINGS ((1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT))

static const ropecheck_kernel kernels[] = {
    {"fine_name", "a well-named kernel", SERVES_FLOAT32, SERVES_BOTH_PAIRINGS, refuse, 0, 0},
#ifdef MISNAMED_DUPLICATE
    {"fine_name", "the same name again", SERVES_FLOAT32, SERVES_BOTH_PAIRINGS, refuse, 0, 0},
#else
    {"bad name; rm -rf /\n<script>", "a name with spaces, a newline and markup", SERVES_FLOAT32,
     SERVES_BOTH_PAIRINGS, refuse, 0, 0},
#endif
};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                 size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION) return NULL;
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
