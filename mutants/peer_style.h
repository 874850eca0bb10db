// peer_style: the habit of peer test suites, as a yardstick for the mutants — compare a kernel
// with a float32 copy of the same recipe (float32 inv_freq, float(m)·inv_freq, cosf/sinf,
// x·cos + rotate(x)·sin in float32) using allclose tolerances (float32 atol 1e-5 / rtol 1.3e-6,
// bfloat16 atol 1e-3 / rtol 1.6e-2, float16 atol 1e-5 / rtol 1e-3), positions below 8192, random
// normal inputs, the default configuration (base 1e4, unscaled), contiguous Q and K in one
// out-of-place forward call. Kernel and reference share the frequencies (the module's own).
#pragma once

#include <cstdint>
#include <string>

#include "fast/kernels.h"
#include "mutants/mutant_registry.h"

namespace ropecheck::mutants {

struct peer_verdict {
  bool passed = true;              // every output within atol + rtol·|reference|
  double worst_over_tolerance = 0; // max |y − ref| / (atol + rtol·|ref|)
  std::int64_t outputs = 0;        // outputs compared
  std::string worst;               // where the worst output was
};

// Runs the peer-style test on one kernel and storage dtype (the kernel must support it).
// `frequencies` null: fast::scaled_frequencies. Deterministic for a seed.
peer_verdict peer_style_check(const fast::kernel_info& kernel, dtype storage,
                              frequencies_fn frequencies = nullptr, std::uint64_t seed = 1);

}  // namespace ropecheck::mutants
