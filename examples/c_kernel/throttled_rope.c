/* throttled_rope.c — the example kernel (example_rope.c, included here with its entry renamed)
 * listed as `throttled_c`, for the throughput ratchet's ctest (`ropecheck bench --baseline`):
 * built as is, it is the example kernel; built with -DTHROTTLED_SLOW, each call computes the
 * same correct output and then busy-waits until THROTTLE times its own compute time has passed,
 * a regression far beyond any run-to-run noise on any machine, since it scales with the
 * kernel's own speed there.
 */
#define _POSIX_C_SOURCE 199309L
#include <time.h>

#define ropecheck_kernels example_ropecheck_kernels
#include "example_rope.c"
#undef ropecheck_kernels

#define THROTTLE 20.0

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int throttled_apply(const ropecheck_rope_call* call) {
  const double start = seconds_now();
  const int status = example_apply(call);
#ifdef THROTTLED_SLOW
  const double spent = seconds_now() - start;
  while (seconds_now() - start < THROTTLE * spent) {
  }
#else
  (void)start;
#endif
  return status;
}

static const ropecheck_kernel throttled_kernels[] = {
    {"throttled_c", "the example kernel; in the -DTHROTTLED_SLOW build, 20 times slower",
     1u << ROPECHECK_DTYPE_FLOAT32, (1u << ROPECHECK_PAIRING_HALF) | (1u << ROPECHECK_PAIRING_ADJACENT),
     throttled_apply, 0, 0}};

__attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version,
                                                                                  size_t* count) {
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION || count == NULL) return NULL;
  *count = sizeof throttled_kernels / sizeof throttled_kernels[0];
  return throttled_kernels;
}
