// builtin_kernels: the built-in kernels' ropecheck_kernels() table, linked into ropecheck itself
// from the same source as libropecheck_kernels.so (builtin_kernels.cpp, its entry renamed), so
// that `gate --isolate always` runs the built-ins in a worker process like a library's kernels.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ropecheck/kernel_abi.h"

extern "C" const ropecheck_kernel* ropecheck_builtin_kernels(uint32_t abi_version, size_t* count);
