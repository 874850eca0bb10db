// stream_copy: a copy of n bytes with non-temporal stores, the second half of the honest copy
// baseline. glibc's memcpy switches to non-temporal stores only above a size threshold (about
// 240 MiB on the machine docs/throughput.md measured), so below it memcpy pays a read-for-ownership of the
// destination that the kernels, which stream their outputs, do not; the baseline is the faster
// of the two, measured in the same run.
#pragma once

#include <cstddef>

namespace ropecheck::bench {

// Copies `bytes` from `in` to `out` (both 64-byte aligned, not overlapping) with streaming
// stores, then fences so that the stores are globally visible when it returns.
void stream_copy(const std::byte* in, std::byte* out, std::size_t bytes);

}  // namespace ropecheck::bench
