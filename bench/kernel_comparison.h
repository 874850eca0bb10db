// kernel_comparison: `ropecheck bench --kernel-lib L`: a kernel library's kernels measured beside
// the built-in kernels and the copies (memcpy and stream_copy.h's), at one workload — X =
// [tokens, heads, head_dim] at positions 0 … tokens − 1, out of place, one thread — in every
// dtype and pairing each kernel serves. Everything is measured in rounds, each round in a new
// random order, and each entry keeps its best round, so that a machine whose bandwidth drifts
// is seen by the kernels and the copies alike. Timing is wall time: a library kernel running in
// its worker process (abi/kernel_worker.h) is timed with the worker's cost, which the caller's
// figures then include (docs/performance.md measures it).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/throughput.h"
#include "fast/kernels.h"

namespace ropecheck::bench {

struct comparison_options {
  std::int64_t tokens = 4096;
  std::int64_t heads = 32;
  std::int64_t head_dim = 128;
  int rounds = 3;                          // each entry keeps its best round
  double min_seconds = 0.05;               // per entry and round: calls repeat until this much wall time
  float output_scale = 1.0f;               // fp8 output scale σ; σ ≠ 1 measures the fp8 rows only
  std::string library_source = "library";  // the rows' `source` for the library's kernels
};

// Why `kernel` cannot be measured at this workload without a call outside its declared domain
// (fast::kernel_domain: positions up to tokens − 1; Q and K both given when it needs them) or
// one it refuses by what it is (an fp8 output scale), and the flag that sets what is in the way.
struct unmeasurable {
  std::string flag;    // --tokens, --heads or --output-scale
  std::string reason;  // "it serves positions up to 1000, and 2048 tokens reach position 2047"
};
std::optional<unmeasurable> why_not_measurable(const fast::kernel_info& kernel,
                                               const comparison_options& options);

struct comparison_result {
  std::vector<throughput_row> rows;   // library kernels first, then the built-ins
  std::vector<std::string> failures;  // "kernel dtype pairing: message": a call refused, a worker ended
};

// Measures `library` (kernels that why_not_measurable passed) and the built-in kernels in the
// dtypes and pairings some library kernel serves (all of them when `library` is empty).
comparison_result run_kernel_comparison(std::span<const fast::kernel_info> library,
                                        const comparison_options& options);

}  // namespace ropecheck::bench
