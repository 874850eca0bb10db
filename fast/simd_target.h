// simd_target: which instruction set the SIMD kernels dispatch to (Highway's runtime
// dispatch picks the best one the CPU has), and a cap on it, so that the tests cover every
// target this CPU can run, not just the best, and the benchmarks can show each.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fast/status.h"

namespace ropecheck::fast {

// Targets the SIMD kernels were built for and this CPU runs, best first, by Highway's names
// in lower case: e.g. {"avx3", "avx2"}; the portable scalar loop is not listed.
std::vector<std::string> available_simd_targets();

// The target the SIMD kernels use now.
std::string current_simd_target();

// From now on, dispatch to `name` (one of available_simd_targets()) or, with "best", to the
// best target again. Process-wide; not for use while kernels run on other threads.
status use_simd_target(std::string_view name);

}  // namespace ropecheck::fast
