/* hostile_kernels.c — kernel libraries that do what code under test may do to the process that
 * calls it, for the worker-process tests (cli/kernel_isolation_test): each wraps the correct
 * example kernel (examples/c_kernel/example_rope.c, built into the same library with its entry
 * renamed inner_ropecheck_kernels) and misbehaves at its third call, or while loading:
 *   HOSTILE_SEGV       writes through a null pointer     HOSTILE_ABORT      abort()
 *   HOSTILE_EXIT0      _exit(0)                          HOSTILE_EXIT3      exit(3)
 *   HOSTILE_HANG       never returns                     HOSTILE_CTOR_EXIT  a constructor that _exit(0)s
 *   HOSTILE_COUNT_MAX  lists SIZE_MAX kernels         HOSTILE_CTOR_HANG  a constructor that never returns
 *   HOSTILE_SEGV_PARTIAL  writes through a null pointer on every call whose rotary_dim/2 is not a
 *                      multiple of 8, as vLLM's CPU kernel's aligned bfloat16 store crashed (a
 *                      crash that depends on the call, not on the call count: its replay crashes)
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "ropecheck/kernel_abi.h"

const ropecheck_kernel* inner_ropecheck_kernels(uint32_t abi_version, size_t* count);

#define MISBEHAVING_CALL 3

/* Read at run time, so the compiler emits a real store (not a trap instruction) for it. */
static volatile uintptr_t null_address = 0;

static int hostile_apply(const ropecheck_rope_call* call) {
  static int calls = 0;
#if defined(HOSTILE_SEGV_PARTIAL)
  if (call->rotary_dim % 16 != 0) *(volatile int*)null_address = 1;
#endif
  if (++calls == MISBEHAVING_CALL) {
#if defined(HOSTILE_SEGV)
    *(volatile int*)null_address = 1;
#elif defined(HOSTILE_ABORT)
    abort();
#elif defined(HOSTILE_EXIT0)
    _exit(0);
#elif defined(HOSTILE_EXIT3)
    exit(3);
#elif defined(HOSTILE_HANG)
    for (volatile int forever = 1; forever;) {
    }
#endif
  }
  size_t n = 0;
  return inner_ropecheck_kernels(ROPECHECK_KERNEL_ABI_VERSION, &n)[0].apply(call);
}

#if defined(HOSTILE_CTOR_EXIT)
__attribute__((constructor)) static void exit_while_loading(void) { _exit(0); }
#elif defined(HOSTILE_CTOR_HANG)
__attribute__((constructor)) static void hang_while_loading(void) {
  for (volatile int forever = 1; forever;) {
  }
}
#endif

static const ropecheck_kernel kernels[] = {{"hostile", "misbehaves at its third call (hostile_kernels.c)",
                                            1u << ROPECHECK_DTYPE_FLOAT32,
                                            (1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT),
                                            hostile_apply, 0, 0}};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
#if defined(HOSTILE_COUNT_MAX)
  *count = SIZE_MAX;
#else
  *count = 1;
#endif
  return kernels;
}
